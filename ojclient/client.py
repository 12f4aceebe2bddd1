"""The only module that talks to the online-judge problem API: one function per endpoint.

`daily`, `problem`, `similar`, `resolve` and `status` each make one GET through the
project's HTTP layer (`core.http`), on the caller's thread with a keep-alive client
shared by the process per (base URL, token): no retries, `Authorization: Bearer` on every
request when a token is set, redirects followed (at most 10), the body capped (1 MiB by
default) and a *total* deadline per call (30 s by default) that covers connecting, every
redirect hop and the body. Endpoint paths and query parameter names live only here.

Statuses are classified here (rules 2–4 of the issue): a connection failure or timeout
is `OjRequestFailed("request failed: …")`; a status other than 200/202 is `OjHttpError`
with `[{status}] {title}: {detail}` for RFC 7807 bodies or `[{status}] {body[:500]}`;
a 200 that is not JSON is `OjBadResponse`. Every message names the OJ API.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

from core.http import Failure, FailureKind, Reply, Upstream
from core.http_shared import shared_client
from ojclient.conf import OjSettings, oj_settings
from ojclient.exceptions import SERVICE, OjBadResponse, OjHttpError, OjRequestFailed

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 10
ERROR_BODY_CHARS = 500
USER_AGENT = "tool-hub-ojclient/0.1 (+https://github.com/)"


def encode(value: str) -> str:
    """Percent-encode everything but the unreserved `A-Z a-z 0-9 - _ . ~`."""
    return quote(value, safe="")


def segment(value: str) -> str:
    """`value` as one path segment: encoded, and `.`/`..` as `%2E`/`%2E%2E`.

    A bare dot segment would be removed by URL normalization (RFC 3986 §5.2.4), turning
    `/problems/0/.` into `/problems/0`; its percent-encoded form means the same text.
    """
    encoded = encode(value)
    return "%2E" * len(encoded) if encoded in (".", "..") else encoded


def threshold_text(value: float) -> str:
    """The shortest form the backend parses: 0 → `0`, 0.5 → `0.5`, 1.0 → `1`."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class OjResponse:
    status: int
    data: Any
    url: str


# --- the endpoints -------------------------------------------------------------------------


def daily(*, domain: str, date: str) -> OjResponse:
    """`GET /api/v1/daily`: 200 with the day's problem(s), or 202 while it is being fetched."""
    return _get("/api/v1/daily", [("domain", domain), ("date", date)], accept_202=True)


def problem(*, source: str, problem_id: str) -> OjResponse:
    return _get(f"/api/v1/problems/{segment(source)}/{segment(problem_id)}")


def similar(
    *,
    query: str | None = None,
    source: str | None = None,
    problem_id: str | None = None,
    limit: int,
    threshold: float,
    source_filter: str | None = None,
) -> OjResponse:
    """Problems similar to a free-text `query`, or else to the problem `source`/`problem_id`."""
    params = [("limit", str(limit)), ("threshold", threshold_text(threshold))]
    if source_filter:
        params.append(("source", source_filter))
    if query:
        return _get("/api/v1/similar", [("q", query), *params])
    return _get(f"/api/v1/similar/{segment(source or '')}/{segment(problem_id or '')}", params)


def resolve(*, text: str) -> OjResponse:
    """The problem a URL, a slug or a `source id` text names."""
    return _get(f"/api/v1/resolve/{segment(text)}")


def status() -> OjResponse:
    return _get("/status")


# --- one GET -------------------------------------------------------------------------------


def url_for(conf: OjSettings, path: str, params: Sequence[tuple[str, str]] = ()) -> str:
    """`base_url + path` and the query, every value percent-encoded (path: pre-encoded)."""
    query = "&".join(f"{encode(key)}={encode(value)}" for key, value in params)
    return f"{conf.base_url}{path}" + (f"?{query}" if query else "")


def _get(
    path: str, params: Sequence[tuple[str, str]] = (), *, accept_202: bool = False
) -> OjResponse:
    """GET `path` and classify the answer: 200 (or 202 when accepted) with JSON, or an error."""
    conf = oj_settings()
    url = url_for(conf, path, params)
    reply = shared_client(_upstream(conf)).get(url)
    logger.debug("GET %s -> %s (%d bytes)", url, reply.status, len(reply.content))
    return _classify(reply, url, accept_202=accept_202)


@functools.lru_cache(maxsize=8)
def _upstream(conf: OjSettings) -> Upstream:
    headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
    if conf.token:
        headers["Authorization"] = f"Bearer {conf.token}"
    logger.info("OJ API client for %s (token: %s)", conf.base_url, conf.token_state)
    return Upstream(
        service=SERVICE,
        base_url=conf.base_url,
        deadline=conf.timeout,
        max_body_bytes=conf.max_body_bytes,
        max_redirects=MAX_REDIRECTS,
        retries=0,
        headers=headers,
        error=_request_failed,
    )


def _request_failed(failure: Failure) -> Exception:
    """The contract's exact `request failed: …` texts for each kind of failure."""
    up, url = failure.upstream, failure.url
    if failure.kind is FailureKind.TIMEOUT:
        text = f"the OJ API did not answer within {up.deadline:g} s ({url})"
    elif failure.kind is FailureKind.REDIRECTS:
        text = f"the OJ API redirected more than {up.max_redirects} times ({url})"
    elif failure.kind is FailureKind.TOO_LARGE:
        text = f"the OJ API response is larger than {up.max_body_bytes:,} bytes ({url})"
    else:
        text = f"could not reach the OJ API at {up.base_url} ({failure.detail or 'no details'})"
    return OjRequestFailed(f"request failed: {text}")


def _classify(reply: Reply, url: str, *, accept_202: bool) -> OjResponse:
    status, body = reply.status, reply.content
    if status == 200 or (status == 202 and accept_202):
        if status == 202 and not body.strip():
            return OjResponse(status=status, data={}, url=url)
        if not is_json_content_type(reply.headers.get("content-type", "")):
            if status == 202:
                return OjResponse(status=status, data={}, url=url)
            raise OjBadResponse("unexpected non-JSON response")
        try:
            data = json.loads(reply.text)
        except ValueError as exc:
            raise OjBadResponse(f"invalid JSON: {exc}") from None
        return OjResponse(status=status, data=data, url=url)
    raise OjHttpError(http_error_message(status, reply.text), status=status)


def is_json_content_type(value: str) -> bool:
    media = value.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def http_error_message(status: int, text: str) -> str:
    """`[404] Not Found: problem not found` for problem details, else `[status] body[:500]`."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("title"), str) and data["title"]:
        shown = data.get("status") if isinstance(data.get("status"), int) else status
        detail = data.get("detail")
        if detail is None or detail == "":
            return f"[{shown}] {data['title']}"
        return f"[{shown}] {data['title']}: {detail}"
    snippet = text[:ERROR_BODY_CHARS]
    if snippet.strip():
        return f"[{status}] {snippet}"
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "HTTP error"
    return f"[{status}] {reason} (empty response body)"
