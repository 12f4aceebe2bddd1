"""Resources, prompts and completion over the real transports (issue 16): the SDK client
against `manage.py runmcp` on stdio and on streamable HTTP, on the suite's database, with
the СДАМ ГИА stand-in on 127.0.0.1."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference
from PIL import Image

from core.identity import configured_user
from normagpt.models import AgentRun, NormDocument, NormPage
from tests.conftest import MANAGE, PYTHON, ROOT, free_port, orm, subprocess_env, wait_for_http
from tests.problems.blocks import block
from tests.problems.fake_site import FakeSite, serve
from tests.problems.test_crawl_and_admin import CATALOG
from tests.prompt_script import follow, plan
from tests.test_mcp_http import http_client

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
CONDITION = "Найдите площадь прямоугольного треугольника с катетами 3 и 4."


@pytest.fixture
def world(tmp_path: Path, settings, subprocess_db_env) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    site = FakeSite(search_engine=True)
    server, template = serve(site)
    site.add_page("math-ege", "/prob_catalog", {}, CATALOG)
    site.add_problem("math-ege", "27340", block("27340", CONDITION, answer="6"))
    settings.MEDIA_ROOT = tmp_path
    document = NormDocument.objects.create(code="СП 63.13330.2018", title="Бетонные конструкции")
    page = NormPage.objects.create(
        document=document, number=2, text="10.3.2 Минимальная толщина", clauses=["10.3.2"]
    )
    picture = io.BytesIO()
    Image.new("RGB", (60, 80), "white").save(picture, "JPEG")
    page.image.save("p2.jpg", ContentFile(picture.getvalue()))
    person = get_user_model().objects.create_user("engineer", password="pw-123456")
    yield {
        "env": {
            **subprocess_db_env,
            "SDAMGIA_URL_TEMPLATE": template,
            "SDAMGIA_MIN_INTERVAL": "0",
            "DJANGO_MEDIA_ROOT": str(tmp_path),
        },
        "document": document,
        "page": page,
        "theirs": AgentRun.objects.create(question=QUESTION, user=person),  # not started
    }
    server.shutdown()
    server.server_close()


def run_of(username: str) -> AgentRun:
    """A run (not started) of the user an MCP client acts as."""
    return AgentRun.objects.create(question=QUESTION, user=configured_user(username))


async def exercise(client: Client, world: dict[str, Any], ours: AgentRun) -> None:
    document, page = world["document"], world["page"]
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    reads = {
        "sdamgia://{subject}/{exam}/problem/{id}": ("sdamgia://math/ege/problem/27340", CONDITION),
        "sdamgia://{subject}/{exam}/catalog": ("sdamgia://math/ege/catalog", "Прямоугольный"),
        "norms://document/{id}": (f"norms://document/{document.pk}", f"norms://page/{page.pk}"),
        "norms://page/{id}": (f"norms://page/{page.pk}", "10.3.2"),
        "normagpt://run/{id}": (f"normagpt://run/{ours.public_id}", "queued"),
    }
    # anki://deck/{name} needs a running Anki (tests/anki_bridge/test_review.py); a variant
    # is read in tests/problems/test_variants.py, its sheet in test_sheet_delivery.py, an
    # Anki package in tests/anki_bridge/test_packages.py
    assert templates == {
        *reads, "norms://page/{id}/image", "anki://deck/{name}", "sdamgia://variant/{id}",
        "anki://package/{id}",
        "sdamgia://variant/{id}/pdf{?copies}", "sdamgia://variant/{id}/pdf/solutions{?copies}",
        "sdamgia://variant/{id}/pdf/sheets{?copies}", "sdamgia://variant/{id}/pdf/key{?copies}",
    }  # fmt: skip
    for uri, expected in reads.values():
        assert expected in (await client.read_resource(uri)).contents[0].text, uri  # type: ignore[union-attr]
    image = (await client.read_resource(f"norms://page/{page.pk}/image")).contents[0]
    assert Image.open(io.BytesIO(base64.b64decode(image.blob))).size == (60, 80)  # type: ignore[union-attr]
    with pytest.raises(MCPError) as hidden:
        await client.read_resource(f"normagpt://run/{world['theirs'].public_id}")
    assert hidden.value.error.code == -32002
    with pytest.raises(MCPError) as missing:
        await client.read_resource("norms://document/987654")
    assert "987654" in missing.value.error.message

    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert prompts == {"problems_to_flashcards", "find_problem_from_text", "ask_norms",
                       "daily_challenge_brief", "review_session"}  # fmt: skip
    asked = await client.get_prompt("ask_norms", {"question": QUESTION})
    assert [tool for tool, _ in plan(asked.messages[0].content.text)] == ["normagpt_ask"]  # type: ignore[union-attr]
    found = await client.get_prompt(
        "find_problem_from_text", {"subject": "math", "text": CONDITION}
    )

    def decide(tool: str, result: Any, values: dict[str, Any]) -> None:
        if tool == "sdamgia_search_by_text":
            values["id of the best match"] = result.structured_content["matches"][0]["id"]
        else:
            assert result.structured_content["answer"] == "6"

    called = await follow(client, found.messages[0].content.text, decide)  # type: ignore[union-attr]
    assert called == ["sdamgia_search_by_text", "sdamgia_get_problem"]

    flashcards = PromptReference(type="ref/prompt", name="problems_to_flashcards")
    assert (
        await client.complete(flashcards, {"name": "subject", "value": "инф"})
    ).completion.values[0] == "inf"
    category = await client.complete(
        flashcards, {"name": "category_id", "value": "Парал"}, context_arguments={"subject": "math"}
    )
    assert category.completion.values == ["90"]
    norms = PromptReference(type="ref/prompt", name="ask_norms")
    codes = await client.complete(norms, {"name": "expected_documents", "value": "СП"})
    assert codes.completion.values == ["СП 63.13330.2018"]


async def test_over_stdio(world) -> None:  # type: ignore[no-untyped-def]
    env = subprocess_env(**world["env"], MCP_STDIO_USER="desktop")
    parameters = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp"], cwd=str(ROOT), env=env
    )
    async with Client(parameters, read_timeout_seconds=60) as client:
        await exercise(client, world, await orm(run_of, "desktop"))


async def test_over_streamable_http(world, spawn) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    command = [PYTHON, MANAGE, "runmcp", "--transport", "http", "--port", str(port)]
    proc = spawn(command, **world["env"], MCP_HTTP_TOKEN="")
    wait_for_http(f"http://127.0.0.1:{port}/mcp", proc)
    async with http_client(f"http://127.0.0.1:{port}/mcp") as client:  # loopback, no token
        await exercise(client, world, await orm(run_of, "mcp"))  # MCP_HTTP_TOKEN_USER's
