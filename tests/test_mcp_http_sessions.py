"""Abandoned streamable HTTP sessions expire: the server's memory comes back down."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import MANAGE, PYTHON, free_port, raw_initialize, wait_for_http

IDLE_SECONDS = 2
SESSIONS = 2_000
INITIALIZE = raw_initialize("abandoning-client")
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def open_sessions(url: str, count: int) -> list[str]:
    """`count` sessions, each initialized and then abandoned (never deleted), in the order
    they were opened."""
    limit = asyncio.Semaphore(16)
    ids: list[str] = []

    async def one(client: httpx.AsyncClient) -> None:
        async with limit:
            response = await client.post(url, json=INITIALIZE, headers=HEADERS)
            assert response.status_code == 200, response.text
            ids.append(response.headers["mcp-session-id"])

    async with httpx.AsyncClient(timeout=30) as client:
        await asyncio.gather(*(one(client) for _ in range(count)))
    return ids


def refused(url: str, session_id: str) -> bool:
    """Whether the server no longer knows the session (using it keeps a live one alive)."""
    response = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"},
    )
    return response.status_code == 404


def expired(url: str, ids: list[str], deadline: float = 60.0) -> list[str]:
    """Once the last opened of `ids` is refused, every one is (the server reaps them after
    the idle time, at its own pace: a busy machine takes longer). Each probe takes another
    session, newest first, since a probe keeps a live one alive; the ids never probed."""
    until = time.monotonic() + deadline
    left = list(ids)
    while not refused(url, left.pop()):
        assert time.monotonic() < until, "the abandoned sessions were never reaped"
        time.sleep(0.2)
    return left


def rss_falls_to(pid: int, limit: int, deadline: float = 60.0) -> int:
    """The RSS once it is at most `limit` KiB, or the last one read when `deadline` passes.

    The server reaps idle sessions and gives their memory back every second or so; a busy
    machine takes longer, so this polls rather than sleeping a fixed time.
    """
    until = time.monotonic() + deadline
    while (rss := rss_kib(pid)) > limit and time.monotonic() < until:
        time.sleep(0.2)
    return rss


@pytest.mark.long
def test_two_thousand_abandoned_sessions_give_their_memory_back(spawn) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    proc = spawn(
        [
            PYTHON,
            MANAGE,
            "runmcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--apps",
            "anki_bridge",
        ],
        MCP_HTTP_SESSION_IDLE_SECONDS=str(IDLE_SECONDS),
        DJANGO_LOG_LEVEL="WARNING",  # the pipe nobody reads must not fill up with INFO lines
    )
    url = f"http://127.0.0.1:{port}/mcp"
    wait_for_http(url, proc)
    fresh = rss_kib(proc.pid)
    # Warm up: the first sessions load code and grow the allocator's pools once. They are
    # still alive when the baseline is read, so it is the most the 2,000 may leave behind.
    asyncio.run(open_sessions(url, 200))
    start = rss_kib(proc.pid)

    ids = asyncio.run(open_sessions(url, SESSIONS))
    assert len(set(ids)) == SESSIONS
    peak = rss_kib(proc.pid)
    # the sessions did take memory while they lived: more than the process held before any
    # (not more than `start`: on a busy machine opening the 2,000 outlasts the idle time, and
    # the server reaps the first of them, and the warm-up's, while the last are opened: two
    # CPU hogs beside the suite read 149,504 KiB at the peak against 149,596 at the start)
    assert peak > fresh

    untouched = expired(url, ids)
    after = rss_falls_to(proc.pid, int(start * 1.10))
    assert after <= start * 1.10, (
        f"RSS start {start} KiB, peak {peak} KiB, after expiry {after} KiB"
    )

    # An expired session is gone: using it is refused, a new one works.
    assert refused(url, untouched[0])
    assert asyncio.run(open_sessions(url, 1))
