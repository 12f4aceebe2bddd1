"""The MCP adapter through the SDK client, in process: schemas, errors, annotations."""

from __future__ import annotations

import logging

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from core.exceptions import NotFound, UpstreamError
from core.mcp_server import build_server, build_tool, load_registries
from core.registry import ToolRegistry
from tests.conftest import text_of
from tests.hints import hints

pytestmark = pytest.mark.anyio


async def test_greet_is_listed_with_name_required_and_no_extra_arguments() -> None:
    async with Client(build_server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    greet = tools["greet"]
    assert greet.input_schema["required"] == ["name"]
    assert greet.input_schema["additionalProperties"] is False
    assert hints(greet).read_only is True
    assert hints(greet).open_world is False


async def test_greet_answers_with_the_seed_text() -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool("greet", {"name": "Алиса"})
    assert not result.is_error
    assert text_of(result) == "Привет, Алиса! Я твой MCP-сервер."


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "name: required argument missing"),
        ({"name": "Алиса", "mood": "happy"}, "mood: unknown argument"),
        ({"name": 4.2}, "name: Input should be a valid string"),
        ({"name": True}, "name: Input should be a valid string"),
        ({"name": ""}, "name: String should have at least 1 character"),
        ({"name": "   "}, "name must not be empty or whitespace"),
    ],
)
async def test_bad_arguments_are_tool_errors_naming_the_field(
    arguments: dict[str, object], expected: str
) -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool("greet", arguments)
    assert result.is_error
    assert expected in text_of(result)


async def test_an_integer_is_taken_as_text_where_only_text_is_accepted() -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool("greet", {"name": 42})
    assert not result.is_error
    assert text_of(result) == "Привет, 42! Я твой MCP-сервер."


def crashing_server(registry: ToolRegistry) -> MCPServer:
    return MCPServer("test", tools=[build_tool(spec) for spec in registry.specs])


async def test_domain_errors_reach_the_model_verbatim_and_crashes_stay_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry(app="demo", title="Demo")

    @registry.tool(read_only=True, open_world=False)
    def missing() -> str:
        """Raises a domain error."""
        raise NotFound("problem 42 does not exist on math-ege")

    @registry.tool(read_only=True, open_world=True)
    async def upstream() -> str:
        """Raises an upstream error from an async tool."""
        raise UpstreamError("sdamgia.ru answered 503", service="sdamgia")

    @registry.tool(read_only=True, open_world=False)
    def crash() -> str:
        """Fails with an unexpected error."""
        raise RuntimeError("secret internal detail")

    caplog.set_level(logging.ERROR, logger="core.mcp_server")
    async with Client(crashing_server(registry)) as client:
        missing_result = await client.call_tool("missing", {})
        upstream_result = await client.call_tool("upstream", {})
        crash_result = await client.call_tool("crash", {})

    assert text_of(missing_result) == "problem 42 does not exist on math-ege"
    assert text_of(upstream_result) == "sdamgia.ru answered 503"
    assert crash_result.is_error
    assert "secret internal detail" not in text_of(crash_result)
    assert "Internal error in tool crash" in text_of(crash_result)
    logged = [r for r in caplog.records if r.exc_info]
    assert logged
    assert "secret internal detail" in str(logged[0].exc_info[1])


def test_a_tool_name_registered_twice_is_refused() -> None:
    registry = ToolRegistry(app="demo", title="Demo")
    registry.tool(name="x", read_only=True, open_world=False)(lambda: "a")
    with pytest.raises(ValueError, match="registered twice"):
        registry.tool(name="x", read_only=True, open_world=False)(lambda: "b")


def test_apps_subset_and_unknown_app() -> None:
    assert [r.app for r in load_registries(["anki_bridge"])] == ["anki_bridge"]
    assert {r.app for r in load_registries()} == {"problems", "anki_bridge", "ojclient", "normagpt"}
    with pytest.raises(ValueError, match="unknown app\\(s\\) nosuch; apps with MCP tools: "):
        load_registries(["nosuch"])


async def test_text_arguments_keep_their_text_and_json_lists_are_still_decoded() -> None:
    registry = ToolRegistry(app="echo", title="Echo")

    @registry.tool(name="echo", read_only=True, open_world=False, structured_output=False)
    def echo(key: str | None = None, flag: str = "", items: list[int] | None = None) -> str:
        return f"{key!r} {flag!r} {items!r}"

    async with Client(crashing_server(registry)) as client:
        result = await client.call_tool("echo", {"key": "null", "flag": "true", "items": "[1, 2]"})
        assert text_of(result) == "'null' 'true' [1, 2]"
        result = await client.call_tool("echo", {"key": "0"})
        assert text_of(result) == "'0' '' None"
