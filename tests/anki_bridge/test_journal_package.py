"""The journal's rows as an Anki package from the admin (issue 53, item 3): the selected
rows as they were written (fields, tags, deck, note type), with the media the journal
still keeps; a file delivered and no longer kept is named in a message, its note keeps its
image tag. Imported with Anki's own importer."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.test import Client as WebClient
from django.utils import timezone

from anki_bridge.models import Media, Note
from tests.anki_bridge.conftest import png_bytes
from tests.anki_bridge.test_packages import anki_import

pytestmark = pytest.mark.django_db


def _media(filename: str, data: bytes, *, kept: bool) -> None:
    Media.objects.create(
        filename=filename, sha1=hashlib.sha1(data).hexdigest(), size=len(data),  # noqa: S324
        data=data if kept else None, touched_at=timezone.now(),
    )  # fmt: skip


def test_the_journal_admin_exports_the_selected_rows_as_a_package(  # type: ignore[no-untyped-def]
    settings, tmp_path: Path
) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    kept, gone = png_bytes(40, 30, "red"), png_bytes(50, 30, "blue")
    _media("kept-1.png", kept, kept=True)
    _media("gone-2.png", gone, kept=False)  # delivered: the bytes were let go
    rows = [
        Note.objects.create(
            deck="Физика::Механика", model="Basic",
            fields={"Front": "Сила?", "Back": 'F = ma<div><img src="kept-1.png"></div>'},
            tags=["физика", "урок_1"], media=["kept-1.png"], dedup_key="k1",
            status=Note.Status.PENDING,
        ),
        Note.objects.create(
            deck="Физика::Механика", model="Basic",
            fields={"Front": "Импульс?", "Back": 'p = mv<div><img src="gone-2.png"></div>'},
            tags=["физика"], media=["gone-2.png"], status=Note.Status.SENT, anki_note_id=7,
        ),
        Note.objects.create(
            deck="Химия", model="Поля для ChatGPT",
            fields={"Prompt": "Вода?", "Response": "H₂O", "Context": "", "Sources": ""},
            tags=[], status=Note.Status.FAILED,
        ),
        Note.objects.create(
            deck="Химия", model="A note type nobody showed the hub",
            fields={"Вопрос": "?"}, status=Note.Status.FAILED,
        ),
        Note.objects.create(deck="Не выбрана", model="Basic", fields={"Front": "x", "Back": "y"}),
    ]  # fmt: skip
    staff = get_user_model().objects.create_superuser(username="admin", password="x")
    web = WebClient()
    web.force_login(staff)
    answer = web.post(
        "/admin/anki_bridge/note/",
        {"action": "export_package", "_selected_action": [row.pk for row in rows[:4]]},
    )
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/apkg"
    imported = anki_import(answer.content, tmp_path / "anki")

    assert set(imported.notes) == {"Сила?", "Импульс?", "Вода?"}
    force, momentum, water = (imported.notes[k] for k in ("Сила?", "Импульс?", "Вода?"))
    assert force["model"] == momentum["model"]
    assert force["model"].startswith("Basic")  # «Basic+» beside a fresh collection's own
    assert force["decks"] == momentum["decks"] == {"Физика::Механика"}
    assert force["fields"] == ["Сила?", 'F = ma<div><img src="kept-1.png"></div>']
    assert force["tags"] == ["урок_1", "физика"]
    assert momentum["fields"][1] == 'p = mv<div><img src="gone-2.png"></div>'  # the tag stays
    assert water["model"] == "Поля для ChatGPT"
    assert water["decks"] == {"Химия"}
    assert water["fields"][:2] == ["Вода?", "H₂O"]
    assert imported.media == {"kept-1.png": kept}  # only what the journal still holds
    assert "Физика::Механика" in imported.decks

    said = [str(m) for m in get_messages(answer.wsgi_request)]
    assert any("gone-2.png" in m and "kept-1.png" not in m for m in said), said
    assert any(f"#{rows[3].pk}" in m and "note type" in m for m in said), said


def test_nothing_exportable_is_said_and_no_file_is_sent(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    row = Note.objects.create(deck="D", model="Unknown type", fields={"Q": "?"})
    staff = get_user_model().objects.create_superuser(username="admin", password="x")
    web = WebClient()
    web.force_login(staff)
    answer = web.post(
        "/admin/anki_bridge/note/",
        {"action": "export_package", "_selected_action": [row.pk]},
        follow=True,
    )
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/html")
    said = [str(m) for m in get_messages(answer.wsgi_request)]
    assert any("nothing to export" in m for m in said), said
