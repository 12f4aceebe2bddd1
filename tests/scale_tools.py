"""A long tool that reports its progress (multi-process MCP tests and bench only)."""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import Context
from pydantic import Field

from core.registry import ToolRegistry

registry = ToolRegistry(app="scale", title="Scale test")


@registry.tool(title="Slow count", read_only=True, open_world=False)
async def slow_count(
    steps: Annotated[int, Field(description="How many steps to count.", ge=1, le=20)] = 5,
    pause: Annotated[float, Field(description="Seconds between steps.", ge=0, le=2)] = 0.4,
    ctx: Context | None = None,
) -> str:
    """Counts to `steps`, reporting progress after each step, then says how far it got."""
    for step in range(1, steps + 1):
        await anyio.sleep(pause)
        if ctx is not None:
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted to {steps}"
