"""A printed variant reaches any client, printing is safe under concurrency, and a random
problem keeps its answer to itself (issue 51, items 4–6).

- `sdamgia_variant_pdf` returns the PDF itself (an embedded `application/pdf` blob) when it
  is under `SDAMGIA_PDF_EMBED_MAX`, and otherwise a resource link the client reads with
  `resources/read` of `sdamgia://variant/{id}/pdf`: over stdio alone, with no web process.
- Concurrent prints of one variant each get a whole PDF, stored once.
- `sdamgia_random_problem` gives the answer and the solution only with `reveal`.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db import connection
from django.utils import timezone
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import BlobResourceContents, EmbeddedResource, ResourceLink

from core.identity import stdio_caller
from core.mcp_server import build_server
from problems.models import Problem, Variant
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of
from tests.problems.blocks import block

pytestmark = pytest.mark.django_db(transaction=True)

CONDITIONS = {
    "27340": "В треугольнике ABC угол C равен 90°, высота CH равна 4, BC = 8. Найдите косинус A.",
    "27341": "Найдите площадь трапеции, основания которой равны 6 и 10, а высота равна 5.",
    "27342": "Вероятность того, что новый чайник прослужит больше года, равна 0,97.",
}
ANSWERS = {"27340": "0,5", "27341": "40", "27342": "0,97"}
SOLUTION = "Решение задачи {pid}: по теореме, ответ {answer}."
MATH = {"subject": "math", "exam": "ege"}
DEAD_SITE = "http://127.0.0.1:9"  # no web process answers the sheet links here


def pdf_text(data: bytes) -> str:
    document = pdfium.PdfDocument(data)
    return "\n".join(" ".join(page.get_textpage().get_text_range().split()) for page in document)


def store_bank(*, type_number: str = "1") -> None:
    for pid, condition in CONDITIONS.items():
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number=type_number,
            condition_text=condition, answer=ANSWERS[pid],
            solution_text=SOLUTION.format(pid=pid, answer=ANSWERS[pid]), solution_kind="own",
            fetched_at=timezone.now(),
        )  # fmt: skip


def variant_of(owner: Any) -> Variant:
    return Variant.objects.create(
        owner=owner, subject="math", exam="ege", tasks={"1": 3}, seed=1,
        problem_ids=list(CONDITIONS),
    )  # fmt: skip


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = str(tmp_path)
    settings.SITE_URL = DEAD_SITE
    return tmp_path


def the_pdf(result: Any) -> bytes:
    """The PDF embedded in a tool result."""
    blobs = [
        block.resource
        for block in result.content
        if isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents)
    ]
    assert len(blobs) == 1, result.content
    assert blobs[0].mime_type == "application/pdf"
    return base64.b64decode(blobs[0].blob)


# --- Item 4: delivered to any client -------------------------------------------------------


def test_a_small_sheet_is_embedded_a_large_one_linked_and_read_as_a_resource(
    media: Path, settings
) -> None:  # type: ignore[no-untyped-def]
    store_bank()
    own = variant_of(stdio_caller())
    foreign = variant_of(get_user_model().objects.create_user(username="someone"))
    uri = f"sdamgia://variant/{own.public_id}/pdf"

    async def run() -> tuple[Any, Any, Any, Any, str]:
        async with Client(build_server(["problems"]), read_timeout_seconds=60) as client:
            embedded = await client.call_tool("sdamgia_variant_pdf", {"variant": own.public_id})
            settings.SDAMGIA_PDF_EMBED_MAX = 1000  # smaller than any sheet
            linked = await client.call_tool(
                "sdamgia_variant_pdf", {"variant": own.public_id, "with_solutions": True}
            )
            read = await client.read_resource(uri)
            keyed = await client.read_resource(f"{uri}/solutions")
            try:
                await client.read_resource(f"sdamgia://variant/{foreign.public_id}/pdf")
            except MCPError as exc:
                refused = str(exc)
            else:
                refused = ""
        return embedded, linked, read, keyed, refused

    embedded, linked, read, keyed, refused = asyncio.run(run())
    assert not embedded.is_error, text_of(embedded)
    sheet = pdf_text(the_pdf(embedded))
    assert "Ответы" in sheet
    assert "Решения" not in sheet
    data = embedded.structured_content
    assert data["url"].startswith(f"{DEAD_SITE}/media/sheets/?t=")  # for browsers
    assert (data["resource"], data["embedded"]) == (uri, True)
    assert data["size"] == len(the_pdf(embedded))

    assert not linked.is_error, text_of(linked)
    links = [block for block in linked.content if isinstance(block, ResourceLink)]
    assert [(link.uri, link.mime_type) for link in links] == [
        (f"{uri}/solutions", "application/pdf"),
        (f"{uri}/sheets", "application/pdf"),  # without the key, to hand out
        (f"{uri}/key", "application/pdf"),  # the key alone
    ]
    assert not any(isinstance(block, EmbeddedResource) for block in linked.content)
    assert linked.structured_content["embedded"] is False
    assert linked.structured_content["size"] == links[0].size > 1000

    (contents,) = read.contents
    assert isinstance(contents, BlobResourceContents)
    assert contents.mime_type == "application/pdf"
    assert "Решения" not in pdf_text(base64.b64decode(contents.blob))
    (solved,) = keyed.contents
    assert isinstance(solved, BlobResourceContents)
    assert "Решение задачи 27340" in pdf_text(base64.b64decode(solved.blob))
    assert "no variant" in refused  # a variant is its owner's only


def test_over_stdio_alone_the_client_receives_the_pdf(  # type: ignore[no-untyped-def]
    fake_site, settings, subprocess_db_env, tmp_path
) -> None:
    for pid, condition in CONDITIONS.items():
        fake_site.add_problem("math-ege", pid, block(pid, condition, answer=ANSWERS[pid]))
    store_bank()
    env = subprocess_env(
        **subprocess_db_env,
        SDAMGIA_URL_TEMPLATE=settings.SDAMGIA_URL_TEMPLATE,
        SDAMGIA_MIN_INTERVAL="0",
        DJANGO_MEDIA_ROOT=str(tmp_path),
        SITE_URL=DEAD_SITE,
    )
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "problems"], cwd=str(ROOT), env=env
    )

    async def run() -> tuple[Any, Any, Any]:
        async with Client(params, read_timeout_seconds=90) as client:
            made = await client.call_tool("sdamgia_make_variant", {**MATH, "tasks": {"1": 3}})
            variant = made.structured_content["variant"]
            printed = await client.call_tool("sdamgia_variant_pdf", {"variant": variant})
            read = await client.read_resource(f"sdamgia://variant/{variant}/pdf")
        return made, printed, read

    made, printed, read = asyncio.run(run())
    assert not made.is_error, text_of(made)
    assert not printed.is_error, text_of(printed)
    ids = made.structured_content["problem_ids"]
    for data in (the_pdf(printed), base64.b64decode(read.contents[0].blob)):  # type: ignore[union-attr]
        assert data.startswith(b"%PDF-")
        sheet = pdf_text(data)
        for pid in ids:
            assert " ".join(CONDITIONS[pid].split()[:5]) in sheet
        assert "Ответы" in sheet


# --- Item 5: printing is safe under concurrency -------------------------------------------


def test_sixteen_concurrent_prints_of_one_variant_give_sixteen_good_pdfs(media: Path) -> None:
    from problems.sheets import variant_pdf

    store_bank()
    variant = variant_of(get_user_model().objects.create_user(username="teacher"))
    prints = 16
    start = threading.Barrier(prints)

    def print_one(_: int) -> bytes:
        try:
            start.wait(timeout=60)
            name = variant_pdf(variant=variant)
            with default_storage.open(name, "rb") as handle:
                return bytes(handle.read())
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=prints) as pool:
        sheets = list(pool.map(print_one, range(prints)))
    assert len(sheets) == prints
    for data in sheets:
        text = pdf_text(data)
        assert "Ответы" in text
        assert all(f"{pid} {ANSWERS[pid]}" in text for pid in CONDITIONS)
    stored = default_storage.listdir("sheets")[1]
    assert len(stored) == 1, stored  # one file per variant and options
    assert not [n for n in (media / "sheets").iterdir() if n.name.startswith(".")]  # no leftovers


def test_on_an_object_store_a_sheet_another_print_stored_first_is_kept_once(  # type: ignore[no-untyped-def]
    settings,
) -> None:
    """Not the filesystem (S3 in production): no rename, one save. A print that found no
    file but lost the race to another is given the other's file, its own copy removed."""
    from unittest import mock

    from problems.sheet_store import sheet_store

    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    }
    pdf = b"%PDF-1.4 a sheet /CreationDate (D:20261129120000+00'00')"
    first = sheet_store(pdf, stem="variant-x")
    later = pdf.replace(b"120000", b"120007")  # the same sheet, rendered seconds later
    storage = type(default_storage._wrapped)
    real_exists, answers = storage.exists, iter([False, True])  # not yet; then, on saving, yes

    def exists(self: Any, name: str) -> bool:
        answer = next(answers, None)
        return real_exists(self, name) if answer is None else answer

    with mock.patch.object(storage, "exists", exists):
        raced = sheet_store(later, stem="variant-x")
    assert raced.name == first.name
    assert default_storage.listdir("sheets")[1] == [first.name.removeprefix("sheets/")]
    with default_storage.open(first.name, "rb") as handle:
        assert handle.read() == pdf


# --- Item 6: a random problem keeps its answer ---------------------------------------------


def test_a_random_problem_comes_without_its_answer_and_solution_unless_revealed(
    fake_site,
) -> None:  # type: ignore[no-untyped-def]
    store_bank(type_number="2")
    asked = {**MATH, "task_number": "2", "exclude_seen": False}

    async def run() -> tuple[Any, Any, Any]:
        async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
            hidden = await client.call_tool("sdamgia_random_problem", asked)
            hidden_json = await client.call_tool(
                "sdamgia_random_problem", {**asked, "response_format": "json"}
            )
            revealed = await client.call_tool("sdamgia_random_problem", {**asked, "reveal": True})
        return hidden, hidden_json, revealed

    hidden, hidden_json, revealed = asyncio.run(run())
    for result in (hidden, hidden_json, revealed):
        assert not result.is_error, text_of(result)
    for result in (hidden, hidden_json):
        data = result.structured_content
        pid = data["id"]
        assert CONDITIONS[pid] in data["condition"]["text"]
        text = text_of(result)
        assert "Решение задачи" not in text
        assert "Решение задачи" not in str(data)
        # the same shape as sdamgia_get_problem gives, its key left empty
        assert (data["answer"], data["answers"]) == ("", [])
        assert data["solution"] == {"text": "", "html": "", "figures": [], "kind": "hidden"}
    assert "reveal" in text_of(hidden)
    data = revealed.structured_content
    assert data["answer"] == ANSWERS[data["id"]]
    assert data["solution"]["kind"] == "own"
    assert SOLUTION.format(pid=data["id"], answer=ANSWERS[data["id"]]) in text_of(revealed)
