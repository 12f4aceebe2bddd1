"""A hung site (issue 50, item 5).

A reader that holds a stored copy gives the site one attempt's time (SDAMGIA_TIMEOUT), not
its whole retry policy (SDAMGIA_RETRIES within SDAMGIA_DEADLINE): the copy answers within
it, marked stale in the structured output and the Markdown, and the site is asked again in
the background (a Celery task; without a broker, this process's pool), which stores the
fresh copy once the site answers. Without a copy the site keeps its whole deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client

from core import background
from core.exceptions import UpstreamError
from core.mcp_server import build_server
from problems.models import Category, Problem, Topic
from problems.models import Test as ExamTest
from tests.conftest import text_of
from tests.problems.fake_site import Fault
from tests.problems.test_stored_copies import LONG_AGO, age, publish, store_everything

ATTEMPT = 1.0  # SDAMGIA_TIMEOUT here: one attempt's time
RETRIES = 4  # the whole policy would take 5 attempts and 7.5 s of back-off
ANSWERED_WITHIN = 4.0  # seconds: one attempt and the call, with room for a loaded machine
BACKGROUND = "the site is being asked again in the background"
READS: list[tuple[str, dict[str, Any]]] = [
    ("sdamgia_get_problem", {"problem_id": "7101"}),
    ("sdamgia_batch_get_problems", {"problem_ids": ["7101", "7102"]}),
    ("sdamgia_check_answer", {"problem_id": "7101", "answer": "1"}),
    ("sdamgia_get_catalog", {}),
    ("sdamgia_get_category_problems", {"category_id": "79"}),
    ("sdamgia_get_test", {"test_id": "555"}),
    ("sdamgia_search_problems", {"query": "диагонали ромба"}),
]


@pytest.fixture
def hung_site(fake_site, settings):  # type: ignore[no-untyped-def]
    """The stand-in with every kind stored 40 days ago, then hung: each request is held
    longer than an attempt may last."""
    settings.SDAMGIA_TIMEOUT = ATTEMPT
    settings.SDAMGIA_RETRIES = RETRIES
    settings.SDAMGIA_DEADLINE = 60
    publish(fake_site)
    store_everything()
    age(LONG_AGO)
    fake_site.requests.clear()
    fake_site.faults.append(Fault("slow", delay=5))
    yield fake_site
    fake_site.faults.clear()
    assert background.drain(30)  # the retries end before the rows are flushed


async def timed_calls(
    reads: list[tuple[str, dict[str, Any]]], **common: Any
) -> dict[str, tuple[Any, float]]:
    """Each read through the MCP client (in process): its result and its seconds."""
    results = {}
    async with Client(build_server(["problems"]), read_timeout_seconds=60) as client:
        for name, arguments in reads:
            started = time.monotonic()
            result = await client.call_tool(name, {"subject": "math", **arguments, **common})
            results[name] = (result, time.monotonic() - started)
    return results


def wait_until(done: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def refreshed() -> bool:
    """Whether every stored copy read above was fetched again."""
    return (
        not Problem.objects.filter(problem_id__in=["7101", "7102"], fetched_at=LONG_AGO).exists()
        and not Topic.objects.filter(fetched_at=LONG_AGO).exists()
        and not Category.objects.filter(category_id="79", listing_fetched_at=LONG_AGO).exists()
        and not ExamTest.objects.filter(test_id="555", fetched_at=LONG_AGO).exists()
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.long
def test_the_stored_copy_answers_within_one_attempt_marked_stale(hung_site) -> None:  # type: ignore[no-untyped-def]
    as_json = [(name, {"response_format": "json", **args}) for name, args in READS]
    as_json[2] = READS[2]  # sdamgia_check_answer answers JSON only
    results = asyncio.run(timed_calls(as_json))
    for name, (result, seconds) in results.items():
        assert not result.is_error, (name, text_of(result))
        assert seconds < ANSWERED_WITHIN, (name, seconds)
        data = result.structured_content
        items = data.get("problems") or [data]
        assert data["stale"] is True, name
        assert all(item["stale"] for item in items), name
        warning = items[0]["warnings"][0]
        assert "timed out" in warning, (name, warning)
        if name != "sdamgia_search_problems":  # a search is asked again by the next one
            assert warning.endswith(f"; {BACKGROUND}"), (name, warning)
    assert results["sdamgia_check_answer"][0].structured_content["verdict"] == "correct"
    markdown = asyncio.run(timed_calls(READS[:1]))["sdamgia_get_problem"]
    assert markdown[1] < ANSWERED_WITHIN
    stale_line = text_of(markdown[0]).split("\n")[2]
    assert stale_line.startswith("> **Stored copy**, fetched "), stale_line
    assert stale_line.endswith(f"It may be out of date. (Meanwhile {BACKGROUND}.)"), stale_line
    # The site comes back: the retries in the background store the fresh copies.
    hung_site.faults.clear()
    assert wait_until(refreshed, timeout=30)


@pytest.mark.django_db(transaction=True)
def test_without_a_stored_copy_the_site_keeps_its_whole_deadline(fake_site, settings) -> None:  # type: ignore[no-untyped-def]
    from tests.problems.blocks import block

    settings.SDAMGIA_TIMEOUT = ATTEMPT
    settings.SDAMGIA_RETRIES = RETRIES
    settings.SDAMGIA_DEADLINE = 60
    fake_site.add_problem("math-ege", "7301", block("7301", "Найдите сторону квадрата."))
    fake_site.faults.append(Fault("slow", delay=5, times=2))  # two attempts hang
    ((result, seconds),) = asyncio.run(timed_calls(READS[:1], problem_id="7301")).values()
    assert not result.is_error, text_of(result)
    assert text_of(result).startswith("# Problem 7301 (math-ege)")  # the third attempt
    assert seconds >= 2 * ATTEMPT
    assert "Stored copy" not in text_of(result)


@pytest.mark.django_db(transaction=True)
def test_with_a_broker_a_stale_read_enqueues_one_retry_with_its_policy(
    fake_site, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from config.celery import app
    from problems import services, tasks
    from problems.subjects import Site

    publish(fake_site)
    store_everything()
    age(LONG_AGO)
    fake_site.faults.append(Fault("status", status=503))
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append((name, kw)))
    with background.using_broker(True):
        first = services.problem_read(site=Site("math", "ege"), problem_id="7101")
        again = services.problem_read(site=Site("math", "ege"), problem_id="7101")
    assert first.stale is not None
    assert first.stale.retrying
    assert again.stale is not None
    assert again.stale.retrying  # the retry started by the first read asks for both
    assert sent == [  # one retry, by name, with JSON arguments: any worker may run it
        (
            "problems.problems_refresh",
            {"args": ("math", "ege", ["7101"]), "kwargs": {}, "countdown": None},
        )
    ]
    task = tasks.problems_refresh_task
    assert task.autoretry_for == (UpstreamError,)
    assert task.max_retries == tasks.REFRESH_RETRIES
