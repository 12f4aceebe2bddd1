"""The problem tools end to end: `manage.py runmcp --apps problems` over stdio."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from problems.models import Problem
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of
from tests.problems.blocks import block

pytestmark = pytest.mark.django_db(transaction=True)


async def exchange(params: StdioServerParameters) -> tuple[set[str], Any, Any]:
    async with Client(params, read_timeout_seconds=60) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool(
            "sdamgia_get_problem", {"subject": "информатика", "exam": "oge", "problem_id": "314"}
        )
        refused = await client.call_tool(
            "sdamgia_get_problem", {"subject": "mathb", "exam": "oge", "problem_id": "314"}
        )
    return names, result, refused


def test_get_problem_over_stdio_stores_into_the_database(
    fake_site, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem(
        "inf-oge", "314", block("314", "Сколько единиц в записи числа 255?", answer="8")
    )
    env = subprocess_env(
        **subprocess_db_env,
        SDAMGIA_URL_TEMPLATE=settings.SDAMGIA_URL_TEMPLATE,
        SDAMGIA_MIN_INTERVAL="0",
    )
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "problems"], cwd=str(ROOT), env=env
    )
    names, result, refused = asyncio.run(exchange(params))
    # the seeds' seven, search by image, and the workbench: check an answer, make, print
    # and grade a variant, a random problem
    assert len(names) == 13
    assert "## Answer\n8" in text_of(result)
    assert refused.is_error
    assert "exists only for ege" in text_of(refused)
    assert Problem.objects.get(subject="inf", exam="oge", problem_id="314").answer == "8"
