"""Stored copies when the site is down (issue 25, item 4).

Copies past their TTL answer every read tool when the site cannot be reached or answers
with a page that is not the one asked, marked `stale` with their `fetched_at` and a line
in the Markdown; `refresh: true` falls back the same way with a warning; the keyword
search falls back to the stored problems; a maintenance page is never "not found".
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from rest_framework.test import APIClient

from core.mcp_server import build_server
from problems import catalog, formatting, services
from problems.exceptions import ProblemNotFound, SdamgiaBadPage
from problems.models import Category, Problem, Topic
from problems.models import Test as ExamTest
from problems.subjects import Site
from tests.conftest import MANAGE, PYTHON, ROOT, free_port, subprocess_env, text_of
from tests.problems.blocks import block, listing
from tests.problems.fake_site import MAINTENANCE, FakeSite, Fault
from tests.problems.test_crawl_and_admin import CATALOG

MATH = Site("math", "ege")
LONG_AGO = timezone.now().replace(microsecond=0) - timedelta(days=40)  # past every TTL
TEXTS = {
    "7101": "Найдите площадь ромба, диагонали которого равны 10 и 24.",
    "7102": "Найдите периметр квадрата со стороной 5.",
    "7103": "Диагонали ромба равны 6 и 8. Найдите сторону ромба.",
}
# One call of each read tool: (name, arguments).
READS: list[tuple[str, dict[str, Any]]] = [
    ("sdamgia_get_problem", {"problem_id": "7101"}),
    ("sdamgia_batch_get_problems", {"problem_ids": ["7101", "7102"]}),
    ("sdamgia_get_catalog", {}),
    ("sdamgia_get_category_problems", {"category_id": "79"}),
    ("sdamgia_get_test", {"test_id": "555"}),
    ("sdamgia_search_problems", {"query": "диагонали ромба"}),
]
DOWN = {
    "503": lambda fake, settings: fake.faults.append(Fault("status", status=503)),
    "reset": lambda fake, settings: fake.faults.append(Fault("drop")),
    "maintenance page": lambda fake, settings: fake.faults.append(Fault("maintenance")),
    "garbage": lambda fake, settings: fake.faults.append(Fault("garbage")),
    "stopped": lambda fake, settings: setattr(settings, "SDAMGIA_URL_TEMPLATE", closed_site()),
}


def closed_site() -> str:
    """A URL template of a stand-in that is not running (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/{{subject}}-{{exam}}"


def publish(fake: FakeSite) -> None:
    """The stand-in's pages: three problems, the catalog, category 79, test 555."""
    for pid, text in TEXTS.items():
        fake.add_problem("math-ege", pid, block(pid, text))
    fake.add_page("math-ege", "/prob_catalog", {}, CATALOG)
    blocks = [(pid, block(pid, text)) for pid, text in TEXTS.items()]
    fake.add_page(
        "math-ege",
        "/test",
        {"filter": "all", "category_id": "79", "page": 1},
        listing(blocks, page=1, total=1),
    )
    test_page = "".join(html for _, html in blocks[:2])
    fake.add_page(
        "math-ege",
        "/test",
        {"id": "555"},
        f'<html><body><div class="new_header"><b>Вариант № 555</b></div>{test_page}</body></html>',
    )


def store_everything() -> None:
    """Read each kind once through the strict services, so that a copy is stored."""
    services.problems_get_many(site=MATH, problem_ids=list(TEXTS))
    catalog.catalog_get(site=MATH)
    catalog.category_problems_get(site=MATH, category_id="79")
    catalog.exam_test_get(site=MATH, test_id="555")


def age(moment: datetime) -> None:
    """Every stored row was fetched at `moment`."""
    Problem.objects.update(fetched_at=moment)
    Topic.objects.update(fetched_at=moment)
    Category.objects.update(fetched_at=moment, listing_fetched_at=moment)
    ExamTest.objects.update(fetched_at=moment)


@pytest.fixture
def stored_site(fake_site):  # type: ignore[no-untyped-def]
    """The stand-in with every kind stored, each copy fetched 40 days ago."""
    publish(fake_site)
    store_everything()
    age(LONG_AGO)
    fake_site.requests.clear()
    return fake_site


async def call_all(reads: list[tuple[str, dict[str, Any]]], **common: Any) -> dict[str, Any]:
    """Each read through the MCP client (in process): its result, by tool name."""
    results = {}
    async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
        for name, arguments in reads:
            results[name] = await client.call_tool(name, {"subject": "math", **arguments, **common})
    return results


def staleness(name: str, data: dict[str, Any]) -> tuple[bool, str | None]:
    """(stale, fetched_at) of a tool's structured answer."""
    if name == "sdamgia_get_problem":
        return data["stale"], data["fetched_at"]
    if name == "sdamgia_batch_get_problems":
        (first, second) = data["problems"]
        assert (first["stale"], first["fetched_at"]) == (second["stale"], second["fetched_at"])
        return data["stale"] and first["stale"], first["fetched_at"]
    return data["stale"], data["fetched_at"]


# --- The site down, copies past their TTL ------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("down", list(DOWN))
def test_every_read_tool_answers_from_the_store_marked_stale(stored_site, settings, down) -> None:  # type: ignore[no-untyped-def]
    DOWN[down](stored_site, settings)
    results = asyncio.run(call_all(READS, response_format="json"))
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        data = result.structured_content
        assert json.loads(text_of(result)) == data
        assert staleness(name, data) == (True, LONG_AGO.isoformat()), name
        assert data.get("warnings") or all(p["warnings"] for p in data["problems"]), name
    assert results["sdamgia_get_problem"].structured_content["answer"] == "1"
    assert results["sdamgia_get_category_problems"].structured_content["ids"] == list(TEXTS)
    assert results["sdamgia_get_test"].structured_content["ids"] == ["7101", "7102"]
    search = results["sdamgia_search_problems"].structured_content
    assert (search["offline"], search["ids"]) == (True, ["7101", "7103"])
    topics = results["sdamgia_get_catalog"].structured_content["topics"]
    assert [(t["title"], len(t["categories"])) for t in topics] == [("Планиметрия", 2)]
    if down != "stopped":  # the site was asked each time: these are fallbacks, not the cache
        asked = {r.path for r in stored_site.requests}
        assert asked == {"/problem", "/prob_catalog", "/test", "/search"}


@pytest.mark.django_db(transaction=True)
def test_the_markdown_says_when_the_stored_copy_was_fetched(stored_site) -> None:  # type: ignore[no-untyped-def]
    stored_site.faults.append(Fault("status", status=503))
    results = asyncio.run(call_all(READS))
    when = f"{LONG_AGO:%Y-%m-%d %H:%M} UTC (40 days ago)"
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        text = text_of(result)
        if name == "sdamgia_search_problems":
            assert "> **Offline**: the site's search could not be asked (СДАМ ГИА" in text
            assert "stored problems holding every keyword" in text
            assert f"the oldest of them was fetched {when}" in text
        else:
            assert f"> **Stored copy**, fetched {when}: the site could not be read" in text, name
            assert "СДАМ ГИА is unavailable: HTTP 503" in text, name
    assert text_of(results["sdamgia_get_problem"]).startswith("# Problem 7101 (math-ege)")


# --- refresh: true -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_refresh_falls_back_to_the_stored_copy_with_a_warning(fake_site) -> None:  # type: ignore[no-untyped-def]
    publish(fake_site)
    store_everything()  # fresh copies, within their TTL
    fake_site.faults.append(Fault("maintenance"))
    fake_site.requests.clear()
    results = asyncio.run(call_all(READS, refresh=True, response_format="json"))
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        data = result.structured_content
        assert staleness(name, data)[0] is True, name
        warnings = data["problems"][0]["warnings"] if "problems" in data else data["warnings"]
        assert warnings[0].startswith("refresh failed: "), (name, warnings)
        assert "СДАМ ГИА" in warnings[0] or "math-ege.sdamgia.ru" in warnings[0], name
        assert "answered from the stored copy fetched" in warnings[0], name
    assert len(fake_site.requests) >= len(READS)  # every refresh asked the site
    markdown = asyncio.run(call_all(READS[:1], refresh=True))["sdamgia_get_problem"]
    assert "> **Warning**: `refresh: true` failed (СДАМ ГИА" in text_of(markdown)
    assert "answered with a page that is not a problem page" in text_of(markdown)


# --- Fresh copies: unchanged -------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_fresh_copies_answer_without_the_site_and_are_not_stale(fake_site) -> None:  # type: ignore[no-untyped-def]
    publish(fake_site)
    store_everything()
    fake_site.faults.append(Fault("status", status=503))
    fake_site.requests.clear()
    reads = [read for read in READS if read[0] != "sdamgia_search_problems"]
    results = asyncio.run(call_all(reads, response_format="json"))
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        stale, fetched_at = staleness(name, result.structured_content)
        assert stale is False, name
        assert fetched_at is not None, name
        assert "Stored copy" not in text_of(result)
    assert fake_site.requests == []


# --- Nothing stored: the site's error ------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_without_a_stored_copy_the_error_names_the_service(fake_site) -> None:  # type: ignore[no-untyped-def]
    publish(fake_site)
    fake_site.faults.append(Fault("status", status=503))
    results = asyncio.run(call_all(READS))
    for name, result in results.items():
        if name == "sdamgia_batch_get_problems":  # each id has its own error
            assert "СДАМ ГИА is unavailable: HTTP 503" in text_of(result)
            continue
        assert result.is_error, name
        assert "СДАМ ГИА" in text_of(result), name
        assert "Internal error" not in text_of(result)


@pytest.mark.django_db(transaction=True)
def test_a_batch_mixes_stored_copies_and_errors(stored_site) -> None:  # type: ignore[no-untyped-def]
    stored_site.faults.append(Fault("status", status=503))
    read = [("sdamgia_batch_get_problems", {"problem_ids": ["7101", "7199"]})]
    data = asyncio.run(call_all(read))["sdamgia_batch_get_problems"].structured_content
    assert [(p["id"], p["stale"]) for p in data["problems"]] == [("7101", True)]
    assert [(e["id"], e["code"]) for e in data["errors"]] == [("7199", "sdamgia_unavailable")]
    assert data["stale"] is True


# --- A maintenance page is not "not found" -------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_maintenance_page_is_not_a_problem_page_never_not_found(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/problem", {"id": "7201"}, MAINTENANCE)
    results = asyncio.run(call_all([("sdamgia_get_problem", {"problem_id": "7201"})]))
    result = results["sdamgia_get_problem"]
    assert result.is_error
    text = text_of(result)
    assert text.startswith("СДАМ ГИА (math-ege.sdamgia.ru) answered with a page that is not")
    assert "not a problem page for problem 7201" in text
    assert "not found" not in text
    # The site's own "not found" page is still "not found".
    missing = asyncio.run(call_all([("sdamgia_get_problem", {"problem_id": "7202"})]))
    assert text_of(missing["sdamgia_get_problem"]) == (
        "problem 7202 was not found on math-ege.sdamgia.ru"
    )


@pytest.mark.django_db
def test_a_maintenance_test_page_is_a_bad_page_an_empty_one_not_found(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/test", {"id": "556"}, MAINTENANCE)
    with pytest.raises(SdamgiaBadPage, match=r"page of test 556 of math-ege\.sdamgia\.ru cannot"):
        catalog.exam_test_get(site=MATH, test_id="556")
    with pytest.raises(ProblemNotFound, match="test 557 was not found"):
        catalog.exam_test_get(site=MATH, test_id="557")  # the site's empty list


# --- The keyword search of the stored problems ---------------------------------------------


@pytest.mark.django_db
def test_the_offline_search_holds_every_keyword_stems_and_site(fake_site) -> None:  # type: ignore[no-untyped-def]
    publish(fake_site)
    services.problems_get_many(site=MATH, problem_ids=list(TEXTS))
    fake_site.add_problem("math-oge", "7101", block("7101", "Ромб с диагоналями 3 и 4."))
    services.problem_get(site=Site("math", "oge"), problem_id="7101")
    age(LONG_AGO)
    fake_site.faults.append(Fault("drop"))
    found = services.problems_search(site=MATH, query="ромба диагонали", limit=1)
    assert (found.offline, found.ids, found.total_found, found.exhausted) == (
        True, ["7101"], 2, False,
    )  # fmt: skip
    assert found.stale is not None
    assert found.stale.fetched_at == LONG_AGO
    second = services.problems_search(site=MATH, query="Ромб. Диагональ!", limit=5, offset=1)
    assert (second.ids, second.exhausted) == (["7103"], True)
    nothing = services.problems_search(site=MATH, query="вероятность")
    assert (nothing.offline, nothing.ids, nothing.total_found) == (True, [], 0)
    text = formatting.search_markdown(nothing, offset=0)
    assert text.startswith("> **Offline**: the site's search could not be asked (СДАМ ГИА")
    assert text.endswith("No stored problem holds every keyword of «вероятность» (offset 0).")


# --- REST and stdio ----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_rest_api_answers_the_same_stored_copies(stored_site) -> None:  # type: ignore[no-untyped-def]
    stored_site.faults.append(Fault("maintenance"))
    api = APIClient()
    for path in ["7101/", "catalog/", "categories/79/", "tests/555/", "search/?query=ромба"]:
        response = api.get(f"/api/problems/math/ege/{path}")
        assert response.status_code == 200, (path, response.content)
        data = response.json()
        assert data["stale"] is True, path
        assert data["warnings"], path
        assert data["fetched_at"] == LONG_AGO.isoformat(), path


async def over_stdio(params: StdioServerParameters) -> dict[str, Any]:
    async with Client(params, read_timeout_seconds=60) as client:
        return {
            name: await client.call_tool(name, {"subject": "math", **arguments})
            for name, arguments in READS
        }


@pytest.mark.django_db(transaction=True)
def test_stdio_end_to_end_with_the_stand_in_stopped(stored_site, subprocess_db_env) -> None:  # type: ignore[no-untyped-def]
    env = subprocess_env(
        **subprocess_db_env,
        SDAMGIA_URL_TEMPLATE=closed_site(),
        SDAMGIA_MIN_INTERVAL="0",
        SDAMGIA_RETRIES="0",
    )
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "problems"], cwd=str(ROOT), env=env
    )
    results = asyncio.run(over_stdio(params))
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        assert staleness(name, result.structured_content) == (True, LONG_AGO.isoformat()), name
        assert "connection failed" in text_of(result), name
    assert "## Answer\n1" in text_of(results["sdamgia_get_problem"])
