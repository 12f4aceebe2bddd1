"""A search ranks alike in every process: Python seeds its string hashes anew in each, so
a set of stems is walked in another order, and a sum of their weights taken in that order
can differ in its last digit (two clauses tied in one process would not be in another)."""

from __future__ import annotations

import subprocess

from tests.conftest import PYTHON, ROOT, subprocess_env

# weights whose sum depends on its order: 1e16 + 1.0 rounds back to 1e16, 1.0 + 1.0 does not
SUMS = """
import django; django.setup()
from types import SimpleNamespace
from normagpt.judging import Judge
from normagpt.parsing import Query
from normagpt.search_candidates import Vocabulary
from normagpt.search_ranking import _phrases, _scoped
stems = ["бетон", "арматур", "защитн", "слой", "плит", "толщин"]
weights = dict(zip(stems, [1e16, 1.0, 1.0, 1.0, 1.0, 1.0]))
query = Query(phrases=[stems], documents=[], clauses=[], words={s: s for s in stems})
vocabulary = Vocabulary(weights, dict.fromkeys(stems, 1), {s: s for s in stems}, 10)
row = SimpleNamespace(document=1, unnamed=frozenset(stems[:4]), scope=frozenset(stems))
judge = Judge(query, weights)
print(repr(_phrases(query, vocabulary)[0].total), repr(_scoped({1: row}, weights, 1.0, 1.0)[1]),
      [repr(need) for _, need in judge.concepts])
"""


def test_the_weights_of_a_set_of_stems_add_up_alike_in_every_process() -> None:
    env = subprocess_env(DJANGO_SETTINGS_MODULE="config.settings", PYTHONPATH=str(ROOT))
    printed = set()
    for seed in range(6):
        done = subprocess.run(
            [PYTHON, "-c", SUMS],
            cwd=ROOT,
            env={**env, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        printed.add(done.stdout.strip())
    assert len(printed) == 1, printed
