"""docs/tools.md, the MCP tool reference, made from the recorded `tools/list` answers.

`core/mcp_catalog.json` is what the assembled server answers (tests/test_mcp_catalog.py
holds it to the code); this page is that file read for people: each app's tools in the
server's order, with their hints, descriptions and arguments. `manage.py runmcp
--write-catalog` (`make catalog`) writes both, in a checkout (an installed package has no
docs/), so the page cannot drift from the registry: tests/test_readme.py fails while the
page differs from what this gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "tools.md"
HINTS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "reaches outside",
}
HEAD = """# MCP tools

[← README and the map of the docs](../README.md#the-documentation)

Every tool the server lists, by app, in the server's order, as `tools/list` gives it (the
output schemas left out). Made from `core/mcp_catalog.json` by `python manage.py runmcp
--write-catalog` (`make catalog`), with the catalog: do not edit by hand.
"""


def reference_text(catalog: dict[str, Any]) -> str:
    parts = [HEAD]
    for app in catalog["apps"]:
        tools = catalog["tools"][app]
        parts.append(f"\n## `{app}` ({len(tools)} tools)\n")
        parts.extend(_tool(tool) for tool in tools)
    return "".join(parts)


def _tool(tool: dict[str, Any]) -> str:
    hints = [label for key, label in HINTS.items() if tool.get("annotations", {}).get(key)]
    title = tool.get("title") or tool.get("annotations", {}).get("title") or ""
    lines = [f"\n### `{tool['name']}`" + (f": {title}" if title else "") + "\n"]
    if hints:
        lines.append(f"\n*{', '.join(hints)}*\n")
    lines.append("\n" + tool.get("description", "").strip() + "\n")
    schema = tool.get("inputSchema", {})
    required = set(schema.get("required", []))
    arguments = schema.get("properties", {})
    if arguments:
        lines.append("\n| argument | type | |\n| --- | --- | --- |\n")
        for name, spec in arguments.items():
            lines.append(f"| `{name}` | {_type(spec, name in required)} | {_cell(spec)} |\n")
    return "".join(lines)


def _type(spec: dict[str, Any], required: bool) -> str:
    kind = spec.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array":
        kind = f"array of {spec.get('items', {}).get('type', 'any')}"
    if "enum" in spec:
        kind += ": " + ", ".join(f"`{value}`" for value in spec["enum"])
    low, high = spec.get("minimum"), spec.get("maximum")
    if low is not None or high is not None:
        kind += (
            f" {low}–{high}"
            if None not in (low, high)
            else f" ≥ {low}"
            if high is None
            else f" ≤ {high}"
        )
    if "maxLength" in spec:
        kind += f", up to {spec['maxLength']} characters"
    if "maxItems" in spec:
        kind += f", up to {spec['maxItems']} items"
    if required:
        return kind + ", required"
    if "default" in spec:
        return kind + f", default `{json.dumps(spec['default'], ensure_ascii=False)}`"
    return kind


def _cell(spec: dict[str, Any]) -> str:
    text = " ".join(str(spec.get("description", "")).split())
    return text.replace("|", "\\|")


def reference_write(catalog: dict[str, Any]) -> Path | None:
    """The page written for `catalog`; None (nothing written) outside a checkout."""
    if not PAGE.parent.is_dir():
        return None
    PAGE.write_text(reference_text(catalog), encoding="utf-8")
    return PAGE
