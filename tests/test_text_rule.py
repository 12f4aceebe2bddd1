"""One text rule at every entry point (issue 54, item 2): a NUL or a lone surrogate is
refused naming the field before any query (PostgreSQL refuses a NUL with a DataError, a
500 or "Internal error" once the text reaches a query)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from core.mcp_arguments import RAW_ARGUMENTS
from core.mcp_server import build_tool, tool_specs
from core.text_rule import text_fault
from tests.conftest import text_of


def test_the_fault_names_where_the_text_is() -> None:
    assert text_fault({"a": ["ok", {"b": "x\x00"}]}).field == "a.1.b"  # type: ignore[union-attr]
    surrogate = text_fault({"q": "\ud800"})
    assert surrogate is not None
    assert (surrogate.field, surrogate.rule) == ("q", "text_surrogate")
    assert text_fault({"k\x00": 1}).field == "k\\u0000"  # type: ignore[union-attr]
    assert text_fault({"q": "бетон", "n": [1, None, True]}) is None


@contextmanager
def no_query_sees(text: str) -> Iterator[list[str]]:
    """Every query on this thread's connection, failing the one whose parameters hold
    `text` (as PostgreSQL would)."""
    seen: list[str] = []

    def check(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append(sql)
        assert text not in json.dumps(params, default=str, ensure_ascii=False), sql
        return execute(sql, params, many, context)

    with connection.execute_wrapper(check):
        yield seen


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("arguments", "field", "rule"),
    [
        ({"keywords": ["защитный\x00слой"]}, "keywords.0", "NUL character"),
        (
            {"keywords": ["слой"], "expected_documents": ["СП\ud800"]},
            "expected_documents.0",
            "lone surrogate",
        ),
    ],
)
def test_a_tool_argument_is_refused_naming_it_before_any_query(
    arguments: dict[str, Any], field: str, rule: str
) -> None:
    (spec,) = [spec for spec in tool_specs(["normagpt"]) if spec.name == "normagpt_search_norms"]
    tool = build_tool(spec)
    with no_query_sees("\x00") as queries:
        result = tool.fn(**{RAW_ARGUMENTS: arguments})
    assert result.is_error
    assert text_of(result).startswith(f"Invalid arguments for normagpt_search_norms: {field}: ")
    assert rule in text_of(result)
    assert queries == []


@pytest.mark.django_db
def test_rest_names_the_field_too(client) -> None:  # type: ignore[no-untyped-def]
    body = b'{"problem_ids": ["1", "a\\u0000b"]}'
    response = client.generic(
        "POST", "/api/problems/math/ege/batch/", body, content_type="application/json"
    )
    assert response.status_code == 400
    error = response.json()
    assert error["extra"] == {"rule": "text_nul", "field": "problem_ids.1"}
    assert error["message"].startswith("request body: problem_ids.1: text contains a NUL")
