"""Per-host politeness shared by every process through Redis (issue 15, item 2).

Real processes, real Redis: starts stay spaced and slots stay capped across processes,
and a holder that dies frees its slot: at once on this host, when its lease ends on another.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import uuid

import pytest
import redis

from core.limits import SharedLimits

PROCESSES = 4


def pace_worker(url: str, host: str, interval: float, count: int, starts: list[float]) -> None:
    limits = SharedLimits(url)
    for _ in range(count):
        time.sleep(limits.reserve(host, interval))
        starts.append(time.time())


def slot_worker(
    url: str, host: str, limit: int, rounds: int, spans: list[tuple[float, float]]
) -> None:
    limits = SharedLimits(url)
    for _ in range(rounds):
        token = limits.acquire(host, limit, lease=10, timeout=30)
        assert token is not None
        entered = time.time()
        time.sleep(0.05)
        spans.append((entered, time.time()))
        limits.release(host, token)


def die_holding(url: str, host: str) -> None:
    assert SharedLimits(url).try_acquire(host, 1, lease=60.0) is not None
    os._exit(0)  # no release: the process is gone


def run(target, *args) -> None:  # type: ignore[no-untyped-def]
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=target, args=args) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0


def test_four_processes_start_no_faster_than_the_interval_together(redis_url: str) -> None:
    interval, count = 0.05, 10
    with multiprocessing.get_context("spawn").Manager() as manager:
        starts = manager.list()
        run(pace_worker, redis_url, f"pace-{uuid.uuid4().hex}", interval, count, starts)
        ordered = sorted(starts)
    assert len(ordered) == PROCESSES * count
    # In every window of one second: at most 1/interval starts, +1 for the window's edge,
    # and one more a process: a start is stamped when its sleep ends, and a busy machine
    # may wake a process late, into the next window (it reserves no more until it wakes).
    # Four processes pacing each alone would start 4/interval a second.
    for i, first in enumerate(ordered):
        in_window = sum(1 for t in ordered[i:] if t < first + 1.0)
        assert in_window <= round(1 / interval) + PROCESSES
    # Together, not each alone: four processes alone would take a quarter of the time.
    assert ordered[-1] - ordered[0] >= (len(ordered) - 1) * interval * 0.9


def test_four_processes_never_hold_more_slots_than_the_limit(redis_url: str) -> None:
    limit = 2
    with multiprocessing.get_context("spawn").Manager() as manager:
        spans = manager.list()
        run(slot_worker, redis_url, f"slots-{uuid.uuid4().hex}", limit, 5, spans)
        held = list(spans)
    assert len(held) == PROCESSES * 5
    events = sorted([(start, 1) for start, _ in held] + [(end, -1) for _, end in held])
    inside = most = 0
    for _, step in events:
        inside += step
        most = max(most, inside)
    assert most == limit  # used to the full, never beyond


def test_a_holder_killed_on_this_host_frees_its_slot_at_once(redis_url: str) -> None:
    """A process killed in the middle of a call (a closed desktop client's MCP server) does
    not keep Anki's one slot, or a site's, for the rest of its lease."""
    host = f"dead-{uuid.uuid4().hex}"
    process = multiprocessing.get_context("spawn").Process(
        target=die_holding, args=(redis_url, host)
    )
    process.start()
    process.join(timeout=30)
    assert process.exitcode == 0
    limits = SharedLimits(redis_url)
    token = limits.try_acquire(host, 1, lease=5)  # its lease has 60 s to run
    assert token is not None
    assert limits.try_acquire(host, 1, lease=5) is None  # this process runs: its slot holds
    limits.release(host, token)


def test_a_holder_on_another_host_keeps_its_slot_until_its_lease_ends(redis_url: str) -> None:
    host = f"elsewhere-{uuid.uuid4().hex}"
    limits = SharedLimits(redis_url)
    key = limits._slots_key(host)
    held = "another-host:4242:1:0123456789ab"  # cannot be checked from here
    store = redis.Redis.from_url(redis_url)
    now = store.time()
    store.zadd(key, {held: now[0] * 1000 + now[1] // 1000 + 1000})
    assert limits.try_acquire(host, 1, lease=5) is None
    token = limits.acquire(host, 1, lease=5, timeout=10)  # after its 1 s
    assert token is not None
    limits.release(host, token)


def test_without_redis_the_process_keeps_its_own_limits(settings) -> None:  # type: ignore[no-untyped-def]
    from core.limits import shared_limits

    settings.REDIS_URL = ""
    assert shared_limits() is None


@pytest.mark.django_db
def test_a_redis_that_is_down_leaves_requests_limited_per_process(settings, httpserver) -> None:  # type: ignore[no-untyped-def]
    """Politeness degrades to per process; the request itself still goes."""
    from core.http import Upstream, UpstreamClient

    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    httpserver.expect_request("/x").respond_with_data("ok")
    upstream = Upstream(
        service="Test site",
        base_url=httpserver.url_for("/").rstrip("/"),
        deadline=10,
        min_interval=0.01,
        max_concurrency_per_host=1,
    )
    with UpstreamClient(upstream) as client:
        assert client.request("GET", "/x").text == "ok"
