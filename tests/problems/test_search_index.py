"""The fuzzy search's candidates come from the database's full-text index: a row written
by any process is found at once, a row deleted (even outside Django) never answers, no
process builds anything on its first search, the same first result as comparing every
problem, and confident stored matches that answer without the site."""

from __future__ import annotations

import asyncio
import random

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.damage import damage
from problems import fuzzy, index, matching
from problems.entities import ParsedProblem
from problems.matching import Candidate, Query, rank
from problems.models import Problem
from problems.services import problems_store
from problems.subjects import Site
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of
from tests.problems.blocks import block
from tests.problems.conftest import real_items, unique_real
from tests.problems.test_stored_copies import closed_site

pytestmark = pytest.mark.django_db

MATH = Site("math", "ege")
RHOMBUS = "Найдите площадь ромба, если его диагонали равны 10 и 24."
SQUARE = "Найдите периметр квадрата, площадь которого равна 49."


def store(*pairs: tuple[str, str], site: Site = MATH) -> None:
    problems_store(
        site=site, parsed=[ParsedProblem(problem_id=pid, condition_text=t) for pid, t in pairs]
    )


def found(text: str, site: Site = MATH) -> list[str]:
    ranked = index.search(site, Query.from_text(text), threshold=0.75, limit=5)
    rows = Problem.objects.in_bulk([c.key for c, _ in ranked])
    return [rows[c.key].problem_id for c, _ in ranked if c.key in rows]


def crowd(count: int) -> list[tuple[str, str]]:
    """`count` stored problems that are neither query: past NARROW_TO, the search asks the
    database's full-text index instead of comparing every problem."""
    rng = random.Random(count)
    shapes = [
        "Найдите высоту трапеции, основания которой равны {} и {}, а площадь равна {}.",
        "Велосипедист проехал {} км за {} часа. Найдите его скорость, если он стоял {} минут.",
        "Найдите значение выражения {} умножить на {} минус {}.",
    ]
    return [
        (str(100_000 + i), shapes[i % 3].format(*(rng.randint(2, 999) for _ in range(3))))
        for i in range(count)
    ]


@pytest.fixture(params=["few", "many"])
def stored_count(request) -> int:  # type: ignore[no-untyped-def]
    """Problems stored beside the ones a test writes: a small store (compared whole) or
    one past NARROW_TO (the database's index)."""
    extra = 0 if request.param == "few" else index.NARROW_TO + 50
    if extra:
        store(*crowd(extra))
    return extra


def test_a_row_written_is_found_by_the_next_search(stored_count: int) -> None:
    store(("1", RHOMBUS))
    assert found(RHOMBUS) == ["1"]
    store(("2", SQUARE))  # by this process or another: the database holds the one index
    assert found(SQUARE) == ["2"]
    assert index.size(MATH) == stored_count + 2


def test_an_updated_problem_is_matched_by_its_new_text_only(stored_count: int) -> None:
    store(("1", RHOMBUS))
    assert found(RHOMBUS) == ["1"]
    store(("1", SQUARE))
    assert found(SQUARE) == ["1"]
    assert found(RHOMBUS) == []


def test_a_row_deleted_outside_django_never_answers(stored_count: int) -> None:
    store(("1", RHOMBUS), ("2", SQUARE))
    assert found(RHOMBUS) == ["1"]
    with connection.cursor() as cursor:  # no signal, no ORM: as psql or sqlite3 would
        cursor.execute(
            f"DELETE FROM {Problem._meta.db_table} WHERE problem_id = %s",  # noqa: S608
            ["1"],
        )
    assert found(RHOMBUS) == []
    assert found(SQUARE) == ["2"]
    assert index.size(MATH) == stored_count + 1


def test_a_row_saved_one_by_one_is_found() -> None:
    store(*crowd(index.NARROW_TO + 50))
    problem = Problem(subject="math", exam="ege", problem_id="7", fetched_at="2026-01-01T00:00Z")
    problem.search_text = matching.matching_form(RHOMBUS)
    problem.save()  # the admin, a shell
    assert found(RHOMBUS) == ["7"]


def test_sites_are_indexed_apart(stored_count: int) -> None:
    store(("1", RHOMBUS))
    store(("1", SQUARE), site=Site("math", "oge"))
    assert found(SQUARE) == []
    assert found(SQUARE, Site("math", "oge")) == ["1"]


def test_the_first_search_of_a_process_reads_a_bounded_number_of_rows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Nothing is built from every stored row: the database returns NARROW_TO candidates
    at most, and no statement reads the search texts without a limit."""
    store(*crowd(3 * index.NARROW_TO), ("1", RHOMBUS))
    made = []
    original = Candidate.from_normalized.__func__  # type: ignore[attr-defined]

    def counted(cls, key, normalized):  # type: ignore[no-untyped-def]
        made.append(key)
        return original(cls, key, normalized)

    monkeypatch.setattr(Candidate, "from_normalized", classmethod(counted))
    with CaptureQueriesContext(connection) as queries:
        ranked = index.search(MATH, Query.from_text(RHOMBUS), threshold=0.75, limit=5)
    assert [Problem.objects.get(pk=c.key).problem_id for c, _ in ranked] == ["1"]
    assert 0 < len(made) <= index.NARROW_TO
    reading = [q["sql"] for q in queries.captured_queries if "search_text" in q["sql"]]
    assert reading
    assert all("LIMIT" in sql for sql in reading)


def test_the_rarest_terms_vote_and_common_ones_do_not() -> None:
    holders = {"ромба": 40.0, "площадь": 900.0, "найдите": 990.0, "n24": 300.0}
    assert index.voting(["найдите", "n24", "площадь", "ромба"], holders, 1000) == [
        "ромба",
        "n24",
    ]
    assert index.voting(["найдите"], holders, 1000) == ["найдите"]  # the rarest always
    assert index.voting(["площадь", "диагонали"], holders, 1000)[0] == "диагонали"  # unlisted
    many = {f"term{i}": 10_000.0 for i in range(10)}
    assert len(index.voting(sorted(many), many, 100_000)) == index.HOLDERS // 10_000


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
    local = index.search(MATH, Query.from_text(asked), threshold=0, limit=1)
    assert local[0][1] >= fuzzy.CONFIDENT  # it scores high: only the anchors tell them apart

    outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=asked)
    assert outcome.site_asked is True
    assert outcome.phrases
    assert outcome.matches[0].problem.problem_id == "3"  # found on the site, stored, ranked


async def _searches_over_stdio(params: StdioServerParameters) -> list[list[str]]:
    """In one server process: RHOMBUS; SQUARE after this process stored it; RHOMBUS after
    this process deleted its row behind Django's back. The ids of each search's matches."""

    async def ids(client: Client, text: str) -> list[str]:
        result = await client.call_tool(
            "sdamgia_search_by_text",
            {"condition_text": text, "subject": "math", "threshold": 0.75, "limit": 3},
        )
        assert not result.is_error, text_of(result)
        return [match["id"] for match in result.structured_content["matches"]]

    def delete_rhombus() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {Problem._meta.db_table} WHERE problem_id = %s",  # noqa: S608
                ["1"],
            )

    async with Client(params, read_timeout_seconds=60) as client:
        first = await ids(client, RHOMBUS)
        await sync_to_async(store)(("2", SQUARE))
        written = await ids(client, SQUARE)
        await sync_to_async(delete_rhombus)()
        deleted = await ids(client, RHOMBUS)
    return [first, written, deleted]


@pytest.mark.django_db(transaction=True)
def test_over_stdio_a_running_server_sees_what_other_processes_write_and_delete(
    subprocess_db_env,  # type: ignore[no-untyped-def]
) -> None:
    """A server process started before the rows changed answers from them as they are: the
    index is the database's, not one the process built (which would still hold the deleted
    row, or need catching up)."""
    store(*crowd(index.NARROW_TO + 50), ("1", RHOMBUS))
    env = subprocess_env(
        **subprocess_db_env,
        SDAMGIA_URL_TEMPLATE=closed_site(),  # a search the store cannot settle: offline
        SDAMGIA_MIN_INTERVAL="0",
        SDAMGIA_RETRIES="0",
    )
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "problems"], cwd=str(ROOT), env=env
    )
    first, written, deleted = asyncio.run(_searches_over_stdio(params))
    assert first == ["1"]
    assert written == ["2"]
    assert deleted == []
