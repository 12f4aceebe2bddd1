"""The total deadline of a sync call: every connect, read and write of the call clamped
to the time left (`deadline_var`, set by `core.http.UpstreamClient` per attempt), so a
server trickling a byte a second is cut at the deadline, not held by per-read timeouts;
and the process's one SSL context. Async calls need none of this (`asyncio.timeout`).
"""

from __future__ import annotations

import contextvars
import functools
import ssl
import time
from typing import Any

import httpcore
import httpx

from core.http_policy import Upstream


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The process's one verifying SSL context (building one costs ~28 ms)."""
    return httpx.create_ssl_context()


deadline_var: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "core_http_deadline", default=None
)


def _clamp(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout` cut to the time left before this thread's deadline; raise when past it."""
    ends = deadline_var.get()
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


def pool_limits(up: Upstream) -> httpx.Limits:
    keepalive = up.max_connections if up.keep_alive else 0
    return httpx.Limits(max_connections=up.max_connections, max_keepalive_connections=keepalive)


def sync_transport(up: Upstream) -> httpx.HTTPTransport:
    """An httpx transport whose pool runs on `DeadlineBackend`.

    httpx has no public way to pass a network backend, so the transport's `_pool` (an
    httpcore.ConnectionPool since httpx 0.18) is replaced; tests/test_http_layer.py pins it.
    """
    limits = pool_limits(up)
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
