"""Norm documents, pages and runs as resources; the ask_norms prompt; code completion
(issue 16), through the SDK client."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest
from django.contrib.auth import get_user_model
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference
from PIL import Image

from core.identity import stdio_caller
from core.mcp_server import build_server
from normagpt.models import AgentRun, NormDocument, NormPage
from tests.conftest import orm, text_of
from tests.normagpt.scripted_llm import ANSWER, straight_script
from tests.prompt_script import follow, plan

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"


def client() -> Client:
    """In process there is no HTTP request: the client acts as the stdio user."""
    return Client(build_server(["normagpt"]), read_timeout_seconds=60)


async def local_run() -> AgentRun:
    """A run of the in-process client's user (MCP_STDIO_USER), not started."""
    return await orm(lambda: AgentRun.objects.create(question=QUESTION, user=stdio_caller()))


async def test_a_document_its_page_and_the_page_image_read_as_resources(corpus) -> None:  # type: ignore[no-untyped-def]
    document = await NormDocument.objects.aget(code="СП 63.13330.2018")
    page = await NormPage.objects.aget(document=document, number=2)
    async with client() as c:
        listed = (await c.read_resource(f"norms://document/{document.pk}")).contents[0]
        text = (await c.read_resource(f"norms://page/{page.pk}")).contents[0]
        image = (await c.read_resource(f"norms://page/{page.pk}/image")).contents[0]
    assert "# СП 63.13330.2018" in listed.text  # type: ignore[union-attr]
    assert f"norms://page/{page.pk}" in listed.text  # type: ignore[union-attr]
    assert "10.3.2" in text.text  # type: ignore[union-attr]
    assert f"http://127.0.0.1:8000/normagpt/pages/{page.pk}/" in text.text  # type: ignore[union-attr]
    assert image.mime_type == "image/jpeg"
    import base64

    assert Image.open(io.BytesIO(base64.b64decode(image.blob))).format == "JPEG"  # type: ignore[union-attr]


async def test_unknown_ids_are_protocol_errors_naming_them(corpus) -> None:  # type: ignore[no-untyped-def]
    async with client() as c:
        for uri, code in [
            ("norms://document/999999", -32002),
            ("norms://page/999999", -32002),
            ("normagpt://run/999999", -32002),
            ("normagpt://run/AbCdEfGhIjKlMnOpQrStUv", -32002),
            ("norms://page/12ab", -32602),
        ]:
            with pytest.raises(MCPError) as failed:
                await c.read_resource(uri)
            assert failed.value.error.code == code, uri
            assert uri.rsplit("/", 1)[-1] in failed.value.error.message


async def test_anothers_run_is_not_readable_over_mcp_but_the_callers_own_is(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**straight_script())
    person = await get_user_model().objects.acreate_user("engineer", password="pw-123456")
    theirs = await AgentRun.objects.acreate(question=QUESTION, user=person)  # not started
    nobodys = await AgentRun.objects.acreate(question=QUESTION)  # made before runs had owners
    async with client() as c:
        for hidden_run in (theirs, nobodys):
            with pytest.raises(MCPError) as hidden:
                await c.read_resource(f"normagpt://run/{hidden_run.public_id}")
            assert hidden.value.error.code == -32002
            assert hidden_run.public_id in hidden.value.error.message
            refused = await c.call_tool("normagpt_get_run", {"run_id": hidden_run.public_id})
            assert refused.is_error
            assert f"run {hidden_run.public_id} does not exist" in text_of(refused)
        asked = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 30})
        run_id = asked.structured_content["run_id"]  # type: ignore[index]
        ours = (await c.read_resource(f"normagpt://run/{run_id}")).contents[0]
    assert isinstance(run_id, str)
    assert not run_id.isdigit()
    run = await AgentRun.objects.select_related("user").aget(public_id=run_id)
    assert run.user.username == "local"  # MCP_STDIO_USER: in process as over stdio
    assert ANSWER in ours.text  # type: ignore[union-attr]
    assert f"/normagpt/runs/{run_id}/" in ours.text  # type: ignore[union-attr]


async def test_a_cancelled_ask_lets_its_worker_thread_go(
    corpus, llm, monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    """A client that cancels `normagpt_ask` (or whose session ends) frees the server's
    worker thread at once, not when `wait_seconds` runs out: forty such calls held every
    thread of an HTTP server, and no other user's request got in."""
    import time

    from normagpt import mcp_tools

    ended: list[float] = []
    waiting = mcp_tools.run_wait

    def run_wait(*args: Any) -> Any:
        try:
            return waiting(*args)
        finally:
            ended.append(time.monotonic())

    monkeypatch.setattr(mcp_tools, "run_wait", run_wait)
    settings.NORMAGPT_LLM_TIMEOUT = settings.NORMAGPT_NODE_BUDGET = 120  # the run stays busy
    llm.play(planner=[{"hang": True}])
    try:
        async with client() as c:
            started = time.monotonic()
            with anyio.move_on_after(1.5):
                await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 120})
            with anyio.fail_after(60):  # a busy machine's deadline, not the 120 s asked
                while not ended:
                    await anyio.sleep(0.05)
        # cancelled at 1.5 s; the model hangs 60 s, the call would wait 120 s
        assert ended[0] - started < 15
    finally:
        llm.release()


async def test_ask_norms_leads_a_model_to_the_search_and_the_agent(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**straight_script())
    async with client() as c:
        prompt = await c.get_prompt(
            "ask_norms", {"question": QUESTION, "expected_documents": "СП 63.13330.2018"}
        )
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert "п. 10.3.2" in text  # the instruction to cite clauses
        answers: dict[str, Any] = {}

        def decide(tool: str, result: Any, values: dict[str, Any]) -> None:
            answers[tool] = result.structured_content

        plan_text = text.replace("<2–4 key phrases of the question>", "защитный слой бетона")
        called = await follow(c, plan_text, decide)
        english = await c.get_prompt("ask_norms", {"question": QUESTION, "language": "en"})
    assert called == ["normagpt_search_norms", "normagpt_ask"]
    assert answers["normagpt_search_norms"]["hits"][0]["document"] == "СП 63.13330.2018"
    assert answers["normagpt_ask"]["answer"].startswith(ANSWER[:20])
    assert [tool for tool, _ in plan(english.messages[0].content.text)] == ["normagpt_ask"]  # type: ignore[union-attr]


async def test_document_codes_complete(corpus) -> None:  # type: ignore[no-untyped-def]
    ref = PromptReference(type="ref/prompt", name="ask_norms")
    async with client() as c:
        found = await c.complete(ref, {"name": "expected_documents", "value": "сп 63"})
    assert found.completion.values[0] == "СП 63.13330.2018"


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # the older clients' way
async def test_a_subscribed_run_notifies_its_changes_until_it_is_done() -> None:
    run = await local_run()
    uri = f"normagpt://run/{run.public_id}"
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        message = getattr(message, "root", message)
        if getattr(message, "method", "") == "notifications/resources/updated":
            updates.append(str(message.params.uri))

    async def wait_for(count: int) -> None:
        with anyio.fail_after(10):
            while len(updates) < count:
                await anyio.sleep(0.05)

    server = build_server(["normagpt"])
    # resources/subscribe is the handshake-era method (protocol up to 2025-11-25, what the
    # desktop clients speak); 2026-07-28 clients listen with subscriptions/listen instead.
    async with Client(
        server, read_timeout_seconds=60, message_handler=on_message, mode="legacy"
    ) as c:
        await c.subscribe_resource(uri)
        await AgentRun.objects.filter(pk=run.pk).aupdate(status="running", next_node="executor")
        await wait_for(1)
        await AgentRun.objects.filter(pk=run.pk).aupdate(status="completed")
        await wait_for(2)
        person = await get_user_model().objects.acreate_user("engineer", password="pw-123456")
        theirs = await AgentRun.objects.acreate(question=QUESTION, user=person)
        with pytest.raises(MCPError) as hidden:
            await c.subscribe_resource(f"normagpt://run/{theirs.public_id}")
        assert hidden.value.error.code == -32002
        with pytest.raises(MCPError) as unwatched:
            await c.subscribe_resource("norms://document/1")
        assert "normagpt://run/" in unwatched.value.error.message
        capabilities = c.server_capabilities
    assert updates == [uri, uri]
    assert capabilities.resources.subscribe is True  # type: ignore[union-attr]


async def test_a_2026_client_listening_on_a_run_hears_its_changes() -> None:
    run = await local_run()
    uri = f"normagpt://run/{run.public_id}"
    heard: list[str] = []
    async with client() as c:
        assert c.protocol_version == "2026-07-28"
        async with c.listen(resource_subscriptions=[uri]) as events:

            async def work() -> None:
                await anyio.sleep(0.2)
                await AgentRun.objects.filter(pk=run.pk).aupdate(status="running")
                await anyio.sleep(1.5)
                await AgentRun.objects.filter(pk=run.pk).aupdate(status="completed")

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(work)
                    async for event in events:
                        heard.append(event.uri)
                        if len(heard) == 2:
                            break
    assert heard == [uri, uri]


async def test_a_2026_client_cannot_listen_on_anothers_run() -> None:
    person = await get_user_model().objects.acreate_user("engineer", password="pw-123456")
    theirs = await AgentRun.objects.acreate(question=QUESTION, user=person)
    async with client() as c:
        with pytest.raises(MCPError) as hidden, anyio.fail_after(10):
            async with c.listen(resource_subscriptions=[f"normagpt://run/{theirs.public_id}"]):
                pass
    assert hidden.value.error.code == -32002
    assert theirs.public_id in hidden.value.error.message
