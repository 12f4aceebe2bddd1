"""Rate limits shared by every outbound client: of the process, or of the deployment.

`pacer` spaces request starts to one host (a minimum interval, shared by every thread
and event loop of the process); `HostSlots` caps concurrent requests per host. With
Redis configured, `shared_limits()` does both for every process on every host (four
workers then crawl a site no faster than one). The outbound HTTP layer (`core.http`)
applies them from an `Upstream`'s policy, so an app declares its limits once in its
`client.py`.
"""

from __future__ import annotations

import asyncio
import threading
import time

from core.holders import holder_gone, holder_token


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


# --- Shared by every process and host, through Redis -------------------------------------

# The next free start per host, in µs of Redis's clock (one clock for every host); the
# key expires once the interval has passed, so a quiet host costs nothing.
_PACE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local start = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local following = start + tonumber(ARGV[1])
redis.call('SET', KEYS[1], following, 'PX', math.floor((following - now) / 1000) + 1000)
return start - now
"""

# Holders of a host's slots: a sorted set of tokens (`core.holders`: each names its
# process) scored by when their lease ends, in ms of Redis's clock. Expired leases are
# dropped before counting.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
if redis.call('PTTL', KEYS[1]) < lease then
  redis.call('PEXPIRE', KEYS[1], lease)
end
return 1
"""

SLOT_POLL_SECONDS = 0.02


class SharedLimits:
    """`HostPacer` and `HostSlots` for every process on every host, kept in Redis.

    Each operation is one atomic script run on Redis's own clock. A slot is a lease that
    names its holder: one held by a process of this host that no longer runs (killed in
    the middle of a call: SIGKILL, a closed desktop client) is free at once; one held on
    another host, when its lease ends. A quiet host's keys expire.
    """

    def __init__(self, url: str, *, prefix: str = "toolhub:limits") -> None:
        import redis

        self._redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._pace = self._redis.register_script(_PACE)
        self._take = self._redis.register_script(_TAKE)
        self._prefix = prefix

    def reserve(self, host: str, interval: float) -> float:
        """Seconds to wait before this request may start; the start is taken now."""
        if interval <= 0:
            return 0.0
        waited = self._pace(keys=[f"{self._prefix}:pace:{host}"], args=[round(interval * 1e6)])
        return int(waited) / 1e6

    def try_acquire(self, host: str, limit: int, lease: float) -> str | None:
        """A token for one of `limit` slots of `host`, held for at most `lease` seconds;
        None when every slot is taken."""
        token, key = holder_token(), self._slots_key(host)
        args: list[int | str] = [limit, max(1, round(lease * 1000)), token]
        if self._take(keys=[key], args=args):
            return token
        # every slot taken: those of this host's processes that are gone are free now
        held: list[bytes] = self._redis.zrange(key, 0, -1)  # type: ignore[assignment]
        gone = [holder for holder in held if holder_gone(holder.decode())]
        if gone and self._redis.zrem(key, *gone) and self._take(keys=[key], args=args):
            return token
        return None

    def acquire(self, host: str, limit: int, lease: float, timeout: float) -> str | None:
        """`try_acquire`, polling for at most `timeout` seconds."""
        ends = time.monotonic() + timeout
        while True:
            token = self.try_acquire(host, limit, lease)
            if token is not None or time.monotonic() >= ends:
                return token
            time.sleep(min(SLOT_POLL_SECONDS, max(ends - time.monotonic(), 0)))

    async def acquire_async(
        self, host: str, limit: int, lease: float, timeout: float
    ) -> str | None:
        ends = time.monotonic() + timeout
        while True:
            token = await asyncio.to_thread(self.try_acquire, host, limit, lease)
            if token is not None or time.monotonic() >= ends:
                return token
            await asyncio.sleep(min(SLOT_POLL_SECONDS, max(ends - time.monotonic(), 0)))

    def release(self, host: str, token: str) -> None:
        self._redis.zrem(self._slots_key(host), token)

    def _slots_key(self, host: str) -> str:
        return f"{self._prefix}:slots:{host}"


_shared: dict[str, SharedLimits] = {}
_shared_lock = threading.Lock()


def shared_limits() -> SharedLimits | None:
    """The limits shared through `settings.REDIS_URL`; None without Redis (each process
    then keeps its own, as `pacer` and `HostSlots` do)."""
    from django.conf import settings

    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return None
    with _shared_lock:
        if url not in _shared:
            _shared[url] = SharedLimits(url)
        return _shared[url]
