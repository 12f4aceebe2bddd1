"""The process's shared upstream clients and an httpx transport over the policy.

`shared_client` keeps one keep-alive `UpstreamClient` per policy in each process (new after
a fork); `UpstreamTransport` lets an SDK that takes an httpx client (openai) send through
one, with the upstream's deadline, caps and connection policy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import httpx

from core.http import UpstreamClient
from core.http_policy import Upstream

__all__ = ["UpstreamTransport", "iter_shared", "shared_client"]

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
