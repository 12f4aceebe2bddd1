"""A scripted model that follows a prompt's plan: each step names a tool and its JSON
arguments; `<...>` placeholders are filled from earlier answers by the test."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

STEP = re.compile(r"^\d+\. `([\w.]+)` (\{.*\})(?: — .*)?$")


def plan(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The (tool, arguments) of each numbered step of a prompt's message."""
    steps = []
    for line in text.splitlines():
        match = STEP.match(line.strip())
        if match:
            steps.append((match.group(1), json.loads(match.group(2))))
    return steps


def fill(arguments: Any, values: dict[str, Any]) -> Any:
    """`arguments` with each `<placeholder>` replaced by `values[placeholder]`; an object
    in a list whose placeholder stands for several values becomes one object per value."""
    if isinstance(arguments, str) and arguments.startswith("<") and arguments.endswith(">"):
        return values[arguments[1:-1]]
    if isinstance(arguments, list):
        return [filled for item in arguments for filled in _each(item, values)]
    if isinstance(arguments, dict):
        return {key: fill(value, values) for key, value in arguments.items()}
    return arguments


def _each(item: Any, values: dict[str, Any]) -> list[Any]:
    if isinstance(item, dict):
        for key, value in item.items():
            if isinstance(value, str) and isinstance(values.get(value.strip("<>")), list):
                return [{**fill(item, {**values, value.strip("<>"): one}), key: one}
                        for one in values[value.strip("<>")]]  # fmt: skip
    return [fill(item, values)]


async def follow(
    client: Any,
    text: str,
    decide: Callable[[str, Any, dict[str, Any]], None],
) -> list[str]:
    """Call each step's tool in turn; after each answer `decide(tool, result, values)` may
    set the placeholders the next steps need. The tools called, in order."""
    values: dict[str, Any] = {}
    called = []
    for tool, arguments in plan(text):
        result = await client.call_tool(tool, fill(arguments, values))
        assert not result.is_error, (tool, result.content)
        called.append(tool)
        decide(tool, result, values)
    return called
