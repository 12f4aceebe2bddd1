"""The MCP helpers every app shares (core/tooling.py), and that no app keeps its own copy."""

from __future__ import annotations

import ast

from pydantic import BaseModel, TypeAdapter

from core.tooling import Format, respond, respond_json
from tests.conftest import ROOT
from tests.test_architecture import APPS


class Sample(BaseModel):
    name: str
    note: str | None = None


def test_respond_gives_the_asked_format_and_the_data() -> None:
    data = {"id": "27340", "title": "Задача"}

    markdown = respond(data, "# Задача", "markdown")
    as_json = respond(data, "# Задача", "json")

    assert markdown.content[0].text == "# Задача"  # type: ignore[union-attr]
    assert as_json.content[0].text == '{"id": "27340", "title": "Задача"}'  # type: ignore[union-attr]
    assert markdown.structured_content == as_json.structured_content == data


def test_respond_json_is_compact_and_leaves_out_unset_fields() -> None:
    result = respond_json(Sample(name="Алиса"))

    assert result.content[0].text == '{"name":"Алиса"}'  # type: ignore[union-attr]
    assert result.structured_content == {"name": "Алиса"}


def test_format_is_a_plain_enum_that_says_it_all() -> None:
    schema = TypeAdapter(Format).json_schema()

    assert schema["enum"] == ["markdown", "json"]
    assert "description" not in schema  # the two values need none: tools/list stays short


def test_no_app_keeps_its_own_copy_of_the_helpers() -> None:
    shared = {"respond", "respond_json", "thread_progress", "Format"}
    copies = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("mcp_tools.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                targets = [node.name] if isinstance(node, ast.FunctionDef) else []
                if isinstance(node, ast.Assign):
                    targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
                copies += [
                    f"{path.relative_to(ROOT)}: {name}" for name in targets if name in shared
                ]
    assert not copies, "import these from core.tooling instead:\n" + "\n".join(copies)
