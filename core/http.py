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
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import enum
import functools
import json as jsonlib
import logging
import os
import random
import ssl
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from core.exceptions import UpstreamError
from core.limits import HostSlots, SharedLimits, pacer, shared_limits

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


RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
Params = Mapping[str, str | int] | Sequence[tuple[str, str | int]] | None


class FailureKind(enum.StrEnum):
    TIMEOUT = "timeout"  # the deadline (or an attempt's timeout) passed
    CONNECT = "connect"  # no connection: refused, DNS, TLS handshake, bad URL
    DROPPED = "dropped"  # the connection broke before a complete answer
    TOO_LARGE = "too_large"  # the body is over `max_body_bytes`
    REDIRECTS = "redirects"  # more than `max_redirects` hops
    OTHER_HOST = "other_host"  # a redirect off the host with `same_host_redirects`
    STATUS = "status"  # a status the app does not accept (`Upstream.status_error`)


@dataclass(frozen=True)
class Failure:
    """What went wrong in one call; `message` is a default text naming the service."""

    kind: FailureKind
    upstream: Upstream
    url: str  # the URL the call asked for (before redirects)
    detail: str = ""  # e.g. the httpx exception `ConnectError: [Errno 111] ...`
    attempts: int = 1
    target: str = ""  # the redirect target for OTHER_HOST
    reply: Reply | None = None  # for STATUS
    exception: BaseException | None = None

    @property
    def service(self) -> str:
        return self.upstream.service

    @property
    def message(self) -> str:
        up, kind = self.upstream, self.kind
        if kind is FailureKind.TIMEOUT:
            limit = min(up.deadline, up.attempt_timeout or up.deadline)
            text = f"{up.service} did not answer within {limit:g} s"
        elif kind is FailureKind.CONNECT:
            text = f"could not reach {up.service} ({self.detail or 'no details'})"
        elif kind is FailureKind.DROPPED:
            text = f"{up.service} dropped the connection ({self.detail or 'no details'})"
        elif kind is FailureKind.TOO_LARGE:
            text = f"{up.service} answered more than {up.max_body_bytes:,} bytes"
        elif kind is FailureKind.REDIRECTS:
            text = f"{up.service} redirected more than {up.max_redirects} times"
        elif kind is FailureKind.OTHER_HOST:
            text = f"{up.service} redirected to another host ({self.target}); not followed"
        else:
            status = self.reply.status if self.reply else 0
            text = f"{up.service} answered HTTP {status}"
        tries = f", {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{text} ({self.url}{tries})"


def upstream_error(failure: Failure) -> Exception:
    """The default `Upstream.error`: an `UpstreamError` naming the service."""
    return UpstreamError(
        failure.message,
        service=failure.service,
        extra={"url": failure.url, "kind": str(failure.kind)},
    )


@dataclass(frozen=True)
class Upstream:
    """One outside service's policy; build it from settings in the app's `client.py`."""

    service: str  # the name errors use: "СДАМ ГИА", "OJ API", "AnkiConnect"
    base_url: str = ""  # relative paths are joined to it
    deadline: float = 30.0  # seconds for a whole call, retries included
    attempt_timeout: float | None = None  # seconds per attempt (None: the deadline)
    max_body_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5  # 0: a redirect is returned as the reply, not followed
    same_host_redirects: bool = False
    keep_alive: bool = True
    retries: int = 0
    backoff: float = 0.5  # first back-off in seconds; doubles per retry, ±20 % jitter
    max_backoff: float = 10.0  # cap on computed back-off (a Retry-After is honoured as is)
    retry_statuses: frozenset[int] = RETRY_STATUSES
    retry_unsafe_methods: bool = False
    min_interval: float = 0.0  # seconds between request starts to one host (per process)
    max_concurrency_per_host: int = 0  # 0: no cap (beyond `max_connections`)
    max_connections: int = 10
    headers: Mapping[str, str] | tuple[tuple[str, str], ...] = ()
    error: Callable[[Failure], Exception] = upstream_error

    def __post_init__(self) -> None:
        items = self.headers.items() if isinstance(self.headers, Mapping) else self.headers
        object.__setattr__(self, "headers", tuple(sorted(items)))

    def url_for(self, path: str, params: Params = None) -> str:
        """`path` joined to `base_url` (an absolute URL is kept), with `params` encoded."""
        if path.startswith(("http://", "https://")):
            url = path
        else:
            url = f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"
        return str(httpx.URL(url, params=params)) if params else url

    def status_error(self, reply: Reply) -> Exception:
        """The exception for a status the app does not accept (kind STATUS)."""
        failure = Failure(
            FailureKind.STATUS, self, reply.request_url, attempts=reply.attempts, reply=reply
        )
        return self.error(failure)


@dataclass(frozen=True)
class Reply:
    """A complete answer: status, headers and the whole (capped) body."""

    status: int
    headers: httpx.Headers
    content: bytes
    url: str  # the final URL, after redirects
    request_url: str  # the URL the call asked for
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        charset = _charset(self.headers.get("content-type", "")) or "utf-8"
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset":
            return value.strip('"').strip()
    return ""


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The process's one verifying SSL context (building one costs ~28 ms)."""
    return httpx.create_ssl_context()


# --- the total deadline for sync calls -----------------------------------------------

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "core_http_deadline", default=None
)


def _clamp(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout` cut to the time left before this thread's deadline; raise when past it."""
    ends = _deadline.get()
    if ends is None:
        return timeout
    left = ends - time.monotonic()
    if left <= 0:
        raise expired("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        limit = _clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, limit))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync backend with every timeout clamped to the call's deadline."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        limit = _clamp(timeout, httpcore.ConnectTimeout)
        inner = self._inner.connect_tcp(host, port, limit, local_address, socket_options)
        return _DeadlineStream(inner)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        limit = _clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, limit, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _limits(up: Upstream) -> httpx.Limits:
    keepalive = up.max_connections if up.keep_alive else 0
    return httpx.Limits(max_connections=up.max_connections, max_keepalive_connections=keepalive)


def sync_transport(up: Upstream) -> httpx.HTTPTransport:
    """An httpx transport whose pool runs on `DeadlineBackend`.

    httpx has no public way to pass a network backend, so the transport's `_pool` (an
    httpcore.ConnectionPool since httpx 0.18) is replaced; tests/test_http_layer.py pins it.
    """
    limits = _limits(up)
    # The transport's own pool (and its SSL context) is dropped at once: none is built.
    transport = httpx.HTTPTransport(verify=False, limits=limits, trust_env=False)
    transport._pool = httpcore.ConnectionPool(
        # A plain-http service (AnkiConnect on loopback) skips the ~28 ms of loading the CA
        # bundle; should a redirect lead to https, httpcore builds its verifying default.
        ssl_context=None if up.base_url.lower().startswith("http:") else shared_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=DeadlineBackend(),
    )
    return transport


# --- one call's policy, shared by the sync and async clients --------------------------


class _Failed(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.kind)
        self.failure = failure


@dataclass
class _Call:
    up: Upstream
    method: str
    url: str
    headers: dict[str, str]
    content: bytes | None
    ends: float
    attempts: int = 0
    extensions: dict[str, Any] = field(default_factory=dict)  # e.g. sni_hostname (pinning)
    host: str = field(init=False)

    def __post_init__(self) -> None:
        self.host = urlsplit(self.url).netloc

    def left(self) -> float:
        return self.ends - time.monotonic()

    def attempt_limit(self) -> float:
        left = self.left()
        return min(left, self.up.attempt_timeout) if self.up.attempt_timeout else left

    def fail(self, kind: FailureKind, exc: BaseException | None = None, **kw: Any) -> _Failed:
        detail = f"{type(exc).__name__}: {exc or 'no details'}" if exc else ""
        return _Failed(Failure(kind, self.up, self.url, detail, self.attempts, exception=exc, **kw))

    def transport_failure(self, exc: Exception) -> _Failed:
        if isinstance(exc, TimeoutError | httpx.TimeoutException):
            return self.fail(FailureKind.TIMEOUT, exc)
        if isinstance(exc, httpx.ConnectError | httpx.UnsupportedProtocol | httpx.InvalidURL):
            return self.fail(FailureKind.CONNECT, exc)
        return self.fail(FailureKind.DROPPED, exc)

    def retry_delay(self, outcome: Reply | Failure) -> float | None:
        """Seconds to wait before the next attempt, or None to stop (the outcome stands)."""
        up = self.up
        if self.attempts > up.retries or self.left() <= 0 or not self._retryable(outcome):
            return None
        delay = retry_after(outcome.headers) if isinstance(outcome, Reply) else None
        if delay is None:
            jitter = 0.8 + 0.4 * random.random()  # noqa: S311 (jitter, not crypto)
            delay = min(up.backoff * 2 ** (self.attempts - 1), up.max_backoff) * jitter
        return delay if delay < self.left() else None

    def _retryable(self, outcome: Reply | Failure) -> bool:
        safe = self.up.retry_unsafe_methods or self.method in IDEMPOTENT_METHODS
        if isinstance(outcome, Reply):
            return safe and outcome.status in self.up.retry_statuses
        if outcome.kind is FailureKind.CONNECT:
            return True  # nothing was sent
        return safe and outcome.kind in (FailureKind.DROPPED, FailureKind.TIMEOUT)

    def redirect(self, response: httpx.Response, hops: int) -> tuple[str, str, bytes | None]:
        """The next (method, url, content) of a redirect, or a REDIRECTS/OTHER_HOST failure."""
        if hops >= self.up.max_redirects:
            raise self.fail(FailureKind.REDIRECTS)
        target = str(response.url.join(response.headers["location"]))
        if self.up.same_host_redirects and httpx.URL(target).netloc != response.url.netloc:
            raise self.fail(FailureKind.OTHER_HOST, target=target)
        method, content = response.request.method, self.content
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, content = "GET", None
        return method, target, content

    def check_declared(self, response: httpx.Response) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.up.max_body_bytes:
            raise self.fail(FailureKind.TOO_LARGE)

    def collect(self, chunks: list[bytes], size: int, chunk: bytes) -> int:
        size += len(chunk)
        if size > self.up.max_body_bytes:
            raise self.fail(FailureKind.TOO_LARGE)
        chunks.append(chunk)
        return size

    def reply(self, response: httpx.Response, chunks: list[bytes]) -> Reply:
        return Reply(
            status=response.status_code,
            headers=response.headers,
            content=b"".join(chunks),
            url=str(response.url),
            request_url=self.url,
            attempts=self.attempts,
        )


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), if any."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _is_redirect(response: httpx.Response, up: Upstream) -> bool:
    return (
        up.max_redirects > 0
        and response.status_code in REDIRECT_STATUSES
        and "location" in response.headers
    )


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

    def _reserve(self, call: _Call) -> float:
        """Seconds until this attempt may start: the host's interval across the deployment
        (Redis), or across this process when Redis is absent or failing."""
        shared = self._shared()
        if shared is not None and call.up.min_interval > 0:
            try:
                return shared.reserve(call.host, call.up.min_interval)
            except redis_errors() as exc:  # Redis down: politeness per process
                _shared_failed(exc)
        return pacer.reserve(call.host, call.up.min_interval)

    def _busy(self, call: _Call) -> _Failed:
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
    ) -> _Call:
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
        return _Call(up, method.upper(), url, merged, content, time.monotonic() + limit)


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
        except _Failed as failed:
            raise call.up.error(failed.failure) from failed.failure.exception

    @contextlib.contextmanager
    def _slot(self, call: _Call) -> Iterator[None]:
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

    def _run(self, call: _Call) -> Reply:
        while True:
            wait = min(self._reserve(call), max(call.left(), 0))
            if wait > 0:  # time.sleep(0) is no free yield: ~70 µs of timer slack per call
                time.sleep(wait)
            call.attempts += 1
            outcome: Reply | Failure
            try:
                outcome = self._attempt(call)
            except _Failed as failed:
                outcome = failed.failure
            delay = call.retry_delay(outcome)
            if delay is None:
                if isinstance(outcome, Failure):
                    raise _Failed(outcome)
                return outcome
            logger.info("%s: retrying %s in %.1f s", call.up.service, call.url, delay)
            time.sleep(delay)

    def _attempt(self, call: _Call) -> Reply:
        token = _deadline.set(time.monotonic() + call.attempt_limit())
        try:
            if call.left() <= 0:
                raise call.fail(FailureKind.TIMEOUT)
            return self._follow(call)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise call.transport_failure(exc) from None
        finally:
            _deadline.reset(token)

    def _follow(self, call: _Call) -> Reply:
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
                if _is_redirect(response, call.up):
                    method, url, content = call.redirect(response, hops)
                    continue
                return call.reply(response, self._read(call, response))
            finally:
                response.close()
        raise call.fail(FailureKind.REDIRECTS)

    @staticmethod
    def _read(call: _Call, response: httpx.Response) -> list[bytes]:
        call.check_declared(response)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size = call.collect(chunks, size, chunk)
            ends = _deadline.get()
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
                verify=shared_ssl_context(), limits=_limits(upstream), trust_env=False
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
        except _Failed as failed:
            raise call.up.error(failed.failure) from failed.failure.exception

    @contextlib.asynccontextmanager
    async def _slot(self, call: _Call) -> AsyncIterator[None]:
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

    async def _run(self, call: _Call) -> Reply:
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
            except _Failed as failed:
                outcome = failed.failure
            delay = call.retry_delay(outcome)
            if delay is None:
                if isinstance(outcome, Failure):
                    raise _Failed(outcome)
                return outcome
            logger.info("%s: retrying %s in %.1f s", call.up.service, call.url, delay)
            await asyncio.sleep(delay)

    async def _attempt(self, call: _Call) -> Reply:
        limit = call.attempt_limit()
        if limit <= 0:
            raise call.fail(FailureKind.TIMEOUT)
        try:
            async with asyncio.timeout(limit):
                return await self._follow(call)
        except (TimeoutError, httpx.HTTPError, httpx.InvalidURL) as exc:
            raise call.transport_failure(exc) from None

    async def _follow(self, call: _Call) -> Reply:
        method, url, content = call.method, call.url, call.content
        for hops in range(call.up.max_redirects + 1):
            timeout = httpx.Timeout(max(call.attempt_limit(), 0.001))
            request = self._http.build_request(
                method, url, headers=call.headers, content=content, timeout=timeout
            )
            self.requests_made += 1
            response = await self._http.send(request, stream=True)
            try:
                if _is_redirect(response, call.up):
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


# --- one shared sync client per upstream per process ----------------------------------

_SHARED_MAX = 32
_shared: dict[Upstream, UpstreamClient] = {}
_shared_pid = os.getpid()
_shared_lock = threading.Lock()


def shared_client(upstream: Upstream) -> UpstreamClient:
    """The process's keep-alive client for `upstream`; new after a fork (Celery prefork).

    Clients are keyed by the whole policy, so a changed setting (base URL, token header,
    deadline) gets a fresh client; the oldest of more than 32 is closed.
    """
    global _shared_pid
    with _shared_lock:
        if _shared_pid != os.getpid():
            _shared.clear()  # the parent's sockets are not ours to use or close
            _shared_pid = os.getpid()
        client = _shared.get(upstream)
        if client is None:
            if len(_shared) >= _SHARED_MAX:
                _shared.pop(next(iter(_shared))).close()
            client = _shared[upstream] = UpstreamClient(upstream)
        return client


def iter_shared() -> Iterator[UpstreamClient]:
    """The shared clients of this process (for tests and shutdown)."""
    with _shared_lock:
        return iter(list(_shared.values()))


# --- an httpx transport over the policy, for SDKs that take an httpx client -----------

_HOP_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "content-encoding"}
)


class UpstreamTransport(httpx.BaseTransport):
    """Sends every request of an SDK's `httpx.Client` through `client` (an UpstreamClient).

    The SDK gets the upstream's deadline, size cap, redirect cap, shared SSL context and
    connection policy; a failure raises what `Upstream.error` returns (SDKs usually wrap it,
    e.g. openai's APIConnectionError with it as `__cause__`). Give the SDK or the upstream
    the retries, not both. The answer is complete and already decoded when the SDK sees it.

    With `timeout_is_deadline`, a request's httpx timeout (an SDK's per-call `timeout=`)
    is that request's total deadline when it is shorter than the upstream's: one request
    gets less time than the others on the same shared client. Off by default, since an
    httpx client sets a timeout (5 s unless told) on every request.
    """

    def __init__(self, client: UpstreamClient, *, timeout_is_deadline: bool = False) -> None:
        self.client = client
        self.timeout_is_deadline = timeout_is_deadline

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        reply = self.client.request(
            request.method,
            str(request.url),
            headers=headers,
            content=request.read() or None,
            deadline=self._deadline(request),
        )
        kept = [(k, v) for k, v in reply.headers.multi_items() if k.lower() not in _HOP_HEADERS]
        return httpx.Response(reply.status, headers=kept, content=reply.content, request=request)

    def _deadline(self, request: httpx.Request) -> float | None:
        """The request's own total deadline, if it asked for one shorter than the upstream's."""
        if not self.timeout_is_deadline:
            return None
        parts = (request.extensions.get("timeout") or {}).values()
        if not parts or None in parts:
            return None
        return min(max(parts), self.client.upstream.deadline)
