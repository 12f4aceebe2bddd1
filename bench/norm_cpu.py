"""Where a NormaGPT search's CPU goes, stage by stage, in process, on a corpus
`bench/norm_answers.py` made: the thread's CPU in each step of the search (a step's figure
holds those of the steps it calls), and on PostgreSQL its backend's CPU per statement.

    .venv/bin/python bench/norm_cpu.py [--database sqlite|postgres] [--corpus alone|mixed]
        [--form question|keywords] [--questions GLOB]

The benchmark's questions are searched as the tool searches them (`services.pages_search`,
then its result), each twice after a warm-up; figures are per search (the mean: a step
that runs in some searches only counts in them all). The benchmark's figure is over MCP
and counts the whole process: this says which step to look at.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, print_table
from bench.norm_answers import database_url
from bench.norm_answers_mcp import server_env
from bench.norm_answers_questions import questions_load

PASSES, WARM_UP = 2, 10
# (module, attribute): the search's steps (`normagpt.search.clauses_search`), as it calls them
STEPS = [
    ("normagpt.search", "clauses_search"),
    ("normagpt.search", "question_read"),
    ("normagpt.search", "vocabulary_read"),
    ("normagpt.search", "candidates_find"),
    ("normagpt.search", "rows_load"),
    ("normagpt.search_ranking", "sql_rows"),
    ("normagpt.judging", "Judge.answers"),
    ("normagpt.search", "rows_ranked"),
    ("normagpt.search", "_texts_judged"),
    ("normagpt.search", "_clauses_loaded"),
    ("normagpt.search", "_with_tables"),
    ("normagpt.search", "_with_marks"),
    ("normagpt.formatting", "search_as_dict"),
]
LABELS = {("normagpt.search_ranking", "sql_rows"): "rows_load: its query"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--corpus", choices=["alone", "mixed"], default="mixed")
    parser.add_argument("--form", choices=["question", "keywords"], default="question")
    parser.add_argument("--questions", default=str(ROOT / "bench" / "norm_questions" / "*.yaml"))
    args = parser.parse_args()
    url = database_url(args.database, args.corpus, fresh=False)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        parser.error(f"no corpus at {url}: run bench/norm_answers.py first")
    os.environ.update(server_env(url))  # as the benchmark's server runs
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from normagpt.models import NormClause

    if not NormClause.objects.exists():
        parser.error(f"no corpus in {url}: run bench/norm_answers.py first")
    questions = questions_load(args.questions)
    keywords = [q.keywords if args.form == "keywords" else [q.question] for q in questions]
    for words in keywords[:WARM_UP]:
        searched(words)
    steps: Counter[str] = Counter()
    statements: Counter[str] = Counter()
    with ExitStack() as stack:
        for module, name in STEPS:
            stack.enter_context(timed(module, name, steps))
        stack.enter_context(backend_timed(statements))
        for _ in range(PASSES):
            for words in keywords:
                searched(words)
    searches = PASSES * len(keywords)
    print(f"\n{len(keywords)} searches ({args.form}) × {PASSES}, {args.database}, {args.corpus}:")
    print_table(
        ["step (this thread)", "CPU ms a search"],
        [[label(module, name), f"{steps[name] / searches * 1000:.2f}"] for module, name in STEPS],
    )
    if statements:
        print()
        print_table(
            ["statement (its backend)", "CPU ms a search"],
            [[sql, f"{ns / searches / 1e6:.2f}"] for sql, ns in statements.most_common(12)],
        )


def label(module: str, name: str) -> str:
    return LABELS.get((module, name), name)


def searched(keywords: list[str]) -> dict[str, Any]:
    from normagpt import formatting, services

    found = services.pages_search(keywords=keywords, expected_documents=[], limit=10, as_of=None)
    return formatting.search_as_dict(keywords, [], found)


@contextmanager
def timed(module: str, name: str, into: Counter[str]) -> Iterator[None]:
    """`module`'s `name` (or a class's method: "Class.method") adding its thread CPU to
    `into[name]` while the block runs."""
    import importlib

    owner: Any = importlib.import_module(module)
    *classes, attribute = name.split(".")
    for cls in classes:
        owner = getattr(owner, cls)
    original: Callable[..., Any] = getattr(owner, attribute)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            into[name] += time.thread_time() - start

    with mock.patch.object(owner, attribute, wrapper):
        yield


@contextmanager
def backend_timed(into: Counter[str]) -> Iterator[None]:
    """On PostgreSQL, each statement's backend CPU (its /proc schedstat, in ns) added to
    `into[its first words]` while the block runs; nothing elsewhere."""
    from django.db import connection

    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    schedstat = Path(f"/proc/{pid}/schedstat")

    def ran() -> int:
        return int(schedstat.read_text().split()[0])

    def wrapper(execute: Callable[..., Any], sql: str, *rest: Any) -> Any:
        start = ran()
        try:
            return execute(sql, *rest)
        finally:
            into[" ".join(sql.split())[:60]] += ran() - start

    with connection.execute_wrapper(wrapper):
        yield


if __name__ == "__main__":
    main()
