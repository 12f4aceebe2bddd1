"""The problems `bench/problems.py` searches: the real ones and siblings of theirs, stored
here and on the СДАМ ГИА stand-in alike. Imported once Django is set up (`bench/problems.py`
sets it up)."""

from __future__ import annotations

import random

from django.db import connection

from problems.entities import ParsedProblem
from problems.models import Problem
from problems.parsing import parse_problem_block
from problems.services import problems_store
from problems.subjects import Site
from tests.problems.blocks import block
from tests.problems.fake_site import FakeSite

MATH = Site("math", "ege")
BASE = "https://math-ege.sdamgia.ru"


def populate(blocks: dict[str, str], conditions: dict[str, str], size: int, fake: FakeSite) -> None:
    """`size` problems, stored here and on the site: the real ones, then siblings of theirs
    with the numbers varied (as a prototype's problems differ), each a whole block."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Problem._meta.db_table}")  # noqa: S608 (our table)
    fake.blocks.clear()
    rng = random.Random(size)
    parsed = []
    real = list(conditions.items())
    for i in range(size):
        pid, text = real[i % len(real)]
        if i < len(real):
            parsed.append(parse_problem_block(blocks[pid], base_url=BASE))
            fake.add_problem("math-ege", pid, blocks[pid])
            continue
        text = " ".join(str(rng.randint(2, 99)) if w.isdigit() else w for w in text.split(" "))
        pid = str(1_000_000 + i)
        fake.add_problem("math-ege", pid, block(pid, text))
        parsed.append(ParsedProblem(problem_id=pid, condition_text=text))
    for start in range(0, len(parsed), 2000):
        problems_store(site=MATH, parsed=parsed[start : start + 2000])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # what autovacuum does within a minute of a load
            cursor.execute(f"VACUUM ANALYZE {Problem._meta.db_table}")
