"""Prompt and resource errors are JSON-RPC errors with a standard code naming the argument
or the URI (issue 54, item 3): a prompt argument that is not text, or holds a NUL; a
problem whose page on the site is not a problem page; a page image whose file is gone."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp_types
import pytest
from django.core.files.base import ContentFile
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import PromptReference

from core.mcp_server import build_server
from normagpt.models import NormDocument, NormPage
from tests.conftest import orm
from tests.problems.conftest import fake_site  # noqa: F401 (a fixture)
from tests.problems.fake_site import PAGE

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {},
              "clientInfo": {"name": "raw", "version": "1"}}  # fmt: skip


async def raw_errors(server: MCPServer[Any], requests: list[dict[str, Any]]) -> list[Any]:
    """The `error` of the answer to each of `requests` (JSON-RPC as a client that does not
    validate what it sends writes it), after the handshake."""
    to_server, server_reads = create_context_streams[SessionMessage | Exception](4)
    server_writes, from_server = create_context_streams[SessionMessage](4)
    lowlevel = server._lowlevel_server

    async def send(message: dict[str, Any]) -> dict[str, Any] | None:
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        await to_server.send(SessionMessage(parsed))
        if "id" not in message:
            return None
        with anyio.fail_after(30):
            reply = await from_server.receive()
        answer: dict[str, Any] = json.loads(reply.message.model_dump_json(by_alias=True))
        return answer

    errors = []
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lowlevel.run, server_reads, server_writes,
                         lowlevel.create_initialization_options())  # fmt: skip
        await send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for number, request in enumerate(requests, start=1):
            answer = await send({"jsonrpc": "2.0", "id": number, **request})
            errors.append((answer or {}).get("error"))
        tasks.cancel_scope.cancel()
    return errors


async def test_a_prompt_argument_that_is_not_text_is_named() -> None:
    get = {"method": "prompts/get", "params": {"name": "problems_to_flashcards"}}
    number, nul = await raw_errors(
        build_server(["problems"]),
        [
            {**get, "params": {**get["params"], "arguments": {"subject": "math", "count": 5}}},
            {**get, "params": {**get["params"], "arguments": {"subject": "ma\u0000th"}}},
        ],
    )
    assert number["code"] == -32602
    assert number["message"].startswith("arguments.count: a prompt argument is text, not 5")
    assert nul["code"] == -32602
    assert nul["message"] == "arguments.subject: text contains a NUL character (\\u0000)"


async def test_a_site_page_that_is_not_a_problem_page_is_not_an_internal_error(
    fake_site,  # noqa: F811 (the fixture)
) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/problem", {"id": "27341"},
                       PAGE.format(body="<p>Сайт на обслуживании</p>"))  # fmt: skip
    uri = "sdamgia://math/ege/problem/27341"
    async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    error = caught.value.error
    assert error.code == -32002
    assert "not a problem page" in error.message
    assert error.data["uri"] == uri
    assert error.data["service"] == "СДАМ ГИА"
    assert error.data["retryable"] is False


def page_whose_image_is_gone(tmp_path: Any) -> int:
    document = NormDocument.objects.create(code="СП 1.0", title="Нормы")
    page = NormPage.objects.create(document=document, number=1, text="1.1 Текст", clauses=["1.1"])
    page.image.save("p1.jpg", ContentFile(b"\xff\xd8 not really"))
    page.image.storage.delete(page.image.name)
    return int(page.pk)


async def test_a_page_image_whose_file_is_gone_is_not_found_without_a_traceback(
    settings, tmp_path, caplog
) -> None:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path
    page_id = await orm(page_whose_image_is_gone, tmp_path)
    uri = f"norms://page/{page_id}/image"
    with caplog.at_level(logging.INFO):
        async with Client(build_server(["normagpt"]), read_timeout_seconds=30) as client:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
    error = caught.value.error
    assert (error.code, error.data) == (-32002, {"uri": uri})
    assert error.message == f"{uri}: the stored file is missing"
    assert not [record for record in caplog.records if record.exc_info]


async def test_a_completion_value_with_a_nul_is_refused_naming_it() -> None:
    flashcards = PromptReference(type="ref/prompt", name="problems_to_flashcards")
    async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
        with pytest.raises(MCPError) as caught:
            await client.complete(
                flashcards, {"name": "category_id", "value": "Пар"},
                context_arguments={"subject": "ma\u0000th"},
            )  # fmt: skip
    assert caught.value.error.code == -32602
    assert caught.value.error.message.startswith("context.subject: text contains a NUL")
