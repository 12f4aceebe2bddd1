"""Rate limits shared by every outbound client of the process.

`pacer` spaces request starts to one host (a minimum interval, shared by every thread
and event loop of the process); `HostSlots` caps concurrent requests per host. The
outbound HTTP layer (`core.http`) applies both from an `Upstream`'s policy, so an app
declares its limits once in its `client.py`.
"""

from __future__ import annotations

import asyncio
import threading
import time


class HostPacer:
    """A minimum interval between request starts per host, shared by every thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, host: str, interval: float) -> float:
        """Seconds to wait before this request may start; the slot is taken now."""
        if interval <= 0:
            return 0.0
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(host, now))
            self._next[host] = start + interval
            return start - now


pacer = HostPacer()


class HostSlots:
    """At most `limit` concurrent requests per host, for one event loop (async) or process.

    `sync(host)` gives a threading semaphore (any thread), `for_loop(host)` an asyncio one;
    an async owner is one event loop, so keep one `HostSlots` per async client.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._lock = threading.Lock()
        self._sync: dict[str, threading.BoundedSemaphore] = {}
        self._async: dict[str, asyncio.Semaphore] = {}

    def sync(self, host: str) -> threading.BoundedSemaphore:
        with self._lock:
            return self._sync.setdefault(host, threading.BoundedSemaphore(self.limit))

    def for_loop(self, host: str) -> asyncio.Semaphore:
        with self._lock:
            return self._async.setdefault(host, asyncio.Semaphore(self.limit))
