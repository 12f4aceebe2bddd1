# core/http.py: the one outbound HTTP layer (issue 10, "one way out").
# API STABLE
"""The one outbound HTTP layer: every app's `client.py` stands on it.

An app describes its service once, as an `Upstream` built from settings in its
`client.py`, and calls it through `UpstreamClient` (sync, on the caller's thread) or
`AsyncUpstreamClient` (async, one per event loop). Every call gets:

- a **total deadline** (connect, every redirect hop, retries, back-off sleeps and the
  whole body, headers included): a server trickling a byte a second is cut at the
  deadline, not held by per-read timeouts. Sync calls hold the deadline in a contextvar
  that a wrapping httpcore network backend applies to every connect/read/write (no hop to
  another thread or event loop); async calls run under `asyncio.timeout`;
- a response size cap (Content-Length first, then counted while streaming);
- a redirect cap, optionally same host only;
- one shared SSL context per process (`shared_ssl_context`);
- a connection policy: a keep-alive pool, or `keep_alive=False` (a fresh connection per
  request and `Connection: close`, for servers that close after every answer);
- bounded retries with exponential back-off and jitter that honour `Retry-After`
  (connection errors, dropped connections, per-attempt timeouts, `retry_statuses`),
  never past the deadline; `retries=0` means none. Only a refused connection is retried
  for a non-idempotent method unless `retry_unsafe_methods` is set;
- per-host pacing and a concurrency cap (`core.limits`).

Every failure becomes one `Failure` (its `kind` says what went wrong, its `message` names
the service) handed to `Upstream.error`, which returns the exception to raise: by default
`core.exceptions.UpstreamError(message, service=...)`; an app passes its own hook to keep
its subclasses and exact message texts. A call returns a `Reply` for any status (after
the retries for `retry_statuses` are spent): statuses are the app's vocabulary, and
`Upstream.status_error(reply)` maps one it does not accept through the same hook.

The layer's rooms: `core.http_policy` (`Upstream`, `Failure`, `Reply`: what a call is
asked and answers), `core.http_call` (one call's retries, redirects and body cap),
`core.http_deadline` (the sync total deadline and the shared SSL context),
`core.http_shared` (the process's shared clients and the httpx transport for SDKs), and
this module, the clients that run a call on them. Import from here, the shared clients
and the transport from `core.http_shared`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json as jsonlib
import logging
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from typing import Any

import httpx

from core.http_call import Call, CallFailed, is_redirect
from core.http_deadline import (
    DeadlineBackend,
    deadline_var,
    pool_limits,
    shared_ssl_context,
    sync_transport,
)
from core.http_policy import (
    IDEMPOTENT_METHODS,
    REDIRECT_STATUSES,
    RETRY_STATUSES,
    Failure,
    FailureKind,
    Params,
    Reply,
    Upstream,
    retry_after,
    upstream_error,
)
from core.limits import HostSlots, SharedLimits, pacer, shared_limits

# The layer's one face: the apps import these from here, wherever they are defined.
__all__ = [
    "IDEMPOTENT_METHODS",
    "REDIRECT_STATUSES",
    "RETRY_STATUSES",
    "AsyncUpstreamClient",
    "DeadlineBackend",
    "Failure",
    "FailureKind",
    "Params",
    "Reply",
    "Upstream",
    "UpstreamClient",
    "retry_after",
    "shared_ssl_context",
    "sync_transport",
    "upstream_error",
]

logger = logging.getLogger(__name__)

LEASE_MARGIN = 5.0  # seconds a shared slot outlives its call's deadline (clock skew, exit)
_SHARED_WARN_EVERY = 60.0
_shared_warned_at = 0.0


def redis_errors() -> tuple[type[Exception], ...]:
    """Redis's errors, once the shared limits have imported it (they alone use it, and
    importing redis costs a process 35 ms at start-up); before, nothing can raise them."""
    module = sys.modules.get("redis.exceptions")
    return (module.RedisError,) if module is not None else ()


def _shared_failed(exc: Exception) -> None:
    """Redis could not be asked: this call keeps the process's own limits (warned once a
    minute, not per request)."""
    global _shared_warned_at
    now = time.monotonic()
    if now - _shared_warned_at >= _SHARED_WARN_EVERY:
        _shared_warned_at = now
        logger.warning("shared rate limits unavailable (Redis: %s); limiting per process", exc)


def _release(shared: SharedLimits, host: str, token: str) -> None:
    try:
        shared.release(host, token)
    except redis_errors() as exc:  # the lease ends on its own
        _shared_failed(exc)


class _Base:
    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.requests_made = 0
        self._slots = HostSlots(upstream.max_concurrency_per_host)
        headers = dict(upstream.headers)
        if not upstream.keep_alive:
            headers["Connection"] = "close"
        self._headers = headers

    def _shared(self) -> SharedLimits | None:
        """The deployment-wide limits when this upstream has any and Redis is configured."""
        up = self.upstream
        return shared_limits() if up.max_concurrency_per_host or up.min_interval else None

    def _reserve(self, call: Call) -> float:
        """Seconds until this attempt may start: the host's interval across the deployment
        (Redis), or across this process when Redis is absent or failing."""
        shared = self._shared()
        if shared is not None and call.up.min_interval > 0:
            try:
                return shared.reserve(call.host, call.up.min_interval)
            except redis_errors() as exc:  # Redis down: politeness per process
                _shared_failed(exc)
        return pacer.reserve(call.host, call.up.min_interval)

    def _busy(self, call: Call) -> CallFailed:
        limit = self.upstream.max_concurrency_per_host
        return call.fail(
            FailureKind.TIMEOUT,
            TimeoutError(f"all {limit} request slot(s) for {call.host} stayed busy"),
        )

    def _call(
        self,
        method: str,
        path: str,
        params: Params,
        headers: Mapping[str, str] | None,
        content: bytes | None,
        json: Any,
        deadline: float | None,
    ) -> Call:
        merged = dict(headers or {})
        if json is not None:
            content = jsonlib.dumps(json, ensure_ascii=False, separators=(",", ":")).encode()
            merged.setdefault("Content-Type", "application/json")
        limit = self.upstream.deadline if deadline is None else deadline
        up = self.upstream if deadline is None else replace(self.upstream, deadline=limit)
        try:
            url = up.url_for(path, params)
        except httpx.InvalidURL as exc:
            failure = Failure(FailureKind.CONNECT, up, path, f"InvalidURL: {exc}", exception=exc)
            raise up.error(failure) from exc
        return Call(up, method.upper(), url, merged, content, time.monotonic() + limit)


class UpstreamClient(_Base):
    """Sync calls to one `Upstream` on the caller's thread; safe to share between threads."""

    def __init__(self, upstream: Upstream, *, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(upstream)
        self._http = httpx.Client(
            headers=self._headers,
            transport=transport or sync_transport(upstream),
            follow_redirects=False,
            trust_env=False,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> UpstreamClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, params: Params = None, **kw: Any) -> Reply:
        return self.request("GET", path, params=params, **kw)

    def post(self, path: str, **kw: Any) -> Reply:
        return self.request("POST", path, **kw)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Params = None,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        json: Any = None,
        deadline: float | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> Reply:
        """One call under the upstream's policy (see the module docstring).

        Returns the reply for any status; raises what `Upstream.error` returns for a failure.
        `deadline` overrides the upstream's total deadline for this call.
        """
        call = self._call(method, path, params, headers, content, json, deadline)
        call.extensions = dict(extensions or {})  # e.g. sni_hostname for a pinned address
        call.ends = time.monotonic() + call.up.deadline  # waiting for a slot counts too
        try:
            with self._slot(call):
                return self._run(call)
        except CallFailed as failed:
            raise call.up.error(failed.failure) from failed.failure.exception

    @contextlib.contextmanager
    def _slot(self, call: Call) -> Iterator[None]:
        """One of the host's `max_concurrency_per_host` slots, for the whole call: shared
        by the deployment through Redis (a lease, so a dead holder frees it), else by the
        process. Waiting ends with the call's deadline."""
        limit = self.upstream.max_concurrency_per_host
        if not limit:
            yield
            return
        shared = self._shared()
        if shared is not None:
            try:
                token = shared.acquire(call.host, limit, call.left() + LEASE_MARGIN, call.left())
            except redis_errors() as exc:  # Redis down: the process's own slots
                _shared_failed(exc)
            else:
                if token is None:
                    raise self._busy(call)
                try:
                    yield
                finally:
                    _release(shared, call.host, token)
                return
        semaphore = self._slots.sync(call.host)
        if not semaphore.acquire(timeout=max(call.left(), 0)):
            raise self._busy(call)
        try:
            yield
        finally:
            semaphore.release()

    def _run(self, call: Call) -> Reply:
        while True:
            wait = min(self._reserve(call), max(call.left(), 0))
            if wait > 0:  # time.sleep(0) is no free yield: ~70 µs of timer slack per call
                time.sleep(wait)
            call.attempts += 1
            outcome: Reply | Failure
            try:
                outcome = self._attempt(call)
            except CallFailed as failed:
                outcome = failed.failure
            delay = call.retry_delay(outcome)
            if delay is None:
                if isinstance(outcome, Failure):
                    raise CallFailed(outcome)
                return outcome
            logger.info("%s: retrying %s in %.1f s", call.up.service, call.url, delay)
            time.sleep(delay)

    def _attempt(self, call: Call) -> Reply:
        token = deadline_var.set(time.monotonic() + call.attempt_limit())
        try:
            if call.left() <= 0:
                raise call.fail(FailureKind.TIMEOUT)
            return self._follow(call)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise call.transport_failure(exc) from None
        finally:
            deadline_var.reset(token)

    def _follow(self, call: Call) -> Reply:
        method, url, content = call.method, call.url, call.content
        for hops in range(call.up.max_redirects + 1):
            timeout = httpx.Timeout(max(call.attempt_limit(), 0.001))
            request = self._http.build_request(
                method, url, headers=call.headers, content=content, timeout=timeout
            )
            request.extensions.update(call.extensions)
            self.requests_made += 1
            response = self._http.send(request, stream=True)
            try:
                if is_redirect(response, call.up):
                    method, url, content = call.redirect(response, hops)
                    continue
                return call.reply(response, self._read(call, response))
            finally:
                response.close()
        raise call.fail(FailureKind.REDIRECTS)

    @staticmethod
    def _read(call: Call, response: httpx.Response) -> list[bytes]:
        call.check_declared(response)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size = call.collect(chunks, size, chunk)
            ends = deadline_var.get()
            if ends is not None and time.monotonic() >= ends:
                raise call.fail(FailureKind.TIMEOUT)
        return chunks


class AsyncUpstreamClient(_Base):
    """Async calls to one `Upstream`; bound to one event loop (`async with` or `aclose`)."""

    def __init__(
        self, upstream: Upstream, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        super().__init__(upstream)
        self._http = httpx.AsyncClient(
            headers=self._headers,
            transport=transport
            or httpx.AsyncHTTPTransport(
                verify=shared_ssl_context(), limits=pool_limits(upstream), trust_env=False
            ),
            follow_redirects=False,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncUpstreamClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def get(self, path: str, params: Params = None, **kw: Any) -> Reply:
        return await self.request("GET", path, params=params, **kw)

    async def post(self, path: str, **kw: Any) -> Reply:
        return await self.request("POST", path, **kw)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params = None,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        json: Any = None,
        deadline: float | None = None,
    ) -> Reply:
        """The async twin of `UpstreamClient.request`."""
        call = self._call(method, path, params, headers, content, json, deadline)
        call.ends = time.monotonic() + call.up.deadline  # waiting for a slot counts too
        try:
            async with self._slot(call):
                return await self._run(call)
        except CallFailed as failed:
            raise call.up.error(failed.failure) from failed.failure.exception

    @contextlib.asynccontextmanager
    async def _slot(self, call: Call) -> AsyncIterator[None]:
        """The async twin of `UpstreamClient._slot`."""
        limit = self.upstream.max_concurrency_per_host
        if not limit:
            yield
            return
        shared = self._shared()
        if shared is not None:
            try:
                token = await shared.acquire_async(
                    call.host, limit, call.left() + LEASE_MARGIN, call.left()
                )
            except redis_errors() as exc:  # Redis down: the loop's own slots
                _shared_failed(exc)
            else:
                if token is None:
                    raise self._busy(call)
                try:
                    yield
                finally:
                    await asyncio.to_thread(_release, shared, call.host, token)
                return
        semaphore = self._slots.for_loop(call.host)
        try:
            await asyncio.wait_for(semaphore.acquire(), timeout=max(call.left(), 0))
        except TimeoutError:
            raise self._busy(call) from None
        try:
            yield
        finally:
            semaphore.release()

    async def _run(self, call: Call) -> Reply:
        while True:
            shared = self._shared()
            if shared is not None and call.up.min_interval > 0:
                wait = await asyncio.to_thread(self._reserve, call)
            else:
                wait = pacer.reserve(call.host, call.up.min_interval)
            await asyncio.sleep(min(wait, max(call.left(), 0)))
            call.attempts += 1
            outcome: Reply | Failure
            try:
                outcome = await self._attempt(call)
            except CallFailed as failed:
                outcome = failed.failure
            delay = call.retry_delay(outcome)
            if delay is None:
                if isinstance(outcome, Failure):
                    raise CallFailed(outcome)
                return outcome
            logger.info("%s: retrying %s in %.1f s", call.up.service, call.url, delay)
            await asyncio.sleep(delay)

    async def _attempt(self, call: Call) -> Reply:
        limit = call.attempt_limit()
        if limit <= 0:
            raise call.fail(FailureKind.TIMEOUT)
        try:
            async with asyncio.timeout(limit):
                return await self._follow(call)
        except (TimeoutError, httpx.HTTPError, httpx.InvalidURL) as exc:
            raise call.transport_failure(exc) from None

    async def _follow(self, call: Call) -> Reply:
        method, url, content = call.method, call.url, call.content
        for hops in range(call.up.max_redirects + 1):
            timeout = httpx.Timeout(max(call.attempt_limit(), 0.001))
            request = self._http.build_request(
                method, url, headers=call.headers, content=content, timeout=timeout
            )
            self.requests_made += 1
            response = await self._http.send(request, stream=True)
            try:
                if is_redirect(response, call.up):
                    method, url, content = call.redirect(response, hops)
                    continue
                call.check_declared(response)
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size = call.collect(chunks, size, chunk)
                return call.reply(response, chunks)
            finally:
                await response.aclose()
        raise call.fail(FailureKind.REDIRECTS)
