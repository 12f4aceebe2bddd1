"""MCP logging (issue 54, item 1): the server declares `logging`, honours
`logging/setLevel` per connection and sends the records of a client's requests at or above
its level as `notifications/message`, in process, on stdio and on streamable HTTP (stateful
and stateless); stateless HTTP neither offers nor accepts `resources/subscribe`."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import LoggingMessageNotificationParams

from core.mcp_errors import STATELESS_SUBSCRIBE_TEXT
from core.mcp_server import build_server
from tests.conftest import MANAGE, PYTHON, ROOT, free_port, subprocess_env, wait_for_http

pytestmark = [
    pytest.mark.anyio,
    # `logging/setLevel` is the handshake era's (SEP-2577 deprecates it at 2026-07-28).
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

WAIT_SECONDS = 20.0
MISSING = "Invalid arguments for greet: name: required argument missing"


class Logs:
    """The `notifications/message` a client received."""

    def __init__(self) -> None:
        self.received: list[LoggingMessageNotificationParams] = []
        self.arrived = anyio.Event()

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        self.received.append(params)
        self.arrived.set()

    async def first(self) -> LoggingMessageNotificationParams:
        with anyio.fail_after(WAIT_SECONDS):
            await self.arrived.wait()
        return self.received[0]


async def levels_honoured(client: Client, logs: Logs) -> None:
    """No level, no messages; `info` brings a failed call's record; `error` stops it."""
    assert client.server_capabilities.logging is not None
    await client.call_tool("greet", {})
    await client.set_logging_level("error")
    await client.call_tool("greet", {})  # logged at info: below the level
    await client.set_logging_level("info")
    await client.call_tool("greet", {})
    message = await logs.first()
    assert (message.level, message.logger) == ("info", "core.mcp_server")
    assert MISSING in str(message.data)
    assert len(logs.received) == 1  # nothing from the calls before


async def test_in_process_the_level_decides_what_is_sent() -> None:
    logs = Logs()
    server = build_server(["anki_bridge"])
    async with Client(server, logging_callback=logs, mode="legacy") as client:
        await levels_honoured(client, logs)


async def test_a_2026_client_asks_per_request_in_its_meta() -> None:
    logs = Logs()
    server = build_server(["anki_bridge"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        async with Client(server, logging_callback=logs, log_level="warning") as client:
            await client.call_tool("greet", {})  # info: below what the request asks
        async with Client(server, logging_callback=logs, log_level="debug") as client:
            await client.call_tool("greet", {})
            message = await logs.first()
    assert message.level == "info"
    assert len(logs.received) == 1


async def test_over_stdio() -> None:
    logs = Logs()
    parameters = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "anki_bridge"], cwd=str(ROOT),
        env=subprocess_env(),
    )  # fmt: skip
    async with Client(
        parameters, logging_callback=logs, mode="legacy", read_timeout_seconds=60
    ) as client:
        await levels_honoured(client, logs)


@asynccontextmanager
async def http_server(spawn: Any, *, stateless: bool) -> AsyncIterator[str]:
    port = free_port()
    command = [PYTHON, MANAGE, "runmcp", "--transport", "http", "--port", str(port),
               "--apps", "anki_bridge,normagpt"]  # fmt: skip
    proc = spawn(command, MCP_HTTP_TOKEN="", MCP_HTTP_STATELESS="1" if stateless else "0")
    wait_for_http(f"http://127.0.0.1:{port}/", proc)  # a 404 (a stateless GET /mcp waits)
    yield f"http://127.0.0.1:{port}/mcp"


def logged_client(url: str, logs: Logs) -> Client:
    transport = streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=30))
    return Client(transport, read_timeout_seconds=30, logging_callback=logs, mode="legacy")


async def test_over_stateful_http_a_session_keeps_its_level(spawn) -> None:  # type: ignore[no-untyped-def]
    logs = Logs()
    async with (
        http_server(spawn, stateless=False) as url,
        logged_client(url, logs) as client,
    ):
        await levels_honoured(client, logs)
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe is True


async def test_over_stateless_http_subscribe_is_not_offered_and_is_refused(spawn) -> None:  # type: ignore[no-untyped-def]
    """Each request is its own session: a level lasts for its request, and no connection
    is left to notify of a resource's updates, so subscribing is refused saying why."""
    logs = Logs()
    async with (
        http_server(spawn, stateless=True) as url,
        logged_client(url, logs) as client,
    ):
        assert client.server_capabilities.logging is not None
        await client.set_logging_level("debug")  # accepted (for its own request)
        resources = client.server_capabilities.resources
        assert resources is not None
        assert not resources.subscribe
        with pytest.raises(MCPError) as refused:
            await client.subscribe_resource("normagpt://run/abc")
        assert refused.value.error.code == -32601
        assert refused.value.error.message == STATELESS_SUBSCRIBE_TEXT
