"""Resources, prompts and completion over the real transports (issue 16): the SDK client
against `manage.py runmcp` on stdio and on streamable HTTP, on the suite's database."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference

from normagpt.models import AgentRun, NormDocument, NormPage
from tests.conftest import MANAGE, PYTHON, ROOT, free_port, subprocess_env, wait_for_http
from tests.prompt_script import plan
from tests.test_mcp_http import http_client

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"


@pytest.fixture
def stored(db):  # type: ignore[no-untyped-def]
    document = NormDocument.objects.create(code="СП 63.13330.2018", title="Бетонные конструкции")
    page = NormPage.objects.create(
        document=document,
        number=2,
        text="10.3.2 Минимальная толщина защитного слоя",
        clauses=["10.3.2"],
    )
    person = get_user_model().objects.create_user("engineer", password="pw-123456")
    theirs = AgentRun.objects.create(question=QUESTION, user=person)  # not started
    return document, page, theirs


async def exercise(client: Client, document: NormDocument, page: NormPage, theirs: int) -> None:
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert {"norms://document/{id}", "norms://page/{id}", "normagpt://run/{id}",
            "sdamgia://{subject}/{exam}/problem/{id}"} <= templates  # fmt: skip
    read = (await client.read_resource(f"norms://document/{document.pk}")).contents[0]
    assert f"norms://page/{page.pk}" in read.text  # type: ignore[union-attr]
    assert "10.3.2" in (await client.read_resource(f"norms://page/{page.pk}")).contents[0].text  # type: ignore[union-attr]
    with pytest.raises(MCPError) as hidden:
        await client.read_resource(f"normagpt://run/{theirs}")
    assert hidden.value.error.code == -32002
    with pytest.raises(MCPError) as missing:
        await client.read_resource("norms://document/987654")
    assert "987654" in missing.value.error.message

    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert prompts == {"problems_to_flashcards", "find_problem_from_text", "ask_norms",
                       "daily_challenge_brief"}  # fmt: skip
    asked = await client.get_prompt("ask_norms", {"question": QUESTION})
    assert [tool for tool, _ in plan(asked.messages[0].content.text)] == ["normagpt_ask"]  # type: ignore[union-attr]

    flashcards = PromptReference(type="ref/prompt", name="problems_to_flashcards")
    assert (
        await client.complete(flashcards, {"name": "subject", "value": "инф"})
    ).completion.values[0] == "inf"
    norms = PromptReference(type="ref/prompt", name="ask_norms")
    codes = await client.complete(norms, {"name": "expected_documents", "value": "СП"})
    assert codes.completion.values == ["СП 63.13330.2018"]


async def test_over_stdio(stored, subprocess_db_env) -> None:  # type: ignore[no-untyped-def]
    document, page, theirs = stored
    parameters = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp"], cwd=str(ROOT),
        env=subprocess_env(**subprocess_db_env),
    )  # fmt: skip
    async with Client(parameters, read_timeout_seconds=60) as client:
        await exercise(client, document, page, theirs.pk)


async def test_over_streamable_http(stored, subprocess_db_env, spawn) -> None:  # type: ignore[no-untyped-def]
    document, page, theirs = stored
    port = free_port()
    proc = spawn(
        [PYTHON, MANAGE, "runmcp", "--transport", "http", "--port", str(port)], **subprocess_db_env
    )
    wait_for_http(f"http://127.0.0.1:{port}/mcp", proc)
    async with http_client(f"http://127.0.0.1:{port}/mcp") as client:
        await exercise(client, document, page, theirs.pk)
