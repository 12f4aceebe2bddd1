"""MCP over HTTP across processes: two uvicorn processes behind a round-robin proxy.

The proxy (`tests/rr_proxy.py`) sends each request to the next process, as a balancer
without sticky sessions does. A client on the handshake-era protocol (`initialize`, then
a session id on every request: what clients released before 2026-07-28 speak) works there
only with `MCP_HTTP_STATELESS=1`; a 2026-07-28 client keeps no session, so any process
answers it either way.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from starlette.types import Receive, Scope, Send

from tests.conftest import PYTHON, free_port, text_of, wait_for_http
from tests.rr_proxy import STATS_PATH

TOKEN = "scale-token-5d02a1"
GREETINGS = 19  # and one long call: 20 calls
STEPS = 5
LEGACY = "legacy"  # the `initialize` handshake and a session id
MODERN = "auto"  # SDK 2.3 negotiates 2026-07-28 with this server: no session at all


@dataclass
class Deployment:
    """Backends behind the proxy; `url` is the proxy's /mcp."""

    url: str
    stats_url: str

    def served(self) -> list[int]:
        """Requests each backend has received through the proxy."""
        return list(httpx.get(self.stats_url).json().values())


@dataclass
class Session:
    """What one client saw: the negotiated version, tools, results, progress reports."""

    protocol: str = ""
    tools: set[str] = field(default_factory=set)
    answers: list[str] = field(default_factory=list)
    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)


def deploy(spawn, db_env: dict[str, str], *, stateless: bool, processes: int = 2) -> Deployment:  # type: ignore[no-untyped-def]
    """`processes` uvicorn processes of the project's ASGI app, one database, and the proxy."""
    ports = [free_port() for _ in range(processes)]
    backends = [
        spawn(
            [PYTHON, "-m", "uvicorn", "config.asgi:application", "--port", str(port),
             "--log-level", "warning"],
            DJANGO_SETTINGS_MODULE="tests.settings_scale",
            MCP_HTTP_STATELESS="1" if stateless else "0",
            MCP_HTTP_TOKEN=TOKEN,
            DJANGO_LOG_LEVEL="WARNING",  # nobody reads the pipes: keep them from filling
            **db_env,
        )
        for port in ports
    ]  # fmt: skip
    proxy_port = free_port()
    targets = [arg for port in ports for arg in ("--backend", f"http://127.0.0.1:{port}")]
    proxy = spawn([PYTHON, "-m", "tests.rr_proxy", "--port", str(proxy_port), *targets])
    for port, backend in zip(ports, backends, strict=True):
        wait_for_http(f"http://127.0.0.1:{port}/healthz", backend)
    base = f"http://127.0.0.1:{proxy_port}"
    wait_for_http(base + STATS_PATH, proxy)
    return Deployment(url=f"{base}/mcp", stats_url=base + STATS_PATH)


async def twenty_calls(url: str, mode: str) -> Session:
    """Connect, list the tools, greet 19 times and make one long call with progress."""
    seen = Session()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.progress.append((progress, total, message))

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, read_timeout_seconds=30, mode=mode) as client:
        seen.protocol = client.session.protocol_version or ""
        seen.tools = {tool.name for tool in (await client.list_tools()).tools}
        for i in range(GREETINGS):
            result = await client.call_tool("greet", {"name": f"Алиса {i}"})
            assert not result.is_error, text_of(result)
            seen.answers.append(text_of(result))
        long = await client.call_tool(
            "slow_count", {"steps": STEPS, "pause": 0.3}, progress_callback=on_progress
        )
        assert not long.is_error, text_of(long)
        seen.answers.append(text_of(long))
    return seen


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def assert_all_served(seen: Session) -> None:
    assert {"greet", "slow_count"} <= seen.tools
    greetings = [f"Привет, Алиса {i}! Я твой MCP-сервер." for i in range(GREETINGS)]
    assert seen.answers == [*greetings, f"counted to {STEPS}"]
    assert seen.progress == [(i, STEPS, f"step {i} of {STEPS}") for i in range(1, STEPS + 1)]


@pytest.mark.django_db(transaction=True)
def test_stateless_processes_behind_round_robin_serve_every_client(
    spawn, subprocess_db_env
) -> None:  # type: ignore[no-untyped-def]
    deployment = deploy(spawn, subprocess_db_env, stateless=True)

    legacy = asyncio.run(twenty_calls(deployment.url, LEGACY))
    assert legacy.protocol < "2026"  # initialized with the handshake
    assert_all_served(legacy)
    first, second = deployment.served()
    assert min(first, second) > 0, "each request goes to the next process"
    assert abs(first - second) <= 1

    modern = asyncio.run(twenty_calls(deployment.url, MODERN))
    assert modern.protocol >= "2026"
    assert_all_served(modern)


@pytest.mark.django_db(transaction=True)
def test_without_stateless_mode_the_next_process_does_not_know_the_session(  # type: ignore[no-untyped-def]
    spawn, subprocess_db_env
) -> None:
    deployment = deploy(spawn, subprocess_db_env, stateless=False)

    # The process that answered `initialize` holds the session; the next request goes to
    # the other one, which answers 404 "Session not found", and the client gives up.
    with pytest.raises(ExceptionGroup) as failure:
        asyncio.run(twenty_calls(deployment.url, LEGACY))
    refusals = [(type(error), str(error)) for error in leaves(failure.value)]
    assert refusals == [(MCPError, "Session not found")]

    # A 2026-07-28 client has no session to lose: any process answers it.
    assert_all_served(asyncio.run(twenty_calls(deployment.url, MODERN)))


# The proxy itself: faithful, per request, streaming.


class Echo:
    """A backend that answers with what it received, and a stream that waits for its reader."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.first_chunk_read = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if scope["path"] == "/stream":
            await self.stream(send)
            return
        echo = {
            "backend": self.name,
            "method": scope["method"],
            "path": scope["path"],
            "query": scope["query_string"].decode(),
            "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
            "body": body.decode(),
        }
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s-42")]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(echo).encode()})

    async def stream(self, send: Send) -> None:
        """The second event says whether the reader had the first one before it was sent:
        a proxy that buffered the response would make that impossible."""
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"data: one\n\n", "more_body": True})
        read = await asyncio.to_thread(self.first_chunk_read.wait, 15)
        second = b"data: two\n\n" if read else b"data: buffered\n\n"
        await send({"type": "http.response.body", "body": second})


@pytest.fixture
def echo_backends() -> Iterator[list[tuple[str, Echo]]]:
    """Two echo backends on their own threads: [(base URL, app)]."""
    servers = []
    for name in ("a", "b"):
        app = Echo(name)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=free_port(), log_level="warning", lifespan="off"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread, app, f"http://127.0.0.1:{config.port}"))
    for server, _, _, _ in servers:
        while not server.started:
            threading.Event().wait(0.05)
    yield [(url, app) for _, _, app, url in servers]
    for server, thread, app, _ in servers:
        app.first_chunk_read.set()
        server.should_exit = True
        thread.join(timeout=10)


def test_the_proxy_passes_each_request_to_the_next_backend_unchanged(spawn, echo_backends) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    targets = [arg for url, _ in echo_backends for arg in ("--backend", url)]
    proxy = spawn([PYTHON, "-m", "tests.rr_proxy", "--port", str(port), *targets])
    base = f"http://127.0.0.1:{port}"
    wait_for_http(base + STATS_PATH, proxy)
    sent = {
        "Authorization": "Bearer t",
        "Mcp-Session-Id": "s-1",
        "Mcp-Protocol-Version": "2025-11-25",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    seen: list[dict[str, Any]] = []
    with httpx.Client(base_url=base, headers=sent) as client:  # one kept-alive connection
        for method in ("POST", "GET", "DELETE", "POST"):
            content = b'{"jsonrpc": "2.0"}' if method == "POST" else b""
            response = client.request(method, "/mcp?x=1", content=content)
            assert response.status_code == 201
            assert response.headers["mcp-session-id"] == "s-42"
            seen.append(response.json())
    assert [echo["backend"] for echo in seen] == ["a", "b", "a", "b"]
    for echo, method in zip(seen, ("POST", "GET", "DELETE", "POST"), strict=True):
        assert (echo["method"], echo["path"], echo["query"]) == (method, "/mcp", "x=1")
        assert {k.lower(): v for k, v in sent.items()}.items() <= echo["headers"].items()
        assert echo["headers"]["host"] == f"127.0.0.1:{port}"
    assert seen[0]["body"] == '{"jsonrpc": "2.0"}'
    assert httpx.get(base + STATS_PATH).json() == {url: 2 for url, _ in echo_backends}

    # The stream reaches the reader event by event (the next request goes to "a").
    events = []
    with httpx.stream("GET", f"{base}/stream", timeout=30) as response:
        assert response.headers["content-type"] == "text/event-stream"
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(line)
                echo_backends[0][1].first_chunk_read.set()
    assert events == ["data: one", "data: two"]
