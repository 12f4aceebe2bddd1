"""The site misbehaving: every failure is a clear error naming the cause, within its time."""

from __future__ import annotations

import time

import pytest

from problems import catalog, services
from problems.exceptions import SdamgiaBadPage, SdamgiaBlocked, SdamgiaUnavailable
from problems.models import Category, CategoryProblem, Problem
from problems.subjects import Site
from tests.problems.blocks import block, listing
from tests.problems.fake_site import Fault

MATH = Site("math", "ege")
pytestmark = pytest.mark.django_db


@pytest.fixture
def one_problem(fake_site):  # type: ignore[no-untyped-def]
    fake_site.add_problem("math-ege", "7001", block("7001", "Найдите значение выражения 3 + 4."))
    return fake_site


@pytest.mark.parametrize(
    ("fault", "error", "text"),
    [
        (Fault("slow", delay=5), SdamgiaUnavailable, "timed out"),
        (Fault("drop"), SdamgiaUnavailable, "connection failed"),
        (Fault("status", status=500), SdamgiaUnavailable, "HTTP 500"),
        (Fault("status", status=429), SdamgiaUnavailable, "HTTP 429"),
        (Fault("status", status=403), SdamgiaBlocked, "blocked by the site"),
        (Fault("challenge"), SdamgiaBlocked, "blocked by the site"),
        (Fault("garbage"), SdamgiaBadPage, "not a web page"),
        (Fault("truncated"), SdamgiaBadPage, "truncated or changed"),
        (Fault("huge"), SdamgiaBadPage, "bytes"),
        (
            Fault("redirect", location="http://example.invalid/problem?id=7001"),
            SdamgiaBadPage,
            "another host",
        ),
    ],
)
def test_each_fault_is_a_clear_error_within_the_timeout(one_problem, fault, error, text) -> None:  # type: ignore[no-untyped-def]
    one_problem.faults.append(fault)
    started = time.monotonic()
    with pytest.raises(error) as caught:
        services.problem_get(site=MATH, problem_id="7001")
    assert text in caught.value.message
    assert "СДАМ ГИА" in caught.value.message or "sdamgia" in caught.value.message
    # timeout 3 s per attempt, 2 attempts, backoff < 1 s
    assert time.monotonic() - started < 9
    assert not Problem.objects.exists()


def test_blocked_is_not_retried_but_5xx_is(one_problem) -> None:  # type: ignore[no-untyped-def]
    one_problem.faults.append(Fault("status", status=403))
    with pytest.raises(SdamgiaBlocked):
        services.problem_get(site=MATH, problem_id="7001")
    assert len(one_problem.requests) == 1
    one_problem.faults[:] = [Fault("status", status=503, times=1)]
    problem = services.problem_get(site=MATH, problem_id="7001")
    assert problem.condition_text.startswith("Найдите")
    assert len(one_problem.requests) == 3


def test_a_429_then_success_is_retried(one_problem) -> None:  # type: ignore[no-untyped-def]
    one_problem.faults.append(Fault("status", status=429, times=1))
    assert services.problem_get(site=MATH, problem_id="7001").problem_id == "7001"


def test_batch_returns_what_it_could_when_some_ids_fail(one_problem) -> None:  # type: ignore[no-untyped-def]
    one_problem.add_problem("math-ege", "7002", block("7002", "Найдите значение выражения 5 + 6."))
    one_problem.faults.append(Fault("status", status=403, path="/problem", times=1))
    items = services.problems_get_many(site=MATH, problem_ids=["7001", "7002"])
    outcomes = {i.problem_id: (i.problem is not None, i.error_code) for i in items}
    assert sorted(outcomes.values()) == [(False, "sdamgia_blocked"), (True, "")]


def test_a_listing_that_fails_halfway_leaves_nothing_half_written(fake_site) -> None:  # type: ignore[no-untyped-def]
    page1 = [(str(8000 + i), block(str(8000 + i), f"Задача {i} из категории.")) for i in range(5)]
    fake_site.add_page(
        "math-ege",
        "/test",
        {"filter": "all", "category_id": "90", "page": 1},
        listing(page1, page=1, total=2),
    )
    fake_site.faults.append(Fault("status", status=500, path="/test"))
    fake_site.faults[0].times = 10
    fake_site.faults.insert(0, Fault("slow", delay=0, times=1, path="/test"))  # page 1 passes
    with pytest.raises(SdamgiaUnavailable):
        catalog.category_problems_get(site=MATH, category_id="90")
    assert not CategoryProblem.objects.exists()
    assert not Category.objects.filter(listing_fetched_at__isnull=False).exists()


def test_a_page_cut_short_is_no_test_and_no_empty_search(fake_site) -> None:  # type: ignore[no-untyped-def]
    """A test or search page whose problem block was cut short was read as a test whose
    author hid its numbers (stored for 30 days) and as a search that found nothing."""
    from problems import catalog
    from problems.models import Test

    fake_site.faults.append(Fault("truncated"))
    with pytest.raises(SdamgiaBadPage) as caught:
        catalog.exam_test_get(site=MATH, test_id="55509")
    assert "the page is cut short); nothing was stored" in caught.value.message
    assert not Test.objects.exists()
    with pytest.raises(SdamgiaBadPage):
        services.problems_search(site=MATH, query="угол трапеции")
