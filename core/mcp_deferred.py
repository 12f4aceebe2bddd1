"""The server's tools built when first used, and `tools/list` answered from the catalog.

Building the SDK's tool objects (each tool's argument model, its strict twin, their JSON
schemas) took some 0.2 s of CPU a process: a sixth of `runmcp`'s start, paid by every
desktop session and by every server the suite spawns, most of which call one or two tools.
`DeferredTools` builds a tool the first time the SDK looks it up (a call, or the argument
schema an HTTP request's `Mcp-Param-*` headers are checked against), and all of them, in
the registries' order, when the SDK lists them.

`tools/list` itself is answered from the catalog (`core/mcp_catalog.json`): the very
answer the assembled server gives, recorded by `manage.py runmcp --write-catalog`; a test
fails while the file differs from what the code gives (tests/test_mcp_early.py). Should the
file not match the tools served (another name, title, description or set of arguments: a
tool changed and the catalog not written), the server builds its tools and lists them
itself.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.tools.tool_manager import ToolManager
from mcp_types import Tool as ListedTool

from core.registry import ToolSpec
from core.stdio_early import CATALOG_PATH, catalog_served

logger = logging.getLogger(__name__)


class DeferredTools(ToolManager):
    """The SDK's tool manager, each tool built from its spec when first looked up."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        build: Callable[[ToolSpec], Tool],
        *,
        warn_on_duplicate_tools: bool = True,
    ) -> None:
        super().__init__(warn_on_duplicate_tools)
        self._specs = {spec.name: spec for spec in specs}
        self._build = build

    def get_tool(self, name: str) -> Tool | None:
        tool = super().get_tool(name)
        spec = self._specs.get(name)
        if tool is None and spec is not None:
            tool = self._build(spec)
            self._tools[name] = tool
        return tool

    def list_tools(self) -> list[Tool]:
        """Every tool, in the registries' order (then any the SDK was given besides)."""
        ordered = [tool for name in self._specs if (tool := self.get_tool(name)) is not None]
        return [*ordered, *(t for name, t in self._tools.items() if name not in self._specs)]

    @property
    def built(self) -> list[str]:
        """The names of the tools built so far."""
        return list(self._tools)

    @property
    def added(self) -> bool:
        """Whether a tool was added besides the specs (`MCPServer.add_tool`): the catalog
        does not list it."""
        return any(name not in self._specs for name in self._tools)


def recorded_tools(specs: Sequence[ToolSpec], apps: Sequence[str]) -> list[ListedTool] | None:
    """The catalog's `tools/list` entries of `apps`' tools, as the server would list them;
    None when the catalog cannot be read or does not match `specs` (then the server lists
    what it builds)."""
    try:
        served = catalog_served(json.loads(CATALOG_PATH.read_bytes()), list(apps))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("tools/list is built, not read from the catalog (%s)", exc)
        return None
    entries = served[2] if served is not None else []
    if [_identity(entry) for entry in entries] != [_identity_of(spec) for spec in specs]:
        logger.warning(
            "core/mcp_catalog.json does not match the tools served (run `make catalog`): "
            "tools/list is built"
        )
        return None
    return [ListedTool.model_validate(entry) for entry in entries]


def _identity(entry: dict[str, Any]) -> tuple[Any, ...]:
    """What the catalog says of a tool that its spec tells without building it."""
    arguments = entry.get("inputSchema", {}).get("properties", {})
    return entry.get("name"), entry.get("title"), entry.get("description"), frozenset(arguments)


def _identity_of(spec: ToolSpec) -> tuple[Any, ...]:
    """`_identity` of the tool `spec` would build: its arguments are its function's
    parameters but the request context the SDK passes (`Context`)."""
    parameters = inspect.signature(spec.fn).parameters.items()
    arguments = frozenset(n for n, p in parameters if "Context" not in str(p.annotation))
    return spec.name, spec.title, spec.description, arguments
