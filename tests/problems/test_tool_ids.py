"""Models send numeric ids as JSON numbers: the sdamgia_* tools take them as text ids."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from core.mcp_server import build_server
from tests.conftest import text_of
from tests.problems.blocks import block

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]


def client() -> Client:
    return Client(build_server(["problems"]), read_timeout_seconds=30)


async def test_an_integer_problem_id_is_accepted_where_a_text_id_is_declared(fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem("math-ege", "27340", block("27340", "Найдите косинус угла A."))
    fake_site.add_problem("math-ege", "33999", block("33999", "Найдите синус угла B."))
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        one = await c.call_tool("sdamgia_get_problem", {"subject": "math", "problem_id": 27340})
        batch = await c.call_tool(
            "sdamgia_batch_get_problems",
            {"subject": "math", "problem_ids": [27340, "33999"], "response_format": "json"},
        )
        floating = await c.call_tool(
            "sdamgia_get_problem", {"subject": "math", "problem_id": 27340.0}
        )
    assert tools["sdamgia_get_problem"].input_schema["properties"]["problem_id"]["type"] == "string"
    assert not one.is_error, text_of(one)
    assert text_of(one).startswith("# Problem 27340 (math-ege)")
    assert not batch.is_error, text_of(batch)
    assert "33999" in json.dumps(json.loads(text_of(batch)))
    assert floating.is_error  # only integers are ids; 27340.0 is not taken for one
    assert "problem_id: Input should be a valid string" in text_of(floating)
