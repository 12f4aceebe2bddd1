"""Seed 002 `search`: the external search service (an n8n webhook, an own API…).

POST `{"query", "limit"?, "cursor"?}` to SEARCH_API_URL as JSON, with
`Authorization: Bearer SEARCH_API_KEY` when the key is set. The answer may carry its
results as `results` or `items` (or be the bare list) and the next page as `nextCursor`
or `next_cursor`; each result keeps its extra keys.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from django.conf import settings

from anki_bridge.exceptions import SearchNotConfigured, SearchUnavailable
from anki_bridge.schemas import SearchResponse, SearchResult
from core.exceptions import InvalidInput

QUERY_MAX = 2000
LIMIT_MAX = 100
BODY_MAX_BYTES = 5 * 1024 * 1024
KNOWN = ("title", "url", "snippet", "content", "score")


def search_run(
    *,
    query: str,
    limit: int | None = None,
    cursor: str | None = None,
    transport: httpx.BaseTransport | None = None,
) -> SearchResponse:
    """One page of results from the external search."""
    query = (query or "").strip()
    if not query:
        raise InvalidInput("query must not be empty or whitespace", field="query")
    if len(query) > QUERY_MAX:
        raise InvalidInput(f"query must be at most {QUERY_MAX} characters", field="query")
    if limit is not None and not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput(f"limit must be between 1 and {LIMIT_MAX}", field="limit")
    url = settings.SEARCH_API_URL
    if not url:
        raise SearchNotConfigured(
            "search is not configured: set SEARCH_API_URL (and SEARCH_API_KEY if the service "
            "needs one) to the external search endpoint"
        )
    body: dict[str, Any] = {"query": query}
    if limit is not None:
        body["limit"] = limit
    if cursor:
        body["cursor"] = cursor
    headers = {"Accept": "application/json"}
    if settings.SEARCH_API_KEY:
        headers["Authorization"] = f"Bearer {settings.SEARCH_API_KEY}"
    return search_parse(_post(url, body, headers, transport))


def _post(
    url: str, body: dict[str, Any], headers: dict[str, str], transport: httpx.BaseTransport | None
) -> Any:
    timeout = float(settings.SEARCH_API_TIMEOUT)
    try:
        with (
            httpx.Client(timeout=timeout, transport=transport, follow_redirects=True) as client,
            client.stream("POST", url, json=body, headers=headers) as response,
        ):
            content = b""
            for chunk in response.iter_bytes():
                content += chunk
                if len(content) > BODY_MAX_BYTES:
                    raise SearchUnavailable(
                        f"the search API answered more than {BODY_MAX_BYTES} bytes"
                    )
    except httpx.TimeoutException as exc:
        raise SearchUnavailable(f"the search API did not answer within {timeout:g} s") from exc
    except httpx.HTTPError as exc:
        raise SearchUnavailable(
            f"the search API is not reachable ({type(exc).__name__}): check SEARCH_API_URL"
        ) from exc
    if response.status_code in (401, 403):
        raise SearchUnavailable(
            f"the search API refused the request (HTTP {response.status_code}): "
            "check SEARCH_API_KEY"
        )
    if response.status_code >= 400:
        raise SearchUnavailable(f"the search API answered HTTP {response.status_code}")
    try:
        return json.loads(content)
    except ValueError as exc:
        raise SearchUnavailable("the search API answered something that is not JSON") from exc


def search_parse(payload: Any) -> SearchResponse:
    """The normalized response; SearchUnavailable when the shape is not a search answer."""
    cursor = None
    raw: Any
    if isinstance(payload, list):
        raw = payload
    elif isinstance(payload, dict):
        raw = payload.get("results", payload.get("items"))
        cursor = payload.get("nextCursor", payload.get("next_cursor"))
    else:
        raw = None
    if not isinstance(raw, list):
        raise SearchUnavailable("the search API answered without a results (or items) list")
    results = [_result(item) for item in raw if isinstance(item, dict)]
    return SearchResponse(results=results, nextCursor=None if cursor is None else str(cursor))


def _result(item: dict[str, Any]) -> SearchResult:
    known: dict[str, Any] = {}
    for key in ("title", "snippet", "content"):
        value = item.get(key)
        known[key] = None if value is None else str(value)
    url = item.get("url")
    known["url"] = url if isinstance(url, str) and url.startswith(("http://", "https://")) else None
    score = item.get("score")
    known["score"] = (
        float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
    )
    extra = {k: v for k, v in item.items() if k not in KNOWN}
    return SearchResult(**known, **extra)
