"""The `search` tool against a local search API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from pytest_httpserver import HTTPServer

from core.mcp_server import build_server
from tests.conftest import text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def search_api(httpserver: HTTPServer, settings) -> HTTPServer:  # type: ignore[no-untyped-def]
    settings.SEARCH_API_URL = httpserver.url_for("/search")
    settings.SEARCH_API_KEY = "tok"
    settings.SEARCH_API_TIMEOUT = 5
    return httpserver


async def call(arguments: dict[str, Any]) -> tuple[bool, str]:
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=30) as c:
        result = await c.call_tool("search", arguments)
    return bool(result.is_error), text_of(result)


async def test_results_and_next_cursor_pass_through(search_api: HTTPServer) -> None:
    search_api.expect_request(
        "/search",
        method="POST",
        json={"query": "site:n8n.io ChatGPT connector", "limit": 5, "cursor": "c1"},
        headers={"Authorization": "Bearer tok"},
    ).respond_with_json(
        {
            "results": [
                {
                    "title": "n8n ChatGPT automation",
                    "url": "https://community.n8n.io/t/chatgpt-connector/12345",
                    "snippet": "Готовый workflow для интеграции ChatGPT и n8n.",
                    "score": 0.83,
                    "lang": "ru",
                }
            ],
            "nextCursor": "opaque-token",
        }
    )
    failed, text = await call(
        {"query": "  site:n8n.io ChatGPT connector  ", "limit": 5, "cursor": "c1"}
    )
    assert not failed, text
    assert json.loads(text) == {
        "results": [
            {
                "title": "n8n ChatGPT automation",
                "url": "https://community.n8n.io/t/chatgpt-connector/12345",
                "snippet": "Готовый workflow для интеграции ChatGPT и n8n.",
                "score": 0.83,
                "lang": "ru",
            }
        ],
        "nextCursor": "opaque-token",
    }


async def test_items_and_next_cursor_in_snake_case_are_accepted(
    search_api: HTTPServer, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_API_KEY = ""
    search_api.expect_request("/search", json={"query": "q"}).respond_with_json(
        {"items": [{"title": "t", "url": "javascript:alert(1)"}], "next_cursor": 7}
    )
    failed, text = await call({"query": "q"})
    assert not failed, text
    assert json.loads(text) == {"results": [{"title": "t"}], "nextCursor": "7"}
    assert "Authorization" not in search_api.log[0][0].headers


async def test_an_unset_search_is_a_clear_error(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_API_URL = ""
    failed, text = await call({"query": "q"})
    assert failed
    assert text.startswith("search is not configured: set SEARCH_API_URL")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "query: required argument missing"),
        ({"query": "   "}, "query must not be empty or whitespace"),
        ({"query": "q", "limit": 0}, "limit: Input should be greater than or equal to 1"),
    ],
)
async def test_bad_queries_name_the_field(
    search_api: HTTPServer, arguments: dict[str, Any], expected: str
) -> None:
    failed, text = await call(arguments)
    assert failed
    assert expected in text


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (500, "boom", "the search API answered HTTP 500"),
        (401, "no", "the search API refused the request (HTTP 401): check SEARCH_API_KEY"),
        (200, "<html>", "the search API answered something that is not JSON"),
        (200, '{"data": []}', "the search API answered without a results (or items) list"),
    ],
)
async def test_upstream_faults_name_the_search_api(
    search_api: HTTPServer, status: int, body: str, expected: str
) -> None:
    search_api.expect_request("/search").respond_with_data(body, status=status)
    failed, text = await call({"query": "q"})
    assert failed
    assert text == expected


async def test_an_unreachable_search_api_is_named(settings) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import free_port

    settings.SEARCH_API_URL = f"http://127.0.0.1:{free_port()}/search"
    failed, text = await call({"query": "q"})
    assert failed
    assert text.startswith("the search API is not reachable (ConnectError)")
