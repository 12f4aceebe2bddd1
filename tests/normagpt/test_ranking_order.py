"""A search ranks alike in every process: Python seeds its string hashes anew in each, so
a set of stems is walked in another order, and a sum of their weights taken in that order
can differ in its last digit (two clauses tied in one process would not be in another).
The sums are taken in one order: the query's, or the stems' sorted."""

from __future__ import annotations

from types import SimpleNamespace

from normagpt.judging import Judge
from normagpt.parsing import Query
from normagpt.search_candidates import Vocabulary
from normagpt.search_ranking import _phrases, _scoped

# twelve stems, the last in the query's order and first sorted weighing 1e16: 1e16 + 1.0
# rounds back to 1e16, so each sum tells where in its order the heavy stem stood
STEMS = [f"стем{letter}" for letter in "бвгдежзиклмн"] + ["астем"]
WEIGHTS = dict.fromkeys(STEMS, 1.0) | {"астем": 1e16}


def in_order(stems: list[str]) -> float:
    total = 0.0
    for stem in stems:
        total += WEIGHTS[stem]
    return total


def test_the_weights_of_a_set_of_stems_add_up_in_one_order() -> None:
    query = Query(phrases=[STEMS], documents=[], clauses=[], words={s: s for s in STEMS})
    vocabulary = Vocabulary(WEIGHTS, dict.fromkeys(STEMS, 1), {s: s for s in STEMS}, 10)
    assert _phrases(query, vocabulary)[0].total == in_order(STEMS)  # the phrase's order
    row = SimpleNamespace(document=1, unnamed=frozenset(STEMS[6:]), scope=frozenset(STEMS))
    scoped = in_order(sorted(STEMS[6:])) / in_order(sorted(STEMS))
    assert _scoped({1: row}, WEIGHTS, 1.0, 1.0) == {1: scoped}  # sorted
    [(_, need)] = Judge(query, WEIGHTS).concepts
    assert need == 0.5 * in_order(STEMS)
