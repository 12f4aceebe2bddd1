"""СДАМ ГИА problems → Anki notes (`anki.add_problems` and the admin action on problems)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from pytest_httpserver import HTTPServer

from anki_bridge.models import Note
from core.mcp_server import build_server
from problems.models import Problem
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import image_size, png_bytes
from tests.conftest import text_of
from tests.problems.blocks import block
from tests.problems.fake_site import FakeSite, serve

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def site(settings, httpserver: HTTPServer) -> Iterator[FakeSite]:  # type: ignore[no-untyped-def]
    """A local СДАМ ГИА with two math problems; the first has a figure served locally."""
    fake = FakeSite()
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0
    settings.SDAMGIA_RETRIES = 0
    settings.ANKI_IMAGE_ALLOW_PRIVATE = True  # the figures are served from 127.0.0.1
    httpserver.expect_request("/fig1.png").respond_with_data(
        png_bytes(1200, 600), content_type="image/png"
    )
    fake.add_problem(
        "math-ege",
        "27340",
        block(
            "27340",
            "Найдите площадь треугольника, изображённого на рисунке.",
            answer="6",
            type_number="1",
            solution="Площадь равна половине произведения катетов: 6.",
            figure=httpserver.url_for("/fig1.png"),
        ),
    )
    fake.add_problem("math-ege", "100", block("100", "Решите уравнение x + 1 = 2.", answer="1"))
    yield fake
    server.shutdown()
    server.server_close()


async def call(arguments: dict[str, Any]) -> dict[str, Any]:
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as c:
        result = await c.call_tool("anki.add_problems", arguments)
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))  # type: ignore[no-any-return]


@pytest.mark.anyio
async def test_problems_become_notes_with_figures_once(anki: FakeAnki, site: FakeSite) -> None:
    problems = [
        {"subject": "math", "exam": "ege", "id": "27340"},
        {"subject": "профмат", "id": "999"},
        {"subject": "math", "id": "100"},
    ]
    data = await call({"problems": problems, "deck": "ЕГЭ::Математика", "tags": ["ege 2026"]})
    ok, missing, second = data["details"]
    assert ok["status"] == "ok"
    assert ok["dedup_key"] == "sdamgia:ege:math:27340"
    assert missing["status"] == "error"
    assert missing["index"] == 1
    assert "problem 999" in missing["error"]
    assert second["status"] == "ok"
    assert data["added"] == 2

    notes = {n["id"]: n for n in anki.notes()}
    note = notes[ok["noteId"]]
    assert note["decks"] == ["ЕГЭ::Математика"]
    assert note["model"] == "Поля для ChatGPT"
    assert sorted(note["tags"]) == ["ege_2026", "math-ege", "sdamgia"]
    fields = note["fields"]
    assert fields["Prompt"].startswith("Найдите площадь треугольника, изображённого на рисунке.")
    (figure,) = re.findall(r'src="(sdamgia-ege-math-27340-1-[0-9a-f]{16}\.jpg)"', fields["Prompt"])
    assert fields["Response"].startswith("<b>Ответ:</b> 6<br><br>Площадь равна половине")
    assert fields["Context"].startswith("Математика профильная (ЕГЭ) · Тип 1")
    assert fields["Sources"].endswith("/math-ege/problem?id=27340")
    assert image_size(anki.media_files()[figure]) == (768, 384)

    again = await call({"problems": problems[:1]})
    assert again["details"][0]["status"] == "duplicate"
    assert again["details"][0]["noteId"] == ok["noteId"]
    assert len(anki.notes()) == 2


@pytest.mark.anyio
async def test_a_bad_subject_names_the_field(anki: FakeAnki) -> None:
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=30) as c:
        result = await c.call_tool(
            "anki.add_problems", {"problems": [{"subject": "xx", "id": "1"}]}
        )
    assert result.is_error
    assert text_of(result).startswith("problems[0]: subject 'xx' is not a СДАМ ГИА subject")


class Recorder:
    def __init__(self) -> None:
        self.messages: list[tuple[str, int]] = []

    def message_user(self, request: object, message: str, level: int) -> None:
        self.messages.append((message, level))


def test_the_admin_action_sends_the_selected_problems(anki: FakeAnki, site: FakeSite) -> None:
    from django.contrib import messages

    from problems.services import problem_get
    from problems.subjects import Site

    problem_get(site=Site("math", "ege"), problem_id="100")

    from types import SimpleNamespace

    from django.contrib.auth import get_user_model

    from anki_bridge.admin import send_to_anki

    staff = get_user_model().objects.create_superuser("staff", password="pw-123456")
    recorder = Recorder()
    send_to_anki(recorder, SimpleNamespace(user=staff), Problem.objects.all())  # type: ignore[arg-type]
    assert recorder.messages == [
        (
            "Anki: добавлено — 1, пропущено — 0, в очереди — 0 "
            "(будут доставлены, когда Anki откроется).",
            messages.SUCCESS,
        )
    ]
    (note,) = anki.notes()
    assert note["fields"]["Prompt"] == "Решите уравнение x + 1 = 2."
    assert Note.objects.get().owner == staff  # the sender's journal row


def test_the_problems_admin_offers_the_anki_action_registered_from_anki_bridge(
    rf: Any, admin_user: Any
) -> None:
    """The problem bank's admin lists "Send to Anki" though problems imports nothing of
    anki_bridge: anki_bridge adds it when the apps are ready (`problems_admin_extend`)."""
    from django.contrib import admin

    from anki_bridge.admin import problems_admin_extend, send_to_anki

    request = rf.get("/admin/problems/problem/")
    request.user = admin_user
    model_admin = admin.site.get_model_admin(Problem)
    offered = model_admin.get_actions(request)
    assert offered["send_to_anki"][0] is send_to_anki
    assert str(offered["send_to_anki"][2]) == "Отправить в Anki (по заметке на задачу)"
    assert {"refresh_from_site", "fetch_analogs"} <= offered.keys()
    problems_admin_extend(admin.site)  # twice is once
    assert model_admin.actions.count(send_to_anki) == 1
