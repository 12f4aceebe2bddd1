"""One schema for MCP and REST (issue 50, item 6).

The REST API validates a variant's and a batch's body with the pydantic types the MCP tools
validate their arguments with: `"tasks": [false]` or `"tasks": 1` is a 400 naming the field
and the rule, as it is a tool error naming them, never a 500. Ids are ASCII digits: other
scripts' digits («١٢٣», fullwidth «１２３»), which a pattern's `\\d` lets through, are refused
naming the field, and the site is never asked for them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from mcp import Client
from rest_framework.test import APIClient

from core.mcp_server import build_server
from problems.models import Variant
from tests.conftest import text_of

ARABIC_INDIC = "١٢٣"  # 123 in Arabic-Indic digits
FULLWIDTH = "１２３"  # 123 in fullwidth digits
TASKS_RULE = 'must be {"task number": count} (task numbers of 1–3 digits 0-9, counts 1–20)'
VARIANTS = "/api/problems/math/ege/variants/"


@pytest.fixture
def teacher() -> APIClient:
    api = APIClient()
    api.force_authenticate(get_user_model().objects.create_user(username="t", password="x"))
    return api


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"tasks": [False]}, "tasks", f'tasks: {TASKS_RULE} or "full", got [false]'),
        ({"tasks": 1}, "tasks", f'tasks: {TASKS_RULE} or "full", got 1'),
        ({"tasks": "all"}, "tasks", f'tasks: {TASKS_RULE} or "full", got "all"'),
        ({"tasks": {ARABIC_INDIC: 1}}, "tasks", f'got {{"{ARABIC_INDIC}": 1}}'),
        ({"tasks": {"1": 0}}, "tasks", 'got {"1": 0}'),
        ({}, "tasks", "tasks: required"),
        ({"tasks": "full", "seed": -1}, "seed", "seed: Input should be greater than or equal to 0"),
        ({"tasks": "full", "source": "web"}, "source", "source: Input should be 'bank' or 'site'"),
        ({"tasks": "full", "count": 3}, "count", "count: unknown field (not accepted)"),
    ],
)
def test_a_variant_body_against_the_tools_schema_is_a_400_naming_field_and_rule(
    teacher: APIClient, body: dict[str, Any], field: str, rule: str
) -> None:
    response = teacher.post(VARIANTS, body, format="json")
    assert response.status_code == 400, response.content
    error = response.json()
    assert error["code"] == "invalid_input"
    assert rule in error["message"], error
    assert error["extra"]["field"] == field
    assert not Variant.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("digits", [ARABIC_INDIC, FULLWIDTH])
def test_over_rest_an_id_of_other_digits_is_refused_and_never_sent(fake_site, digits) -> None:  # type: ignore[no-untyped-def]
    api = APIClient()
    batch = api.post(
        "/api/problems/math/ege/batch/", {"problem_ids": ["27340", digits]}, format="json"
    )
    assert batch.status_code == 400, batch.content
    assert batch.json()["message"] == f'problem_ids.1: must be ASCII digits 0-9, got "{digits}"'
    assert batch.json()["extra"]["field"] == "problem_ids"
    for path, field in [(f"{digits}/", "problem_id"), (f"categories/{digits}/", "category_id")]:
        response = api.get(f"/api/problems/math/ege/{path}")
        assert response.status_code == 400, (path, response.content)
        assert response.json()["message"] == f"{field} must be 1–20 digits 0-9, got '{digits}'"
    assert fake_site.requests == []


async def _calls(calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
        return [await client.call_tool(name, {"subject": "math", **args}) for name, args in calls]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("digits", [ARABIC_INDIC, FULLWIDTH])
def test_over_mcp_an_id_of_other_digits_is_a_tool_error_naming_the_field(fake_site, digits) -> None:  # type: ignore[no-untyped-def]
    results = asyncio.run(
        _calls(
            [
                ("sdamgia_get_problem", {"problem_id": digits}),
                ("sdamgia_batch_get_problems", {"problem_ids": ["1", digits]}),
                ("sdamgia_check_answer", {"problem_id": digits, "answer": "5"}),
                ("sdamgia_get_test", {"test_id": digits}),
            ]
        )
    )
    wheres = ["problem_id", "problem_ids.1", "problem_id", "test_id"]
    for result, where in zip(results, wheres, strict=True):
        assert result.is_error
        assert f'{where}: must be ASCII digits 0-9, got "{digits}"' in text_of(result)
    assert fake_site.requests == []


@pytest.mark.django_db(transaction=True)
def test_over_mcp_a_variants_tasks_break_the_same_rule_as_over_rest(fake_site) -> None:  # type: ignore[no-untyped-def]
    results = asyncio.run(
        _calls(
            [
                ("sdamgia_make_variant", {"tasks": [False]}),
                ("sdamgia_make_variant", {"tasks": {ARABIC_INDIC: 1}}),
            ]
        )
    )
    assert [r.is_error for r in results] == [True, True]
    assert f'tasks: {TASKS_RULE} or "full", got [false]' in text_of(results[0])
    assert f'got {{"{ARABIC_INDIC}": 1}}' in text_of(results[1])
    assert fake_site.requests == []
