"""End to end over stdio: the SDK's client spawns `manage.py runmcp`."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of

pytestmark = pytest.mark.anyio


def runmcp(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", *args], cwd=str(ROOT), env=subprocess_env()
    )


async def test_stdio_lists_greet_and_calls_it() -> None:
    async with Client(runmcp(), read_timeout_seconds=60) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "greet" in tools
        assert tools["greet"].input_schema["required"] == ["name"]

        ok = await client.call_tool("greet", {"name": "Алиса"})
        assert not ok.is_error
        assert text_of(ok) == "Привет, Алиса! Я твой MCP-сервер."

        missing = await client.call_tool("greet", {})
        assert missing.is_error
        assert "name: required argument missing" in text_of(missing)

        extra = await client.call_tool("greet", {"name": "Алиса", "lang": "ru"})
        assert extra.is_error
        assert "lang: unknown argument" in text_of(extra)


async def test_stdio_apps_subset_exposes_only_those_tools() -> None:
    async with Client(runmcp("--apps", "problems"), read_timeout_seconds=60) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert "greet" not in names
