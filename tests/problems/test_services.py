"""Fetch-through services against the fake site: cache, TTL, batch, search, listings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.exceptions import InvalidInput
from problems import catalog, fuzzy, services
from problems.exceptions import ProblemNotFound
from problems.models import Category, CategoryProblem, Problem
from problems.subjects import Site
from tests.problems.blocks import block, id_only, listing, search_results

MATH = Site("math", "ege")
pytestmark = pytest.mark.django_db


def add(fake, pid: str, text: str, site: str = "math-ege", **kw) -> str:  # type: ignore[no-untyped-def]
    html = block(pid, text, **kw)
    fake.add_problem(site, pid, html)
    return html


def test_problem_is_fetched_once_then_served_from_the_database(fake_site) -> None:  # type: ignore[no-untyped-def]
    add(
        fake_site,
        "1001",
        "Найдите значение выражения 2 + 2.",
        answer="4",
        analogs=("1002", "1001", "1002"),
    )
    first = services.problem_get(site=MATH, problem_id="1001")
    second = services.problem_get(site=MATH, problem_id="1001")
    assert first.pk == second.pk
    assert first.answer == "4"
    assert first.analogs == ["1002"]
    assert len(fake_site.requests_to("/problem")) == 1
    services.problem_get(site=MATH, problem_id="1001", refresh=True)
    assert len(fake_site.requests_to("/problem")) == 2


def test_an_expired_copy_is_fetched_again(fake_site, settings) -> None:  # type: ignore[no-untyped-def]
    add(fake_site, "1001", "Найдите значение выражения 2 + 2.")
    services.problem_get(site=MATH, problem_id="1001")
    Problem.objects.update(
        fetched_at=timezone.now() - timedelta(seconds=settings.SDAMGIA_TTL_PROBLEM + 5)
    )
    services.problem_get(site=MATH, problem_id="1001")
    assert len(fake_site.requests_to("/problem")) == 2


def test_ids_are_per_site(fake_site) -> None:  # type: ignore[no-untyped-def]
    add(fake_site, "902", "Задача по математике номер 902.")
    add(fake_site, "902", "Задание по русскому языку номер 902.", site="rus-ege")
    math = services.problem_get(site=MATH, problem_id="902")
    rus = services.problem_get(site=Site("rus", "ege"), problem_id="902")
    assert math.pk != rus.pk
    assert "русскому" in rus.condition_text


def test_missing_problem_names_the_id_and_the_site(fake_site) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ProblemNotFound, match=r"problem 404404 was not found on math-ege"):
        services.problem_get(site=MATH, problem_id="404404")
    assert not Problem.objects.exists()


def test_bad_problem_id_is_refused_before_any_request(fake_site) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInput, match="problem_id must be 1–20 digits"):
        services.problem_get(site=MATH, problem_id="12a")
    assert fake_site.requests == []


def test_batch_returns_each_problem_or_its_own_error_at_most_ten_at_once(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.latency = 0.05
    ids = [str(2000 + i) for i in range(25)]
    for pid in ids[:-2]:
        add(fake_site, pid, f"Условие задачи номер {pid} про треугольник.")
    items = services.problems_get_many(site=MATH, problem_ids=[*ids, ids[0]])
    assert [i.problem_id for i in items] == [*ids, ids[0]]
    assert all(i.problem is not None for i in items[:-3])
    assert [i.error_code for i in items[-3:-1]] == ["problem_not_found"] * 2
    assert fake_site.max_in_flight <= 10
    assert len(fake_site.requests_to("/problem")) == 25  # the repeated id is fetched once


def test_batch_limits(fake_site) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInput, match="at most 50"):
        services.problems_get_many(site=MATH, problem_ids=[str(i) for i in range(51)])
    with pytest.raises(InvalidInput, match=r"problem_ids\[1\] must be 1–20 digits"):
        services.problems_get_many(site=MATH, problem_ids=["1", "x"])


def test_search_follows_pages_until_enough_ids_or_a_repeated_page(fake_site) -> None:  # type: ignore[no-untyped-def]
    pages = {
        1: [block(str(3000 + i), f"Задача про окружность {i}.") for i in range(5)],
        2: [block(str(3005 + i), f"Задача про окружность {i + 5}.") for i in range(5)],
    }
    for number, blocks in pages.items():
        fake_site.add_page(
            "math-ege", "/search", {"search": "окружность", "page": number}, search_results(blocks)
        )
    fake_site.add_page(
        "math-ege", "/search", {"search": "окружность", "page": 3}, search_results(pages[2])
    )
    window = services.problems_search(site=MATH, query="окружность", limit=3, offset=4)
    assert window.ids == ["3004", "3005", "3006"]
    assert len(fake_site.requests_to("/search")) == 2
    everything = services.problems_search(site=MATH, query="окружность", limit=50)
    assert everything.ids == [str(3000 + i) for i in range(10)]
    assert everything.exhausted
    assert len(fake_site.requests_to("/search")) == 3  # page 3 repeated page 2: the end
    assert Problem.objects.filter(problem_id__startswith="30").count() == 10


def test_category_listing_is_read_to_data_total_and_stored(fake_site) -> None:  # type: ignore[no-untyped-def]
    ids = [str(4000 + i) for i in range(12)]
    for page in range(3):
        chunk = [
            (pid, block(pid, f"Категория, задача {pid}.")) for pid in ids[page * 5 : page * 5 + 5]
        ]
        fake_site.add_page(
            "math-ege",
            "/test",
            {"filter": "all", "category_id": "79", "page": page + 1},
            listing(chunk, page=page + 1, total=3),
        )
    outcome = catalog.category_problems_get(site=MATH, category_id="79", limit=5, offset=5)
    assert outcome.ids == ids[5:10]
    assert outcome.total == 12
    assert len(fake_site.requests_to("/test")) == 3
    again = catalog.category_problems_get(site=MATH, category_id="79", limit=50)
    assert again.ids == ids
    assert len(fake_site.requests_to("/test")) == 3  # served from the database
    category = Category.objects.get(category_id="79")
    assert CategoryProblem.objects.filter(category=category).count() == 12
    assert Problem.objects.get(problem_id="4011").categories.get() == category


def test_fuzzy_search_fetches_uncached_candidates_once_then_searches_locally(fake_site) -> None:  # type: ignore[no-untyped-def]
    texts = {
        "5001": "В треугольнике ABC угол C равен 90°, AC = 24, BC = 7. Найдите синус угла A.",
        "5002": "В треугольнике ABC угол C равен 90°, AC = 12, BC = 5. Найдите синус угла A.",
        "5003": "Найдите площадь ромба, если его диагонали равны 10 и 24.",
    }
    for pid, text in texts.items():
        add(fake_site, pid, text)
    results = search_results([id_only(pid) for pid in texts])
    original = fake_site.respond  # every phrase search gets the same id-only result page

    def respond(site, path, params):  # type: ignore[no-untyped-def]
        if path == "/search":
            return 200, "<html><body>" + results + "</body></html>"
        return original(site, path, params)

    fake_site.respond = respond
    query = "В треугольнике АВС уг0л С равен 9о, AC=24, ВC = 7. Найдите синуc угла A"
    outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query, threshold=0.5, limit=5)
    assert outcome.matches[0].problem.problem_id == "5001"
    assert outcome.fetched == 3
    assert len(fake_site.requests_to("/problem")) == 3
    again = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query, threshold=0.5, limit=5)
    assert again.matches[0].problem.problem_id == "5001"
    assert again.fetched == 0
    assert len(fake_site.requests_to("/problem")) == 3


def test_fuzzy_search_without_the_site_still_searches_what_is_stored(fake_site) -> None:  # type: ignore[no-untyped-def]
    from tests.problems.fake_site import Fault

    add(fake_site, "6001", "Найдите площадь ромба, если его диагонали равны 10 и 24.")
    services.problem_get(site=MATH, problem_id="6001")
    fake_site.faults.append(Fault("status", status=503, path="/search"))
    outcome = fuzzy.problems_search_fuzzy(
        site=MATH,
        condition_text="площадь ромба диагонали 10 и 24",
        threshold=0.3,
        limit=3,
        refresh=True,  # a confident stored match would answer without asking the site
    )
    assert [m.problem.problem_id for m in outcome.matches] == ["6001"]
    assert outcome.warnings
    assert "СДАМ ГИА is unavailable" in outcome.warnings[0]
    assert outcome.offline
    assert outcome.warnings[-1].startswith("offline: math-ege.sdamgia.ru could not be reached")


def test_a_site_that_answers_is_not_offline(fake_site) -> None:  # type: ignore[no-untyped-def]
    add(fake_site, "6002", "Найдите площадь квадрата, если его сторона равна 7.")
    services.problem_get(site=MATH, problem_id="6002")
    outcome = fuzzy.problems_search_fuzzy(
        site=MATH, condition_text="площадь квадрата сторона равна 7", threshold=0.3, limit=3
    )
    assert not outcome.offline
    assert not any(w.startswith("offline") for w in outcome.warnings)
