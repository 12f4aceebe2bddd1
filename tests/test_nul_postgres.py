"""U+0000 on PostgreSQL, where it matters (issue 54, item 2): PostgreSQL refuses a NUL in
any text column or comparison with a DataError, which a tool reported as "Internal error"
and the NormaGPT forms as a 500. Here the tool arguments and the forms carry one to a real
PostgreSQL and get the error naming the field. On SQLite, which stores a NUL without
complaint, there is nothing to show: skipped (CI runs the suite on PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from mcp import Client

from core.mcp_server import build_server
from normagpt.models import AgentRun
from tests.conftest import text_of

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="only PostgreSQL refuses a NUL in text (DATABASE_URL is not postgres://)",
    ),
    pytest.mark.django_db(transaction=True),
]

QUESTION = "Какая минимальная толщина защитного слоя бетона?"
CALLS = [
    ("normagpt_search_norms", {"keywords": ["защитный", "сл\x00ой"]}, "keywords.1"),
    ("normagpt_ask", {"question": QUESTION + "\x00", "wait_seconds": 0}, "question"),
    ("normagpt_reply", {"run_id": "r\x00", "answer": "да"}, "run_id"),
    ("resolve_problem", {"query": "two\x00sum"}, "query"),
    ("get_problem", {"source": "leetcode", "id": "two-sum\x00"}, "id"),
    ("sdamgia_search_problems", {"subject": "math", "query": "корень\x00"}, "query"),
    ("sdamgia_check_variant", {"variant": "v\x00", "answers": {"1": "4"}}, "variant"),
    ("anki.find_notes", {"query": "deck:\x00"}, "query"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments", "field"), CALLS, ids=[c[0] for c in CALLS])
async def test_a_tool_argument_with_a_nul_is_named_not_an_internal_error(
    tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = text_of(result)
    assert text.startswith(f"Invalid arguments for {tool}: {field}: text contains a NUL"), text
    assert "Internal error" not in text


@pytest.fixture
def asker(django_user_model):  # type: ignore[no-untyped-def]
    return django_user_model.objects.create_user("asker", password="pw-asker-4821")


def test_the_ask_form_names_the_question(client, asker) -> None:  # type: ignore[no-untyped-def]
    client.force_login(asker)
    page = client.post("/normagpt/", {"question": QUESTION + "\x00"})
    assert page.status_code == 200
    assert "question: text contains a NUL character" in page.content.decode()
    assert AgentRun.objects.count() == 0


def test_the_reply_form_names_the_answer(client, asker) -> None:  # type: ignore[no-untyped-def]
    run = AgentRun.objects.create(question=QUESTION, user=asker)
    client.force_login(asker)
    sent = client.post(f"/normagpt/runs/{run.public_id}/reply/", {"answer": "да\x00"})
    assert sent.status_code == 302
    assert "answer: text contains a NUL character" in client.get(sent["Location"]).content.decode()
