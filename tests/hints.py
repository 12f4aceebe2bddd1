"""A tool's behaviour hints as a client reads them: the MCP spec's value where one is absent."""

from __future__ import annotations

from dataclasses import dataclass

from mcp_types import Tool, ToolAnnotations


@dataclass(frozen=True)
class Hints:
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


def hints(tool: Tool) -> Hints:
    given = tool.annotations or ToolAnnotations()

    def read(value: bool | None, absent: bool) -> bool:
        return absent if value is None else value

    return Hints(
        read_only=read(given.read_only_hint, False),
        destructive=read(given.destructive_hint, True),
        idempotent=read(given.idempotent_hint, False),
        open_world=read(given.open_world_hint, True),
    )
