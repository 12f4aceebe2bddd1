"""Seed 002 `search`: the external search service (an n8n webhook, an own API…).

The request goes through `anki_bridge.search_client`. The answer may carry its results
as `results` or `items` (or be the bare list) and the next page as `nextCursor` or
`next_cursor`; each result keeps its extra keys.
"""

from __future__ import annotations

from typing import Any

from anki_bridge import search_client
from anki_bridge.exceptions import SearchUnavailable
from anki_bridge.schemas import SearchResponse, SearchResult
from core.exceptions import InvalidInput

QUERY_MAX = 2000
LIMIT_MAX = 100
KNOWN = ("title", "url", "snippet", "content", "score")


def search_run(
    *, query: str, limit: int | None = None, cursor: str | None = None
) -> SearchResponse:
    """One page of results from the external search."""
    query = (query or "").strip()
    if not query:
        raise InvalidInput("query must not be empty or whitespace", field="query")
    if len(query) > QUERY_MAX:
        raise InvalidInput(f"query must be at most {QUERY_MAX} characters", field="query")
    if limit is not None and not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput(f"limit must be between 1 and {LIMIT_MAX}", field="limit")
    return search_parse(search_client.search(query, limit=limit, cursor=cursor))


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
