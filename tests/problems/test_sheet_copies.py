"""A variant printed for a class, its key apart, and old sheets cleared (issue 51, item 3
and the sheets' upkeep).

- `copies`: N sheets in one PDF, copy k > 1 in an order of its own (seeded: a reprint
  gives the same orders), each with its number in the header and the footer and its own
  answer key that follows its order.
- The sheets without the key (to hand out) and the key alone, as files of their own: over
  MCP (`sdamgia://variant/{id}/pdf/sheets`, `…/pdf/key`, `?copies=N`) and REST (`part`).
- `sheets_expire` (a daily beat task, a management command) deletes sheet files older than
  `SDAMGIA_SHEET_TTL_DAYS` from whatever storage holds them; a print that reuses a file
  so old that it would expire before its new link does writes it again.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.test import Client as WebClient
from django.utils import timezone
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import BlobResourceContents, EmbeddedResource, ResourceLink
from rest_framework.test import APIClient

from core.identity import stdio_caller
from core.mcp_server import build_server
from problems.models import Problem, Variant
from problems.sheet_copies import copy_orders
from problems.sheets import variant_pdf_bytes, variant_sheet
from tests.conftest import text_of

CONDITIONS = {
    "27340": "В треугольнике ABC угол C равен 90°, высота CH равна 4, BC = 8. Найдите косинус A.",
    "27341": "Найдите площадь трапеции, основания которой равны 6 и 10, а высота равна 5.",
    "27342": "Вероятность того, что новый чайник прослужит больше года, равна 0,97.",
    "27343": "Найдите корень уравнения 3 в степени x минус 4 равно 81.",
    "27344": "Периметр квадрата равен 36. Найдите его площадь.",
}
ANSWERS = {"27340": "0,5", "27341": "40", "27342": "0,97", "27343": "8", "27344": "81"}


def pages_of(data: bytes) -> list[str]:
    document = pdfium.PdfDocument(data)
    return [" ".join(page.get_textpage().get_text_range().split()) for page in document]


def order_on(page_text: str) -> list[str]:
    """The problems of a sheet's pages in the order they are printed."""
    return [pid for _, pid in sorted((page_text.index(f"(№ {pid})"), pid) for pid in CONDITIONS)]


def key_rows(order: list[str]) -> str:
    return " ".join(f"{n} {pid} {ANSWERS[pid]}" for n, pid in enumerate(order, start=1))


@pytest.fixture
def media(settings, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = str(tmp_path)
    settings.SITE_URL = "http://127.0.0.1:9"  # no web process: the PDF comes over MCP
    return tmp_path


def a_variant(owner: Any) -> Variant:
    for pid, condition in CONDITIONS.items():
        Problem.objects.get_or_create(
            subject="math", exam="ege", problem_id=pid,
            defaults={"type_number": "1", "condition_text": condition,
                      "answer": ANSWERS[pid], "fetched_at": timezone.now()},
        )  # fmt: skip
    return Variant.objects.create(
        owner=owner, subject="math", exam="ege", tasks={"1": 5}, seed=3,
        problem_ids=list(CONDITIONS),
    )  # fmt: skip


# --- The orders ----------------------------------------------------------------------------


def test_copy_orders_are_seeded_each_its_own_and_the_first_the_variants() -> None:
    ids = list(CONDITIONS)
    orders = copy_orders(problem_ids=ids, name="abc", copies=6)
    assert orders == copy_orders(problem_ids=ids, name="abc", copies=6)  # the same again
    assert orders[0] == ids  # copy 1: the order sdamgia_check_variant numbers
    assert all(sorted(order) == sorted(ids) for order in orders)  # the same problems
    assert len({tuple(order) for order in orders}) == 6  # each copy an order of its own
    assert copy_orders(problem_ids=ids, name="other", copies=6) != orders  # by variant
    three = copy_orders(problem_ids=ids[:3], name="abc", copies=8)
    assert len({tuple(order) for order in three[:6]}) == 6  # every order of 3, then repeats
    assert copy_orders(problem_ids=ids[:1], name="abc", copies=3) == [ids[:1]] * 3


# --- The PDF -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_copies_each_with_its_number_its_order_and_a_key_that_follows_it(media: Path) -> None:
    variant = a_variant(get_user_model().objects.create_user(username="teacher"))
    name = variant.public_id
    orders = copy_orders(problem_ids=variant.problem_ids, name=name, copies=3)
    pages = pages_of(variant_pdf_bytes(variant=variant, copies=3))
    keys = [n for n, page in enumerate(pages) if page.startswith("Ответы")]
    assert len(keys) == 3
    assert keys[0] > 0
    starts = [n for n, page in enumerate(pages) if page.startswith("Математика")]
    assert len(starts) == 3  # each copy from a page of its own
    for number, (start, end) in enumerate(
        zip(starts, [*starts[1:], keys[0]], strict=True), start=1
    ):
        sheet = " ".join(pages[start:end])
        assert f"Вариант {name} · экземпляр {number} из 3 ·" in sheet
        assert order_on(sheet) == orders[number - 1], number
        assert "Ответы" not in sheet
        for k, page in enumerate(pages[start:end], start=1):
            assert page.endswith(f"вариант {name}, экземпляр {number} — стр. {k} из {end - start}")
    for number, at in enumerate(keys, start=1):
        assert pages[at].startswith(f"Ответы · вариант {name}, экземпляр {number} ")
        assert key_rows(orders[number - 1]) in pages[at]  # its own copy's order
        assert pages[at].endswith(f"вариант {name}, ответы — стр. {number} из 3")
    assert orders[1] != orders[0]
    assert orders[2] not in orders[:2]


@pytest.mark.django_db
def test_the_sheets_without_the_key_and_the_key_alone(media: Path) -> None:
    variant = a_variant(get_user_model().objects.create_user(username="teacher"))
    orders = copy_orders(problem_ids=variant.problem_ids, name=variant.public_id, copies=2)
    bare = " ".join(pages_of(variant_pdf_bytes(variant=variant, copies=2, part="sheets")))
    assert "Ответы" not in bare
    assert key_rows(orders[0]) not in bare
    assert bare.count("Ответ:") == 10  # both copies' answer boxes
    key = pages_of(variant_pdf_bytes(variant=variant, copies=2, part="key"))
    assert len(key) == 2
    assert "Ответ:" not in " ".join(key)
    assert CONDITIONS["27344"] not in " ".join(key)
    for page, order in zip(key, orders, strict=True):
        assert key_rows(order) in page
    single = pages_of(variant_pdf_bytes(variant=variant, part="key", with_solutions=True))
    assert single[0].startswith(f"Ответы · вариант {variant.public_id} ")  # no copy number
    assert "Решения" in " ".join(single)
    names = {
        variant_sheet(variant=variant, copies=c, part=p).name
        for c in (1, 2)
        for p in ("all", "sheets", "key")
    }
    assert len(names) == 6  # a file per copies and part


@pytest.mark.django_db(transaction=True)
def test_over_mcp_the_copies_and_the_key_as_resources_of_their_own(media: Path) -> None:
    variant = a_variant(stdio_caller())
    uri = f"sdamgia://variant/{variant.public_id}/pdf"
    orders = copy_orders(problem_ids=variant.problem_ids, name=variant.public_id, copies=3)

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(build_server(["problems"]), read_timeout_seconds=60) as client:
            out["printed"] = await client.call_tool(
                "sdamgia_variant_pdf", {"variant": variant.public_id, "copies": 3}
            )
            out["too_many"] = await client.call_tool(
                "sdamgia_variant_pdf", {"variant": variant.public_id, "copies": 41}
            )
            for part in ("key", "sheets"):
                read = await client.read_resource(f"{uri}/{part}?copies=3")
                out[part] = base64.b64decode(read.contents[0].blob)  # type: ignore[union-attr]
            one = await client.read_resource(f"{uri}/key")
            out["one"] = base64.b64decode(one.contents[0].blob)  # type: ignore[union-attr]
            with pytest.raises(MCPError) as refused:
                await client.read_resource(f"{uri}/key?copies=0")
            out["refused"] = refused.value.error
        return out

    out = asyncio.run(run())
    printed = out["printed"]
    assert not printed.is_error, printed.content
    (blob,) = [b.resource for b in printed.content if isinstance(b, EmbeddedResource)]
    assert isinstance(blob, BlobResourceContents)
    assert blob.uri == f"{uri}?copies=3"
    assert printed.structured_content["resource"] == f"{uri}?copies=3"
    whole = " ".join(pages_of(base64.b64decode(blob.blob)))
    assert all(key_rows(order) in whole for order in orders)
    links = {(b.uri, b.mime_type) for b in printed.content if isinstance(b, ResourceLink)}
    assert links == {(f"{uri}/sheets?copies=3", "application/pdf"),
                     (f"{uri}/key?copies=3", "application/pdf")}  # fmt: skip
    assert out["too_many"].is_error
    assert "copies" in text_of(out["too_many"])
    key = pages_of(out["key"])
    assert [key_rows(order) in page for page, order in zip(key, orders, strict=True)] == [True] * 3
    assert "Ответ:" not in " ".join(key)
    sheets = " ".join(pages_of(out["sheets"]))
    assert "Ответы" not in sheets
    assert "экземпляр 3 из 3" in sheets
    assert key_rows(orders[0]) in pages_of(out["one"])[0]
    assert "copies must be from 1 to 40" in out["refused"].message
    assert out["refused"].data["uri"] == f"{uri}/key?copies=0"  # the URI as asked


@pytest.mark.django_db
def test_over_rest_copies_and_parts(media: Path) -> None:
    variant = a_variant(get_user_model().objects.create_user(username="teacher"))
    owner = APIClient()
    owner.force_authenticate(variant.owner)
    path = f"/api/problems/variants/{variant.public_id}/pdf/"
    printed = owner.post(f"{path}?copies=2&part=key")
    assert printed.status_code == 200, printed.content
    link = printed.json()["url"].removeprefix("http://testserver")
    data = b"".join(WebClient().get(link).streaming_content)
    orders = copy_orders(problem_ids=variant.problem_ids, name=variant.public_id, copies=2)
    assert [key_rows(o) in p for p, o in zip(pages_of(data), orders, strict=True)] == [True] * 2
    for bad in ("copies=abc", "copies=41", "copies=0", "copies=" + "9" * 5000, "part=answers"):
        refused = owner.post(f"{path}?{bad}")
        assert refused.status_code == 400, (bad, refused.content)
        assert refused.json()["extra"]["field"] == bad.split("=")[0]


# --- Old sheets cleared --------------------------------------------------------------------


def _age(path: Path, days: float) -> None:
    then = time.time() - days * 86400
    os.utime(path, (then, then))


@pytest.mark.django_db
def test_sheets_older_than_their_ttl_are_deleted_by_the_task_and_the_command(
    media: Path, settings
) -> None:  # type: ignore[no-untyped-def]
    from problems.tasks import sheets_expire_task

    settings.SDAMGIA_SHEET_TTL_DAYS = 7
    variant = a_variant(get_user_model().objects.create_user(username="teacher"))
    old, recent = variant_sheet(variant=variant).name, variant_sheet(variant=variant, copies=2).name
    leftover = default_storage.save("sheets/.variant-x.part", ContentFile(b"%PDF-"))
    _age(media / old, 8)
    _age(media / leftover, 8)
    _age(media / recent, 6)
    assert sheets_expire_task.delay().get() == 2  # the beat task
    assert default_storage.listdir("sheets")[1] == [recent.removeprefix("sheets/")]
    out = StringIO()
    call_command("sheets_expire", stdout=out)
    assert out.getvalue().strip() == "0 sheet file(s) deleted"
    _age(media / recent, 9)
    settings.SDAMGIA_SHEET_TTL_DAYS = 0  # kept for ever
    call_command("sheets_expire", stdout=out)
    assert (media / recent).exists()
    settings.SDAMGIA_SHEET_TTL_DAYS = 7
    call_command("sheets_expire", stdout=out)
    assert not (media / recent).exists()
    assert out.getvalue().splitlines()[-1] == "1 sheet file(s) deleted"


@pytest.mark.django_db
def test_a_reprint_of_an_ageing_sheet_keeps_it_past_its_new_links_life(
    media: Path, settings
) -> None:  # type: ignore[no-untyped-def]
    from problems.sheets import sheets_expire

    settings.SDAMGIA_SHEET_TTL_DAYS, settings.SDAMGIA_SHEET_LINK_HOURS = 7, 48
    variant = a_variant(get_user_model().objects.create_user(username="teacher"))
    name = variant_sheet(variant=variant).name
    _age(media / name, 4)  # expires in 3 days: outlives a 2-day link, left as it is
    assert variant_sheet(variant=variant).name == name
    assert (media / name).stat().st_mtime < time.time() - 3 * 86400
    _age(media / name, 6)  # expires in a day, before a link made now: written again
    assert variant_sheet(variant=variant).name == name
    assert (media / name).stat().st_mtime > time.time() - 3600
    assert sheets_expire(now=timezone.now() + timedelta(days=6)) == 0
    assert sheets_expire(now=timezone.now() + timedelta(days=8)) == 1
    assert default_storage.listdir("sheets")[1] == []


@pytest.mark.django_db
def test_expiry_works_on_any_storage_that_tells_a_files_time(settings) -> None:  # type: ignore[no-untyped-def]
    """Not the filesystem (S3 in production, through django-storages): listdir and
    get_modified_time only."""
    from problems.sheet_store import sheet_store, sheets_expire

    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    }
    settings.SDAMGIA_SHEET_TTL_DAYS = 7
    assert sheets_expire() == 0  # nothing printed yet
    stored = sheet_store(b"%PDF-1.4 a sheet", stem="variant-x")
    assert sheets_expire(now=timezone.now() + timedelta(days=6)) == 0
    assert sheets_expire(now=timezone.now() + timedelta(days=8)) == 1
    assert not default_storage.exists(stored.name)
