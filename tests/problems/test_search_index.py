"""The fuzzy search's index: caught up from the rows above its revision, rebuilt after a
delete, the same ranking as comparing every problem, and confident stored matches that
answer without the site."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench.damage import damage
from problems import fuzzy
from problems.entities import ParsedProblem
from problems.index import SiteIndex
from problems.matching import Candidate, Query, rank
from problems.models import Problem, SiteRevision
from problems.services import problems_store
from problems.subjects import Site
from tests.problems.blocks import block
from tests.problems.conftest import real_items, unique_real

pytestmark = pytest.mark.django_db

MATH = Site("math", "ege")
RHOMBUS = "Найдите площадь ромба, если его диагонали равны 10 и 24."
SQUARE = "Найдите периметр квадрата, площадь которого равна 49."
CATCH_UP = '"search_text" FROM "problems_problem"'  # the index reading rows (pk, search_text)


def store(*pairs: tuple[str, str], site: Site = MATH) -> None:
    problems_store(
        site=site, parsed=[ParsedProblem(problem_id=pid, condition_text=t) for pid, t in pairs]
    )


def found(index: SiteIndex, text: str, site: Site = MATH) -> list[str]:
    ranked = index.search(site, Query.from_text(text), threshold=0.5, limit=5)
    rows = Problem.objects.in_bulk([c.key for c, _ in ranked])
    return [rows[c.key].problem_id for c, _ in ranked if c.key in rows]


def test_a_search_reads_one_counter_row_and_then_only_the_rows_written_since() -> None:
    store(("1", RHOMBUS))
    index = SiteIndex()
    assert found(index, RHOMBUS) == ["1"]

    with CaptureQueriesContext(connection) as unchanged:
        assert found(index, RHOMBUS) == ["1"]
    assert [q for q in unchanged.captured_queries if CATCH_UP in q["sql"]] == []
    assert sum("problems_siterevision" in q["sql"] for q in unchanged.captured_queries) == 1

    store(("2", SQUARE))
    with CaptureQueriesContext(connection) as changed:
        assert found(index, SQUARE) == ["2"]
    (catch_up,) = [q["sql"] for q in changed.captured_queries if CATCH_UP in q["sql"]]
    assert '"revision" >' in catch_up
    assert index.size(MATH) == 2


def test_another_process_learns_of_rows_it_did_not_write() -> None:
    here, there = SiteIndex(), SiteIndex()  # two processes' indexes over one database
    store(("1", RHOMBUS))
    assert found(there, RHOMBUS) == ["1"]
    store(("2", SQUARE))  # written "here"
    assert found(here, SQUARE) == ["2"]
    assert found(there, SQUARE) == ["2"]


def test_an_updated_problem_is_matched_by_its_new_text_only() -> None:
    store(("1", RHOMBUS))
    index = SiteIndex()
    assert found(index, RHOMBUS) == ["1"]
    store(("1", SQUARE))
    assert found(index, SQUARE) == ["1"]
    assert found(index, RHOMBUS) == []
    assert index.size(MATH) == 1


def test_deleting_problems_rebuilds_every_index_of_the_site(
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    store(("1", RHOMBUS), ("2", SQUARE), ("3", "Найдите сторону квадрата с диагональю 8."))
    index = SiteIndex()
    assert index.size(MATH) == 3
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        Problem.objects.filter(problem_id__in=["1", "3"]).delete()
    assert len(callbacks) == 1  # one bump for the transaction, not one per row
    assert SiteRevision.objects.get(subject="math", exam="ege").generation == 1
    assert found(index, RHOMBUS) == []
    assert index.size(MATH) == 1


def test_sites_are_indexed_apart() -> None:
    store(("1", RHOMBUS))
    store(("1", SQUARE), site=Site("math", "oge"))
    index = SiteIndex()
    assert found(index, SQUARE) == []
    assert found(index, SQUARE, Site("math", "oge")) == ["1"]


def test_the_prefilter_keeps_the_ranking_of_comparing_every_problem() -> None:
    """Over the real conditions and 1,500 siblings (other numbers), damaged queries get the
    same first result from the index as from scoring every stored problem."""
    conditions = [text for text in _real_conditions().values() if len(text) > 40]
    rng = random.Random(5)
    rows = [(str(i), text) for i, text in enumerate(conditions)]
    for i in range(1500):
        text = conditions[i % len(conditions)]
        varied = " ".join(str(rng.randint(2, 99)) if w.isdigit() else w for w in text.split(" "))
        rows.append((str(10000 + i), varied))
    store(*rows)
    index = SiteIndex()
    every = [
        Candidate.from_normalized(pk, text)
        for pk, text in Problem.objects.values_list("pk", "search_text")
    ]
    same = 0
    for text in rng.sample(conditions, 40):
        query = Query.from_text(damage(text, rng))
        full = rank(query, every, threshold=0, limit=1)
        narrowed = index.search(MATH, query, threshold=0, limit=1)
        same += full[0] == narrowed[0]
    assert index.size(MATH) == len(rows)
    assert same == 40


def _real_conditions() -> dict[str, str]:
    from problems.parsing import parse_problem_block

    blocks = unique_real(real_items())
    base = "https://math-ege.sdamgia.ru"
    return {pid: parse_problem_block(h, base_url=base).condition_text for pid, h in blocks.items()}


@pytest.mark.django_db(transaction=True)
def test_a_confident_stored_match_answers_without_the_site(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.search_engine = True
    fake_site.add_problem("math-ege", "1", block("1", RHOMBUS))
    store(("1", RHOMBUS), ("2", SQUARE))
    query = "Найдите площадь ромба, если его диагонали равны 10 и 24"

    outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query)
    assert [m.problem.problem_id for m in outcome.matches] == ["1"]
    assert outcome.site_asked is False
    assert fake_site.requests == []

    asked = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query, refresh=True)
    assert asked.site_asked is True
    assert fake_site.requests_to("/search")
    assert asked.matches[0].problem.problem_id == "1"


TWINS = [
    (RHOMBUS.replace("24", "26"), RHOMBUS),  # another number
    (
        "В треугольнике ABC AC = BC, угол C равен 120°, AC = 2. Найдите AB.",
        "В треугольнике ABC AC = BC, угол C равен 120°, AB = 2. Найдите AC.",
    ),  # labels swapped
    (
        "В треугольнике ABC AC = BC = 27, AH — высота, косинус BAC = 0,8. Найдите AB.",
        "В треугольнике ABC AC = BC = 27, AH — высота, синус BAC = 0,8. Найдите AB.",
    ),  # another function
]


@pytest.mark.parametrize(("stored", "asked"), TWINS)
@pytest.mark.django_db(transaction=True)
def test_a_near_twin_stored_is_not_the_answer_the_site_is_asked(  # type: ignore[no-untyped-def]
    fake_site, stored: str, asked: str
) -> None:
    fake_site.search_engine = True
    fake_site.add_problem("math-ege", "1", block("1", stored))
    fake_site.add_problem("math-ege", "3", block("3", asked))
    store(("1", stored))  # only the twin is stored
    local = SiteIndex().search(MATH, Query.from_text(asked), threshold=0, limit=1)
    assert local[0][1] >= fuzzy.CONFIDENT  # it scores high: only the anchors tell them apart

    outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=asked)
    assert outcome.site_asked is True
    assert outcome.phrases
    assert outcome.matches[0].problem.problem_id == "3"  # found on the site, stored, ranked
