"""End to end over streamable HTTP: `runmcp --transport http` and the project's ASGI app."""

from __future__ import annotations

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import MANAGE, PYTHON, free_port, orm, text_of, wait_for_http

pytestmark = pytest.mark.anyio

TOKEN = "test-token-8c1f0e"


def http_client(url: str, token: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(
        url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)
    )
    return Client(transport, read_timeout_seconds=30)


async def exercise_greet(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["greet"].input_schema["required"] == ["name"]
    ok = await client.call_tool("greet", {"name": "Алиса"})
    assert text_of(ok) == "Привет, Алиса! Я твой MCP-сервер."
    missing = await client.call_tool("greet", {})
    assert missing.is_error
    assert "name: required argument missing" in text_of(missing)
    extra = await client.call_tool("greet", {"name": "Алиса", "x": 1})
    assert extra.is_error
    assert "x: unknown argument" in text_of(extra)


def start_runmcp(spawn, port: int, host: str = "127.0.0.1", token: str = "", **env: str):  # type: ignore[no-untyped-def]
    proc = spawn(
        [PYTHON, MANAGE, "runmcp", "--transport", "http", "--host", host, "--port", str(port)],
        MCP_HTTP_TOKEN=token,
        **env,
    )
    wait_for_http(f"http://127.0.0.1:{port}/mcp", proc)
    return proc


async def test_runmcp_http_on_loopback_without_token(spawn) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    start_runmcp(spawn, port)
    async with http_client(f"http://127.0.0.1:{port}/mcp") as client:
        await exercise_greet(client)


async def test_runmcp_http_with_token_refuses_requests_without_it(spawn) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    start_runmcp(spawn, port, token=TOKEN)
    url = f"http://127.0.0.1:{port}/mcp"
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        response = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
        )
        assert response.status_code == 401
        assert "Authorization: Bearer" in response.json()["message"]
        assert response.headers["www-authenticate"].startswith("Bearer")
    async with http_client(url, token=TOKEN) as client:
        await exercise_greet(client)


@pytest.mark.django_db(transaction=True)
async def test_runmcp_http_beyond_loopback_needs_a_users_token_or_the_shared_one(
    spawn, subprocess_db_env
) -> None:  # type: ignore[no-untyped-def]
    from tests.test_mcp_identity import alice_key

    key = await orm(alice_key)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    # No shared token: users' API tokens only (a deployment of users needs no shared one).
    port = free_port()
    start_runmcp(spawn, port, host="0.0.0.0", **subprocess_db_env)
    url = f"http://127.0.0.1:{port}/mcp"
    without = httpx.post(url, json=ping)
    assert without.status_code == 503
    assert "POST /api/auth/token/" in without.json()["message"]
    wrong = httpx.post(url, json=ping, headers={"Authorization": "Bearer wrong"})
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"].startswith("Bearer")
    async with http_client(url, token=key) as client:
        await exercise_greet(client)

    port = free_port()
    start_runmcp(spawn, port, host="0.0.0.0", token=TOKEN, **subprocess_db_env)
    url = f"http://127.0.0.1:{port}/mcp"
    assert httpx.post(url, json={}, headers={}).status_code == 401
    for token in (TOKEN, key):
        async with http_client(url, token=token) as client:
            await exercise_greet(client)


async def test_asgi_app_serves_pages_api_and_mcp_in_one_process(spawn) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    proc = spawn(
        [
            PYTHON,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        MCP_HTTP_TOKEN="",
    )
    base = f"http://127.0.0.1:{port}"
    wait_for_http(f"{base}/healthz", proc)
    home = httpx.get(f"{base}/")
    assert home.status_code == 200
    assert "greet" in home.text
    assert httpx.get(f"{base}/api/").status_code == 200
    assert httpx.get(f"{base}/admin/login/").status_code == 200
    async with http_client(f"{base}/mcp") as client:
        await exercise_greet(client)
