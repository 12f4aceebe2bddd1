"""The only module that talks to the online-judge problem API.

One GET per call, no retries: `Authorization: Bearer` on every request when a token is
set, redirects followed (at most 10), the body capped (1 MiB by default) and a *total*
deadline per call (30 s by default) that covers connecting, every redirect hop and the
body. The requests run on one background event loop per process, so sync callers (MCP
worker threads, DRF views, Celery tasks) share one connection pool and the deadline is
enforced by cancellation rather than per-read timeouts.

Statuses are classified here (rules 2–4 of the issue): a connection failure or timeout
is `OjRequestFailed("request failed: …")`; a status other than 200/202 is `OjHttpError`
with `[{status}] {title}: {detail}` for RFC 7807 bodies or `[{status}] {body[:500]}`;
a 200 that is not JSON is `OjBadResponse`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ojclient.conf import OjSettings
from ojclient.exceptions import OjBadResponse, OjHttpError, OjRequestFailed

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 10
ERROR_BODY_CHARS = 500
USER_AGENT = "tool-hub-ojclient/0.1 (+https://github.com/)"


def encode(value: str) -> str:
    """Percent-encode everything but the unreserved `A-Z a-z 0-9 - _ . ~`."""
    return quote(value, safe="")


@dataclass(frozen=True)
class OjResponse:
    status: int
    data: Any
    url: str


class _LoopThread:
    """A private event loop on a daemon thread; replaced after a fork (Celery prefork)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.clients: dict[tuple[str, str], httpx.AsyncClient] = {}
        thread = threading.Thread(target=self.loop.run_forever, name="ojclient-http", daemon=True)
        thread.start()


_runner: _LoopThread | None = None
_runner_lock = threading.Lock()


def _loop_thread() -> _LoopThread:
    global _runner
    with _runner_lock:
        if _runner is None or _runner.pid != os.getpid():
            _runner = _LoopThread()
        return _runner


class OjClient:
    """GET requests to one configured OJ API (see module docstring)."""

    def __init__(self, conf: OjSettings) -> None:
        self.conf = conf

    def url(self, path: str, params: Sequence[tuple[str, str]] = ()) -> str:
        """`base_url + path` and the query, every value percent-encoded (path: pre-encoded)."""
        query = "&".join(f"{encode(key)}={encode(value)}" for key, value in params)
        return f"{self.conf.base_url}{path}" + (f"?{query}" if query else "")

    def get(
        self, path: str, params: Sequence[tuple[str, str]] = (), *, accept_202: bool = False
    ) -> OjResponse:
        """GET `path` and classify the answer: 200 (or 202 when accepted) with JSON, or an error."""
        url = self.url(path, params)
        runner = _loop_thread()
        future = asyncio.run_coroutine_threadsafe(
            self._get(runner, url, accept_202=accept_202), runner.loop
        )
        try:
            # The coroutine enforces the deadline itself; this is only a backstop.
            return future.result(timeout=self.conf.timeout + 5)
        except TimeoutError:
            future.cancel()
            raise OjRequestFailed(self._timeout_message(url)) from None

    async def _get(self, runner: _LoopThread, url: str, *, accept_202: bool) -> OjResponse:
        http = self._http(runner)
        try:
            async with asyncio.timeout(self.conf.timeout):
                async with http.stream("GET", url) as response:
                    body = await self._read_capped(response, url)
        except TimeoutError:
            raise OjRequestFailed(self._timeout_message(url)) from None
        except httpx.TooManyRedirects:
            raise OjRequestFailed(
                f"request failed: too many redirects (more than {MAX_REDIRECTS}) from {url}"
            ) from None
        except httpx.TimeoutException:
            raise OjRequestFailed(self._timeout_message(url)) from None
        except httpx.HTTPError as exc:
            raise OjRequestFailed(
                f"request failed: could not reach the OJ API at {self.conf.base_url} "
                f"({type(exc).__name__}: {exc or 'no details'})"
            ) from None
        logger.debug("GET %s -> %s (%d bytes)", url, response.status_code, len(body))
        return self._classify(response, body, url, accept_202=accept_202)

    def _timeout_message(self, url: str) -> str:
        return f"request failed: the OJ API did not answer within {self.conf.timeout:g} s ({url})"

    async def _read_capped(self, response: httpx.Response, url: str) -> bytes:
        cap = self.conf.max_body_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise OjRequestFailed(
                f"request failed: the OJ API response is larger than {cap:,} bytes ({url})"
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise OjRequestFailed(
                    f"request failed: the OJ API response is larger than {cap:,} bytes ({url})"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _classify(
        self, response: httpx.Response, body: bytes, url: str, *, accept_202: bool
    ) -> OjResponse:
        status = response.status_code
        text = body.decode(response.encoding or "utf-8", errors="replace")
        if status == 200 or (status == 202 and accept_202):
            if status == 202 and not body.strip():
                return OjResponse(status=status, data={}, url=url)
            if not is_json_content_type(response.headers.get("content-type", "")):
                if status == 202:
                    return OjResponse(status=status, data={}, url=url)
                raise OjBadResponse("unexpected non-JSON response")
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise OjBadResponse(f"invalid JSON: {exc}") from None
            return OjResponse(status=status, data=data, url=url)
        raise OjHttpError(http_error_message(status, text), status=status)

    def _http(self, runner: _LoopThread) -> httpx.AsyncClient:
        key = (self.conf.base_url, self.conf.token)
        client = runner.clients.get(key)
        if client is None:
            headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
            if self.conf.token:
                headers["Authorization"] = f"Bearer {self.conf.token}"
            client = httpx.AsyncClient(
                headers=headers,
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
                timeout=httpx.Timeout(self.conf.timeout),
                trust_env=False,
            )
            runner.clients[key] = client
            logger.info(
                "OJ API client for %s (token: %s)", self.conf.base_url, self.conf.token_state
            )
        return client


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
