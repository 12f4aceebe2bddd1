"""The journal never loses a note: queued while Anki is closed, delivered once, exactly once."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from mcp import Client

from anki_bridge import journal, ledger, services, tasks
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from anki_bridge.models import Media, Note
from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import png_base64
from tests.conftest import text_of

pytestmark = pytest.mark.django_db(transaction=True)


def add(items: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
    result = services.notes_add_from_model(items=items, **kwargs)
    return [d.model_dump(exclude_none=True) for d in result.details]


def flush() -> str:
    out = StringIO()
    call_command("anki_flush", stdout=out)
    return out.getvalue().strip()


def test_twenty_notes_queued_while_anki_is_closed_are_delivered_once(anki: FakeAnki) -> None:
    anki.stop()
    items = [
        {"Prompt": f"Вопрос {i}", "Response": f"Ответ {i}", "tags": ["queue"]} for i in range(20)
    ]
    items[3]["images"] = [{"image_base64": png_base64(900, 300), "target_field": "Prompt"}]
    details = add(items, deck="Очередь")
    assert [d["status"] for d in details] == ["queued"] * 20
    assert Note.objects.filter(status=Note.Status.PENDING).count() == 20
    with pytest.raises(CommandError, match="Anki is not reachable"):
        flush()

    anki.start()  # Anki opens, on the same port
    assert flush() == "sent 20, duplicates 0, failed 0; 0 still pending"
    notes = anki.notes()
    assert len(notes) == 20
    assert {n["decks"][0] for n in notes} == {"Очередь"}
    assert sorted(n["fields"]["Prompt"].split("\n")[0] for n in notes) == sorted(
        f"Вопрос {i}" for i in range(20)
    )
    (with_image,) = [n for n in notes if "<img" in n["fields"]["Prompt"]]
    filename = with_image["fields"]["Prompt"].split('src="')[1].split('"')[0]
    assert filename in anki.media_files()
    assert set(Note.objects.values_list("status", flat=True)) == {"sent"}
    assert all(n.anki_note_id for n in Note.objects.all())

    assert flush() == "sent 0, duplicates 0, failed 0; 0 still pending"
    assert len(anki.notes()) == 20


def test_a_model_never_seen_is_queued_with_fields_as_given(anki: FakeAnki) -> None:
    anki.stop()
    (detail,) = add([{"Front": "q", "Back": "a"}], model="Basic")
    assert detail["status"] == "queued"
    assert detail["warnings"][0].startswith("model_unverified")
    anki.start()
    journal.notes_flush()
    (note,) = anki.notes()
    assert note["fields"] == {"Front": "q", "Back": "a"}


@pytest.mark.anyio
async def test_two_concurrent_calls_with_one_dedup_key_make_one_note(anki: FakeAnki) -> None:
    await asyncio.to_thread(services.model_info_get)

    def arguments(prompt: str) -> dict[str, Any]:
        return {"items": [{"Prompt": prompt, "dedup_key": "same-key"}]}

    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as c:
        first, second = await asyncio.gather(
            c.call_tool("anki.add_from_model", arguments("версия A")),
            c.call_tool("anki.add_from_model", arguments("версия B")),
        )
    statuses = sorted(json.loads(text_of(r))["details"][0]["status"] for r in (first, second))
    assert statuses == ["duplicate", "ok"]
    assert len(anki.notes()) == 1
    assert await asyncio.to_thread(Note.objects.count) == 1


def test_a_resend_with_a_used_key_reports_the_existing_note(anki: FakeAnki) -> None:
    (first,) = add([{"Prompt": "q", "dedup_key": "k1"}])
    (again,) = add([{"Prompt": "q, edited", "dedup_key": "k1"}])
    assert first["status"] == "ok"
    assert again == {
        "index": 0,
        "status": "duplicate",
        "noteId": first["noteId"],
        "dedup_key": "k1",
        "error": f"dedup_key 'k1' was already sent as note {first['noteId']}",
    }
    assert len(anki.notes()) == 1


def test_a_failed_note_is_sent_again_with_its_new_content(anki: FakeAnki) -> None:
    (failed,) = add([{"Response": "no prompt", "dedup_key": "k2"}])
    assert failed["status"] == "error"
    assert failed["error"] == "cannot create note because it is empty"
    assert Note.objects.get(dedup_key="k2").status == "failed"
    (fixed,) = add([{"Prompt": "now with a prompt", "dedup_key": "k2"}])
    assert fixed["status"] == "ok"
    assert [n["fields"]["Prompt"] for n in anki.notes()] == ["now with a prompt"]


def test_a_queued_key_sent_again_once_anki_is_back_is_delivered_once(anki: FakeAnki) -> None:
    anki.stop()
    assert add([{"Prompt": "first", "dedup_key": "k3"}])[0]["status"] == "queued"
    anki.start()
    (detail,) = add([{"Prompt": "second", "dedup_key": "k3"}])
    assert detail["status"] == "ok"
    assert [n["fields"]["Prompt"] for n in anki.notes()] == ["first"]
    assert journal.notes_flush().sent == 0


def test_a_note_delivered_before_a_lost_answer_is_not_doubled(anki: FakeAnki) -> None:
    (detail,) = add([{"Prompt": "lost answer"}])
    Note.objects.update(status="pending", anki_note_id=None)  # as if the answer never came
    outcome = journal.notes_flush()
    assert (outcome.sent, outcome.duplicate) == (0, 1)
    assert len(anki.notes()) == 1
    assert detail["status"] == "ok"


def test_notes_another_sender_holds_are_left_to_it(anki: FakeAnki) -> None:
    anki.stop()
    add([{"Prompt": "held"}])
    Note.objects.update(claim="other", claimed_until=timezone.now() + timedelta(minutes=5))
    anki.start()
    assert journal.notes_flush().sent == 0
    Note.objects.update(claimed_until=timezone.now() - timedelta(seconds=1))  # lease ran out
    assert journal.notes_flush().sent == 1
    assert len(anki.notes()) == 1


def test_the_flush_task_delivers_and_reports(anki: FakeAnki) -> None:
    anki.stop()
    add([{"Prompt": "via celery"}])
    anki.start()
    assert tasks.notes_flush_task.delay().get() == {
        "sent": 1,
        "duplicate": 0,
        "failed": 0,
        "pending": 0,
    }


def test_the_flush_task_retries_while_anki_is_closed() -> None:
    assert tasks.notes_flush_task.autoretry_for == (AnkiUnavailable,)
    assert tasks.notes_flush_task.max_retries >= 1
    assert tasks.notes_flush_task.retry_backoff


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Tasks sent to the broker (recorded, not sent)."""
    from config.celery import app

    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append((name, kw)))
    return sent


def test_without_a_broker_a_queued_call_schedules_nothing(anki: FakeAnki, sent) -> None:  # type: ignore[no-untyped-def]
    from core import background

    anki.stop()
    add([{"Prompt": "no broker: the next call or anki_flush delivers"}])
    assert sent == []
    assert background.drain(timeout=5)  # and nothing runs in-process either
    assert Note.objects.get().status == "pending"


def test_with_a_broker_queued_calls_schedule_one_delayed_flush(anki: FakeAnki, sent) -> None:  # type: ignore[no-untyped-def]
    from core import background

    anki.stop()
    with background.using_broker(True):
        add([{"Prompt": "with a broker"}])
        add([{"Prompt": "one scheduled flush is enough"}])
    assert [name for name, _ in sent] == ["anki_bridge.flush"]
    assert sent[0][1]["countdown"] > 0
    anki.start()
    assert tasks.notes_flush_task.delay().get()["sent"] == 2  # the flush frees the slot
    with background.using_broker(True):
        anki.stop()
        add([{"Prompt": "queued again"}])
    assert len(sent) == 2


def test_image_bytes_wait_for_their_notes_and_are_dropped_after(anki: FakeAnki, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ANKI_JOURNAL_LEASE = 0
    anki.stop()
    add([{"Prompt": "img", "images": [{"image_base64": png_base64(), "target_field": "Prompt"}]}])
    assert ledger.media_prune() == 0  # its note still waits
    (media,) = Media.objects.all()
    assert media.data
    anki.start()
    journal.notes_flush()
    media.refresh_from_db()
    assert media.data is None
    assert media.filename in anki.media_files()


def test_a_refusing_anki_is_an_error_and_the_notes_wait(anki: FakeAnki, settings) -> None:  # type: ignore[no-untyped-def]
    services.model_info_get()
    anki.state.api_key = "k"
    with pytest.raises(AnkiError, match="valid api key must be provided"):
        services.notes_add(notes=[{"fields": {"Prompt": "kept"}}])
    assert Note.objects.get().status == "pending"
    settings.ANKI_CONNECT_KEY = "k"
    assert journal.notes_flush().sent == 1
    assert [n["fields"]["Prompt"] for n in anki.notes()] == ["kept"]


def test_a_deck_anki_refuses_fails_its_notes(anki: FakeAnki) -> None:
    (detail,) = add([{"Prompt": "q"}], deck="")
    assert detail["status"] == "ok"
    anki.state.unsupported = {"createDeck"}
    (detail,) = add([{"Prompt": "q2"}], deck="Elsewhere")
    assert detail["status"] == "error"
    assert detail["error"] == "Anki refused to create the deck «Elsewhere»: unsupported action"
    assert Note.objects.get(status="failed").last_error == detail["error"]
