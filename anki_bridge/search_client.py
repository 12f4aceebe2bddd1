"""The only module that talks to the external search service (seed 002 `search`).

POST `{"query", "limit"?, "cursor"?}` as JSON to SEARCH_API_URL, with
`Authorization: Bearer SEARCH_API_KEY` when the key is set; the answer is JSON.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from anki_bridge.exceptions import SEARCH, SearchNotConfigured, SearchUnavailable
from core.http import Failure, FailureKind, Upstream
from core.http_shared import shared_client

BODY_MAX_BYTES = 5 * 1024 * 1024


def _failure(failure: Failure) -> Exception:
    kind = failure.kind
    if kind is FailureKind.TIMEOUT:
        return SearchUnavailable(
            f"the search API did not answer within {failure.upstream.deadline:g} s"
        )
    if kind in (FailureKind.CONNECT, FailureKind.DROPPED):
        cause = type(failure.exception).__name__ if failure.exception else kind.value
        return SearchUnavailable(f"the search API is not reachable ({cause}): check SEARCH_API_URL")
    if kind is FailureKind.TOO_LARGE:
        return SearchUnavailable(f"the search API answered more than {BODY_MAX_BYTES} bytes")
    return SearchUnavailable(failure.message)


def upstream() -> Upstream:
    """The search service's policy: a total deadline, a cap, one quick retry when busy.

    A search is a read, so a 429/5xx or a dropped connection is retried once (a
    Retry-After is honoured) even though it is a POST.
    """
    url = settings.SEARCH_API_URL
    if not url:
        raise SearchNotConfigured(
            "search is not configured: set SEARCH_API_URL (and SEARCH_API_KEY if the service "
            "needs one) to the external search endpoint"
        )
    headers = {"Accept": "application/json"}
    if settings.SEARCH_API_KEY:
        headers["Authorization"] = f"Bearer {settings.SEARCH_API_KEY}"
    return Upstream(
        service=SEARCH,
        base_url=url,
        deadline=float(settings.SEARCH_API_TIMEOUT),
        max_body_bytes=BODY_MAX_BYTES,
        retries=1,
        backoff=0.25,
        retry_unsafe_methods=True,
        headers=headers,
        error=_failure,
    )


def search(
    query: str,
    *,
    limit: int | None = None,
    cursor: str | None = None,
) -> Any:
    """The service's JSON answer to one search (SearchUnavailable when it has none)."""
    body: dict[str, Any] = {"query": query}
    if limit is not None:
        body["limit"] = limit
    if cursor:
        body["cursor"] = cursor
    up = upstream()
    reply = shared_client(up).post(up.base_url, json=body)
    if reply.status in (401, 403):
        raise SearchUnavailable(
            f"the search API refused the request (HTTP {reply.status}): check SEARCH_API_KEY"
        )
    if reply.status >= 400:
        raise SearchUnavailable(f"the search API answered HTTP {reply.status}")
    try:
        return reply.json()
    except ValueError as exc:
        raise SearchUnavailable("the search API answered something that is not JSON") from exc
