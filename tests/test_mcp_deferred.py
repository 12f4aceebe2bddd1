"""Tools built when first used, `tools/list` answered from the catalog (core.mcp_deferred):
a session that calls one tool builds that one, and lists what a server building every
tool lists, byte for byte; a catalog that no longer matches the tools is not served."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from mcp import Client

from core import mcp_catalog, mcp_deferred
from core.mcp_deferred import DeferredTools
from core.mcp_server import build_server, tool_specs
from core.stdio_early import CATALOG_PATH
from tests.conftest import text_of

pytestmark = pytest.mark.anyio


async def test_a_session_builds_only_the_tool_it_calls() -> None:
    server = build_server()
    tools = server._tool_manager
    assert isinstance(tools, DeferredTools)
    assert tools.built == []
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        assert [tool.name for tool in listed] == [spec.name for spec in tool_specs()]
        assert tools.built == []  # the catalog's list
        result = await client.call_tool("greet", {"name": "Алиса"})
        unknown = await client.call_tool("no_such_tool", {})
    assert text_of(result) == "Привет, Алиса! Я твой MCP-сервер."
    assert unknown.is_error
    assert "Unknown tool: no_such_tool" in text_of(unknown)
    assert tools.built == ["greet"]


@pytest.mark.parametrize("apps", [None, ["ojclient", "normagpt"]])
async def test_the_recorded_list_is_the_one_a_server_building_every_tool_writes(
    apps: list[str] | None,
) -> None:
    recorded = build_server(apps)
    assert recorded.listed is not None
    answers = [
        await mcp_catalog._answers(server)
        for server in (recorded, build_server(apps, recorded=False))
    ]
    assert answers[0]["lines"]["tools/list"] == answers[1]["lines"]["tools/list"]
    assert answers[0]["lines"]["initialize"] == answers[1]["lines"]["initialize"]


@pytest.mark.parametrize("change", ["description", "name", "argument", "missing file"])
async def test_a_catalog_not_matching_the_tools_served_is_not_listed(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    first = catalog["tools"]["ojclient"][0]
    if change == "missing file":
        path = tmp_path / "absent.json"
    elif change == "argument":  # an argument renamed, `make catalog` not run
        properties = first["inputSchema"]["properties"]
        properties["an_older_name"] = properties.pop(next(iter(properties)))
        path = tmp_path / "mcp_catalog.json"
        path.write_text(json.dumps(catalog), encoding="utf-8")
    else:
        first[change] = "an older " + change  # a tool changed, `make catalog` not run
        path = tmp_path / "mcp_catalog.json"
        path.write_text(json.dumps(catalog), encoding="utf-8")
    monkeypatch.setattr(mcp_deferred, "CATALOG_PATH", path)
    caplog.set_level(logging.WARNING, logger="core.mcp_deferred")
    server = build_server(["ojclient"])
    assert server.listed is None
    assert "tools/list is built" in caplog.text
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
    specs = tool_specs(["ojclient"])
    assert [(t.name, t.description) for t in listed] == [(s.name, s.description) for s in specs]
    assert server._tool_manager.built == [spec.name for spec in specs]


def test_the_schema_an_http_request_s_headers_are_checked_against_builds_its_tool() -> None:
    """The SDK checks a `tools/call`'s `Mcp-Param-*` headers against the tool's argument
    schema before dispatch (`get_tool_input_schema`): an unbuilt tool is built for it."""
    server = build_server(["anki_bridge"])
    lookup = server._lowlevel_server.get_tool_input_schema
    assert lookup is not None
    schema = lookup("greet")
    assert schema is not None
    assert schema["required"] == ["name"]
    assert server._tool_manager.built == ["greet"]
    assert lookup("no_such_tool") is None


async def test_a_tool_added_besides_the_registries_is_listed_with_the_others() -> None:
    server = build_server(["ojclient"])

    def echo(text: str) -> str:
        """Echo."""
        return text

    server.add_tool(echo)
    async with Client(server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == [*(spec.name for spec in tool_specs(["ojclient"])), "echo"]
