"""The MCP adapter on the SDK's public API: text ids, schemas for strict clients, pins."""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Annotated, Any, Literal

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ErrorData
from packaging.version import Version
from pydantic import BaseModel, ConfigDict, Field

from core.mcp_arguments import RAW_ARGUMENTS, ToolArguments, schema_for_strict_clients
from core.mcp_server import build_server, build_tool
from core.registry import ToolRegistry
from tests.conftest import text_of

FORBIDDEN = {"anyOf", "oneOf", "allOf", "$ref", "$defs", "nullable"}


class Ref(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject: str
    id: Annotated[str, Field(pattern=r"^\d+$")]


class Image(BaseModel):
    url: str | None = None
    side: int = 768


class Note(BaseModel):
    fields: dict[str, str]
    images: list[Image] = []
    key: str | None = None


def ids_registry() -> ToolRegistry:
    registry = ToolRegistry(app="ids", title="Ids")

    @registry.tool(name="show", read_only=True, open_world=False, structured_output=False)
    def show(
        problem_id: Annotated[str, Field(pattern=r"^\d{1,20}$")],
        ids: list[str] | None = None,
        refs: list[Ref] | None = None,
        count: int = 0,
        either: str | int | None = None,
        kind: Literal["1", "2"] | None = None,
    ) -> str:
        return repr((problem_id, ids, [r.id for r in refs or []], count, either, kind))

    return registry


def server_of(registry: ToolRegistry) -> MCPServer:
    return MCPServer("test", tools=[build_tool(spec) for spec in registry.specs])


def forbidden_keys(node: Any, path: str = "") -> list[str]:
    """Every schema keyword of FORBIDDEN anywhere in `node` (property names excluded)."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in FORBIDDEN:
                found.append(f"{path}/{key}")
            if key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    found += forbidden_keys(prop, f"{path}/properties/{name}")
            else:
                found += forbidden_keys(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += forbidden_keys(item, f"{path}/{index}")
    return found


@pytest.mark.anyio
async def test_integers_are_accepted_as_text_ids_and_nothing_else_is_coerced() -> None:
    async with Client(server_of(ids_registry())) as client:
        ints = await client.call_tool(
            "show",
            {
                "problem_id": 27340,
                "ids": [1, "2"],
                "refs": [{"subject": "math", "id": 7}],
                "count": 3,
                "either": 5,
                "kind": 2,
            },
        )
        as_bool = await client.call_tool("show", {"problem_id": True})
        as_float = await client.call_tool("show", {"problem_id": 1.5})
        huge = await client.call_tool("show", {"problem_id": 10**25})
    assert not ints.is_error, text_of(ints)
    # text where only text is accepted; an int stays an int where an int is accepted
    assert text_of(ints) == "('27340', ['1', '2'], ['7'], 3, 5, '2')"
    assert "problem_id: Input should be a valid string" in text_of(as_bool)
    assert "problem_id: Input should be a valid string" in text_of(as_float)
    assert "problem_id: String should match pattern" in text_of(huge)


@pytest.mark.anyio
async def test_no_registered_tool_has_anyof_ref_or_nullable_at_any_depth() -> None:
    async with Client(build_server()) as client:
        tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} >= {"greet", "sdamgia_get_problem", "get_problem"}
    offenders = {tool.name: forbidden_keys(tool.input_schema) for tool in tools}
    assert {name: keys for name, keys in offenders.items() if keys} == {}


def test_nested_models_are_inlined_and_optional_fields_flattened() -> None:
    class Arguments(BaseModel):
        notes: list[Note | dict[str, Any]]
        one: Note | None = None
        mode: Literal["a"] | Literal["b"] = "a"

    schema = schema_for_strict_clients(Arguments.model_json_schema())
    assert forbidden_keys(schema) == []
    item = schema["properties"]["notes"]["items"]
    assert item["type"] == "object"
    assert item["additionalProperties"] is True  # the dict branch accepts any object
    assert set(item["properties"]) == {"fields", "images", "key"}
    image = item["properties"]["images"]["items"]
    assert image["properties"]["url"]["type"] == "string"
    assert "default" not in image["properties"]["url"]
    assert image["properties"]["side"]["default"] == 768
    assert schema["properties"]["one"]["type"] == "object"
    assert schema["properties"]["one"]["required"] == ["fields"]
    assert schema["properties"]["mode"]["enum"] == ["a", "b"]


def test_a_recursive_model_is_refused_rather_than_inlined_forever() -> None:
    class Tree(BaseModel):
        children: list[Tree] = []

    with pytest.raises(ValueError, match="recursive schema 'Tree'"):
        schema_for_strict_clients(Tree.model_json_schema())


@pytest.mark.anyio
async def test_a_protocol_error_raised_by_a_tool_stays_a_protocol_error() -> None:
    registry = ToolRegistry(app="demo", title="Demo")

    @registry.tool(read_only=True, open_world=False)
    def refuse() -> str:
        """Raises an MCPError."""
        raise MCPError.from_error_data(ErrorData(code=INVALID_PARAMS, message="no such thing"))

    async with Client(server_of(registry)) as client:
        with pytest.raises(MCPError, match="no such thing"):
            await client.call_tool("refuse", {})


# --- Pins: what the adapter relies on in the SDK (fail loudly when mcp changes it) ------


def test_the_sdk_is_the_2_x_line_the_adapter_was_written_against() -> None:
    assert Version("2.3") <= Version(version("mcp")) < Version("3")


def test_tool_run_hands_validate_arguments_result_to_the_function() -> None:
    """`Tool.run` calls `fn_metadata.validate_arguments(arguments)` and passes what it
    returns to `fn` as keyword arguments (via `call_fn`): the guard receives the raw
    arguments under RAW_ARGUMENTS and validates them itself."""
    run = inspect.getsource(Tool.run)
    assert "self.fn_metadata.validate_arguments(arguments)" in run
    assert "self.fn_metadata.call_fn(self.fn, self.is_async, validated, pass_directly)" in run
    assert "def validate_arguments(self, arguments_to_validate" in inspect.getsource(FuncMetadata)
    assert "def pre_parse_json(self, data" in inspect.getsource(FuncMetadata)
    assert ToolArguments.validate_arguments.__qualname__ == "ToolArguments.validate_arguments"
    assert set(Tool.model_fields) >= {"fn", "fn_metadata", "parameters", "context_kwarg"}


@pytest.mark.anyio
async def test_a_built_tool_runs_through_the_sdk_tool_run() -> None:
    tool = build_tool(ids_registry().specs[0])
    assert tool.fn_metadata.validate_arguments({"x": 1}) == {RAW_ARGUMENTS: {"x": 1}}
    result = await tool.run({"problem_id": 12}, context=None, convert_result=True)  # type: ignore[arg-type]
    assert not result.is_error
    assert result.content[0].text == "('12', None, [], 0, None, None)"
    refused = await tool.run({"problem_id": 12, "x": 1}, context=None, convert_result=True)  # type: ignore[arg-type]
    assert refused.is_error
    assert refused.content[0].text == (
        "Invalid arguments for show: x: unknown argument (not accepted by this tool)"
    )


class Counted(BaseModel):
    changed: list[int]


@pytest.mark.anyio
async def test_a_shape_declared_by_another_tool_is_not_repeated_but_still_checked() -> None:
    registry = ToolRegistry(app="cards", title="Cards")

    @registry.tool(name="suspend", read_only=False, open_world=False, output_model=Counted)
    def suspend(card: int) -> CallToolResult:
        """Suspend a card."""
        return CallToolResult(content=[], structured_content={"changed": [card]})

    @registry.tool(
        name="forget",
        read_only=False,
        open_world=False,
        output_model=Counted,
        shape_of="suspend",
    )
    def forget(card: int) -> CallToolResult:
        """Forget a card; the result as suspend gives it (a wrong shape for card 0)."""
        changed: list[object] = [card] if card else ["not an id"]
        return CallToolResult(content=[], structured_content={"changed": changed})

    async with Client(server_of(registry)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        right = await client.call_tool("forget", {"card": 5})
        wrong = await client.call_tool("forget", {"card": 0})
    assert listed["suspend"].output_schema is not None
    assert listed["forget"].output_schema is None  # declared once, by suspend
    assert not right.is_error
    assert right.structured_content == {"changed": [5]}
    assert wrong.is_error  # the result is still checked against the shared model
