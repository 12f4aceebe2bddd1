"""The bridge against Anki as it really is (issue 11): the stand-in, and what holds on it.

The stand-in (`ankiconnect_server.py`) reproduces BEHAVIOUR.md; the first tests show it
does, and that a client which fails on the real add-on fails on it too. The rest are the
acceptance points: back-to-back calls without a failure, every card in its deck, a kill at
any point of a delivery ending with every note once and in its deck, the queue leaving by
itself without a broker, media by path with a fallback to data.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from typing import Any

import httpx
import pytest
from mcp import Client

from anki_bridge import journal, media_upload, services
from anki_bridge.client import AnkiClient
from anki_bridge.exceptions import AnkiUnavailable
from anki_bridge.models import Note
from core import background
from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import (
    RECEIVE_MEASURED,
    RESET_COST,
    FakeAnki,
    receive_cost,
)
from tests.anki_bridge.conftest import png_base64
from tests.conftest import text_of

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "Поля для ChatGPT"
VERSION = {"action": "version", "version": 6}
CLOSE = {"Connection": "close"}


def deck_of(anki: FakeAnki, query: str = "") -> Counter[str]:
    """How many notes of `query` have their cards in each deck."""
    return Counter(deck for note in anki.notes(query) for deck in note["decks"])


# --- the stand-in is faithful -----------------------------------------------------------


@pytest.mark.long
def test_a_keep_alive_client_fails_on_the_stand_in_as_on_the_real_add_on(anki: FakeAnki) -> None:
    """BEHAVIOUR.md: httpx's default pool fails on 16–22 % of back-to-back requests."""
    failures: Counter[str] = Counter()
    with httpx.Client(base_url=anki.url, timeout=10) as keep_alive:
        for _ in range(300):
            try:
                keep_alive.post("/", json=VERSION)
            except httpx.TransportError as exc:
                failures[type(exc).__name__] += 1
    # Measured on a quiet machine: 16–22 %; a loaded one (here and there) drops more.
    assert 30 <= sum(failures.values()) <= 150  # 10–50 %
    assert set(failures) <= {"ReadError", "RemoteProtocolError", "WriteError"}
    with httpx.Client(base_url=anki.url, timeout=10, headers=CLOSE) as closing:
        assert all(closing.post("/", json=VERSION).json()["result"] == 6 for _ in range(100))


def test_the_reply_is_http_1_1_without_connection_close_and_the_socket_closes(
    anki: FakeAnki,
) -> None:
    with httpx.Client(base_url=anki.url, timeout=10) as http:
        reply = http.post("/", json=VERSION)
    assert reply.http_version == "HTTP/1.1"
    assert "connection" not in reply.headers
    assert reply.json() == {"result": 6, "error": None}


def test_requests_wait_for_the_25_ms_timer_and_parallel_clients_take_turns(
    anki: FakeAnki,
) -> None:
    started = time.monotonic()
    for _ in range(20):
        httpx.post(anki.url, json=VERSION, headers=CLOSE, timeout=10)
    assert time.monotonic() - started >= 20 * 0.025 * 0.8
    anki.state.receive_speed = 20.0  # a 160 kB request now holds Anki for 0.8 s
    big = {"action": "version", "version": 6, "params": {}, "pad": "x" * 160_000}
    finished: dict[str, float] = {}

    def post(name: str, body: dict[str, Any]) -> None:
        httpx.post(anki.url, json=body, headers=CLOSE, timeout=30)
        finished[name] = time.monotonic()

    slow = threading.Thread(target=post, args=("big", big))
    slow.start()
    deadline = time.monotonic() + 10
    while not any(size > 160_000 for size in anki.state.request_bytes):  # Anki is busy with it
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    post("small", VERSION)
    slow.join()
    assert finished["small"] - started >= 0.5  # Anki was frozen receiving the big one
    assert finished["small"] >= finished["big"] - 0.05


def test_the_receive_cost_follows_the_measured_curve() -> None:
    for size, seconds in RECEIVE_MEASURED:
        assert receive_cost(size) == pytest.approx(seconds, rel=0.01)
    assert receive_cost(1_500_000) / 1.5 > receive_cost(960_000) / 0.96  # super-linear
    per_byte = [receive_cost(s) / s for s in (10_000, 100_000, 160_000)]
    assert max(per_byte) == pytest.approx(min(per_byte))  # flat below the first measurement


def test_each_added_note_resets_the_main_window_so_a_big_add_outlasts_a_short_timeout(
    anki: FakeAnki,
) -> None:
    """Issue 26, measured: 200 notes by a client whose 3 requests do nothing else took
    4.5 s on the real Anki: each addNote resets Anki's main window (RESET_COST). A client
    that gives a 100-note `addNotes` one second, as if Anki only wrote rows, times out on
    the stand-in as on the real add-on; and the notes are added all the same."""
    notes = [
        {"deckName": "Default", "modelName": "Basic", "fields": {"Front": f"n{i}", "Back": "b"}}
        for i in range(100)
    ]
    body = {"action": "addNotes", "version": 6, "params": {"notes": notes}}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(anki.url, json=body, headers=CLOSE, timeout=httpx.Timeout(10, read=1.0))
    deadline = time.monotonic() + 60
    while len(anki.notes()) < 100:  # Anki goes on adding after the client gave up
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert 100 * RESET_COST > 1.0


def test_add_note_files_the_card_under_the_last_used_deck(anki: FakeAnki) -> None:
    def call(action: str, **params: Any) -> Any:
        body = {"action": action, "params": params, "version": 6}
        return httpx.post(anki.url, json=body, headers=CLOSE, timeout=10).json()

    call("createDeck", deck="Target")
    note = {"deckName": "Target", "modelName": "Basic", "fields": {"Front": "f", "Back": "b"}}
    assert call("addNote", note=note)["error"] is None
    assert deck_of(anki) == {"Default": 1}


def test_a_killed_anki_drops_the_connection_keeps_what_it_did_and_refuses(
    anki: FakeAnki,
) -> None:
    def note(i: int) -> dict[str, Any]:
        fields = {"Front": f"n{i}", "Back": "b"}
        return {"action": "addNote", "params": {"note": {"deckName": "Default",
                "modelName": "Basic", "fields": fields}}}  # fmt: skip

    anki.state.kill_after("addNote", 3)
    body = {"action": "multi", "version": 6, "params": {"actions": [note(i) for i in range(6)]}}
    with pytest.raises(httpx.TransportError):
        httpx.post(anki.url, json=body, headers=CLOSE, timeout=10)
    anki.wait_killed()
    with pytest.raises(httpx.ConnectError):
        httpx.post(anki.url, json=VERSION, headers=CLOSE, timeout=10)
    assert len(anki.notes()) == 3
    anki.start()
    assert httpx.post(anki.url, json=VERSION, headers=CLOSE, timeout=10).json()["result"] == 6


def test_profile_not_loaded_and_the_legacy_add_notes(anki: FakeAnki) -> None:
    def call(action: str, **params: Any) -> Any:
        body = {"action": action, "params": params, "version": 6}
        return httpx.post(anki.url, json=body, headers=CLOSE, timeout=10).json()

    anki.state.profile_loaded = False
    assert call("deckNames") == {"result": None, "error": "collection is not available"}
    anki.state.profile_loaded = True
    anki.state.legacy_add_notes = True
    notes = [
        {"deckName": "Default", "modelName": "Basic", "fields": {"Front": "a", "Back": ""}},
        {"deckName": "Default", "modelName": "Basic", "fields": {"Front": "a", "Back": ""}},
    ]
    result = call("addNotes", notes=notes)
    assert result["error"] is None
    assert isinstance(result["result"][0], int)
    assert result["result"][1] is None


# --- acceptance -------------------------------------------------------------------------


@pytest.mark.long
def test_300_back_to_back_calls_fail_none_and_every_card_is_in_its_deck(anki: FakeAnki) -> None:
    results = asyncio.run(three_hundred_calls())
    assert [d["status"] for r in results for d in r["details"]] == ["ok"] * 90
    assert deck_of(anki) == {"D0": 30, "D1": 30, "D2": 30}
    assert set(Note.objects.values_list("placed", flat=True)) == {True}


async def three_hundred_calls() -> list[dict[str, Any]]:
    """30 `anki.add_from_model` calls of 3 notes, then 270 `anki.note_info`, one session."""
    results = []
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as mcp:
        for i in range(30):
            items = [{"Prompt": f"q{i}-{j}", "Response": "r"} for j in range(3)]
            result = await mcp.call_tool(
                "anki.add_from_model", {"deck": f"D{i % 3}", "items": items}
            )
            assert not result.is_error, text_of(result)
            results.append(json.loads(text_of(result)))
        ids = [d["noteId"] for r in results for d in r["details"]]
        for i in range(270):
            result = await mcp.call_tool("anki.note_info", {"noteIds": [ids[i % len(ids)]]})
            assert not result.is_error, text_of(result)
            (info,) = json.loads(text_of(result))["notes"]
            assert info["deckName"] == f"D{(i % len(ids)) // 3 % 3}"
    return results


def fifty() -> list[dict[str, str]]:
    return [{"Prompt": f"Вопрос {i}", "Response": f"Ответ {i}"} for i in range(50)]


@pytest.mark.parametrize(
    "kill",
    [
        ("before", "addNote", 1),  # Anki dies as the batch arrives: nothing added
        ("after", "addNote", 25),  # midway through the multi
        ("after", "addNote", 50),  # every note added, the answer lost
        ("after", "findCards", 2),  # added, misfiled cards found, the answer lost
        ("before", "changeDeck", 1),  # misfiled cards found, not yet moved
    ],
    ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}",
)
def test_a_kill_at_any_point_ends_with_every_note_once_in_its_deck(
    anki: FakeAnki, kill: tuple[str, str, int]
) -> None:
    services.model_info_get()  # the model exists, as in daily use
    when, action, nth = kill
    (anki.state.kill_before if when == "before" else anki.state.kill_after)(action, nth)
    result = services.notes_add_from_model(items=fifty(), deck="Колода")
    anki.wait_killed()
    statuses = Counter(d.status for d in result.details)
    assert set(statuses) <= {"ok", "queued"}
    anki.start()
    journal.notes_flush()
    notes = anki.notes()
    assert sorted(n["fields"]["Prompt"] for n in notes) == sorted(i["Prompt"] for i in fifty())
    assert deck_of(anki) == {"Колода": 50}
    rows = list(Note.objects.all())
    assert len(rows) == 50
    assert {r.status for r in rows} == {"sent"}
    assert sorted(r.anki_note_id for r in rows) == sorted(n["id"] for n in notes)  # type: ignore[type-var]
    assert all(r.placed and r.unanswered_since is None for r in rows)
    assert journal.notes_flush().sent == 0
    assert len(anki.notes()) == 50


def test_a_note_the_user_already_had_stays_a_duplicate_and_in_its_deck(anki: FakeAnki) -> None:
    services.notes_add_from_model(items=[{"Prompt": "mine"}], deck="Own")
    Note.objects.all().delete()  # the user's own note, not in this journal
    anki.state.kill_after("addNote", 1)
    services.notes_add_from_model(items=[{"Prompt": "mine"}, {"Prompt": "new"}], deck="Other")
    anki.wait_killed()
    anki.start()
    Note.objects.update(unanswered_since=None)  # an old answer we never lost
    journal.notes_flush()
    assert {r.fields["Prompt"]: r.status for r in Note.objects.all()} == {
        "mine": "duplicate",
        "new": "sent",
    }
    assert deck_of(anki, "Prompt:mine") == {"Own": 1}


@pytest.mark.queue_thread
def test_without_a_broker_queued_notes_reach_anki_within_10_s_with_no_further_call(
    anki: FakeAnki, settings: Any
) -> None:
    settings.ANKI_WAIT_POLL = 1
    anki.stop()
    with background.using_broker(False):
        result = services.notes_add_from_model(
            items=[{"Prompt": f"ждёт {i}"} for i in range(20)], deck="Очередь"
        )
        assert [d.status for d in result.details] == ["queued"] * 20
        time.sleep(1.5)  # the thread has tried and found Anki closed
        anki.start()
        back = time.monotonic()
        done = Note.objects.filter(status="sent", placed=True)
        while done.count() < 20 and time.monotonic() - back < 10:
            time.sleep(0.1)
    assert done.count() == 20  # delivered and placed within 10 s of Anki coming back
    assert len(anki.notes()) == 20
    assert deck_of(anki) == {"Очередь": 20}


@pytest.mark.queue_thread
def test_without_a_broker_a_call_that_reaches_anki_delivers_what_waits(
    anki: FakeAnki, settings: Any
) -> None:
    settings.ANKI_WAIT_POLL = 600  # the thread would not ask again in this test's time
    anki.stop()
    with background.using_broker(False):
        services.notes_add_from_model(items=[{"Prompt": f"w{i}"} for i in range(5)])
        time.sleep(0.5)
        anki.start()
        services.notes_add_from_model(items=[{"Prompt": "the next call"}])
        deadline = time.monotonic() + 10
        while len(anki.notes()) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(anki.notes()) == 6


def test_with_a_broker_a_call_that_reaches_anki_starts_a_flush_at_once(
    anki: FakeAnki, monkeypatch: pytest.MonkeyPatch
) -> None:
    from config.celery import app

    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append((name, kw)))
    anki.stop()
    with background.using_broker(True):
        services.notes_add_from_model(items=[{"Prompt": "queued"}])
        anki.start()
        services.notes_add_from_model(items=[{"Prompt": "reaches Anki"}])
    assert [name for name, _ in sent] == ["anki_bridge.flush", "anki_bridge.flush"]
    assert sent[0][1].get("countdown")  # Anki away: later
    assert not sent[1][1].get("countdown")  # Anki back: now


# --- media ------------------------------------------------------------------------------


def with_images(count: int) -> list[dict[str, Any]]:
    return [
        {"Prompt": f"img {i}", "images": [{"image_base64": png_base64(300, 200, "blue"),
                                           "target_field": "Prompt", "filename": f"p{i}.png"}]}
        for i in range(count)
    ]  # fmt: skip


def test_media_go_by_path_when_anki_shares_the_disk(
    anki: FakeAnki, settings: Any, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    settings.ANKI_MEDIA_SHARED_DIR = str(tmp_path / "shared")
    services.model_info_get()
    anki.state.request_bytes.clear()
    result = services.notes_add_from_model(items=with_images(10), deck="Pics")
    assert [d.status for d in result.details] == ["ok"] * 10
    assert max(anki.state.request_bytes) < 20_000  # no image travelled in a request
    media = anki.media_files()
    assert len([n for n in media if n.startswith("p")]) == 10
    assert all(media[n][:2] == b"\xff\xd8" for n in media if n.startswith("p"))
    assert list((tmp_path / "shared").iterdir()) == []  # the files for Anki are removed


def test_an_anki_that_cannot_read_the_path_gets_the_data_and_keeps_getting_it(
    anki: FakeAnki, settings: Any, tmp_path: Any
) -> None:
    settings.ANKI_MEDIA_SHARED_DIR = str(tmp_path / "shared")
    anki.state.sandboxed = True
    services.model_info_get()
    result = services.notes_add_from_model(items=with_images(3), deck="Pics")
    assert [d.status for d in result.details] == ["ok"] * 3
    assert not any(d.warnings for d in result.details if d.warnings and "media" in str(d))
    assert len([n for n in anki.media_files() if n.startswith("p")]) == 3
    assert media_upload.strategy() == "data"  # remembered: no path attempt next time


def test_data_uploads_stay_in_requests_whose_cost_per_byte_is_flat(
    anki: FakeAnki, settings: Any
) -> None:
    settings.ANKI_MEDIA_UPLOAD = "data"
    services.model_info_get()
    anki.state.request_bytes.clear()
    images = [{"Prompt": f"big {i}", "images": [{"image_base64": png_base64(700, 700, "red"),
               "target_field": "Prompt", "max_side": 700}]} for i in range(12)]  # fmt: skip
    result = services.notes_add_from_model(items=images, deck="Pics")
    assert [d.status for d in result.details] == ["ok"] * 12
    assert max(anki.state.request_bytes) <= media_upload.REQUEST_BYTES + 10_000


def test_the_bridge_client_never_reuses_a_connection(anki: FakeAnki) -> None:
    with AnkiClient() as client:
        assert [client.version() for _ in range(100)] == [6] * 100


def test_killed_again_while_the_flush_recovers_still_ends_with_every_note_once_in_its_deck(
    anki: FakeAnki,
) -> None:
    services.model_info_get()
    anki.state.kill_after("addNote", 30)
    services.notes_add_from_model(items=fifty(), deck="Колода")
    anki.wait_killed()
    anki.start()
    anki.state.kill_before("changeDeck")  # the flush adds the other 20, then Anki dies again
    with pytest.raises(AnkiUnavailable):
        journal.notes_flush()
    anki.wait_killed()
    anki.start()
    journal.notes_flush()
    assert len(anki.notes()) == 50
    assert deck_of(anki) == {"Колода": 50}
    assert Note.objects.filter(status="sent", placed=True, anki_note_id__isnull=False).count() == 50


def test_add_notes_places_cards_in_a_deck_named_in_another_letter_case(anki: FakeAnki) -> None:
    services.notes_add_from_model(items=[{"Prompt": "makes the deck"}], deck="Физика")
    result = services.notes_add(
        notes=[{"fields": {"Prompt": f"q{i}", "Response": "a"}} for i in range(3)], deck="физика"
    )
    assert [d.status for d in result.details] == ["ok"] * 3
    assert deck_of(anki) == {"Физика": 4}
