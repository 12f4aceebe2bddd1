"""Scheduling control (issue 52, item 7) through the MCP client against the stand-in:
suspend, unsuspend, forget, each card's schedule in anki.note_info; and (item 4) a server
that was already running delivers what a dead sender left at its next read-only call."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from mcp import Client

from anki_bridge import client as ankiconnect
from anki_bridge import scheduling, services, takeover, waiting
from anki_bridge.client import AnkiClient
from anki_bridge.models import Note
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.test_decks import runmcp, study_material
from tests.anki_bridge.test_takeover import DECK, items
from tests.anki_bridge.test_tools import call, call_error
from tests.conftest import STARTUP_DEADLINE, gone_holder_token, orm

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

MISSING = 4_000_000_000_001


def cards(anki: FakeAnki, query: str = "") -> dict[str, int]:
    """Card id by its note's front."""
    with anki.collection() as col:
        return {col.get_card(cid).note()["Front"]: int(cid) for cid in col.find_cards(query)}


def queue_of(anki: FakeAnki, card: int) -> tuple[int, int, int]:
    with anki.collection() as col:
        held = col.get_card(card)  # type: ignore[arg-type]
        return int(held.type), int(held.queue), int(held.ivl)


async def test_suspend_changes_the_known_cards_and_names_the_missing(anki: FakeAnki) -> None:
    study_material(anki)
    held = cards(anki)
    first, second = held["Площадь круга"], held["Закон Ома"]
    answer = await call("anki.suspend", {"card_ids": [first, MISSING]})
    assert answer == {"changed": [first], "missing": [MISSING]}
    assert queue_of(anki, first)[1] == -1
    again = await call("anki.suspend", {"card_ids": [first, second]})
    assert again == {"changed": [second]}  # the first was suspended already
    assert queue_of(anki, second)[1] == -1
    refused = await call_error("anki.suspend", {"card_ids": [MISSING]})
    assert "none of these cards" in refused


def test_the_stand_in_answers_unknown_cards_as_the_add_on_does(anki: FakeAnki) -> None:
    """Why the bridge looks the cards up first: forgetCards answers success for a card
    Anki does not hold; suspend and unsuspend fail on it."""
    with AnkiClient() as client:
        forget, unsuspend, suspend = client.multi(
            [
                ankiconnect.forget_cards([MISSING]),
                ankiconnect.unsuspend([MISSING]),
                ankiconnect.suspend([MISSING]),
            ]
        )
    assert (forget.ok, forget.result) == (True, None)
    assert unsuspend.error == f"Card was not found: {MISSING}"
    assert suspend.error == f"Card was not found: {MISSING}"


async def test_unsuspend_puts_cards_back_in_their_queue(anki: FakeAnki) -> None:
    study_material(anki)
    review = cards(anki)["Площадь круга"]
    with anki.collection() as col:
        col.sched.suspend_cards([review])  # type: ignore[list-item]
    answer = await call("anki.unsuspend", {"card_ids": [review, MISSING]})
    assert answer == {"changed": [review], "missing": [MISSING]}
    assert queue_of(anki, review)[:2] == (2, 2)
    assert (await call("anki.unsuspend", {"card_ids": [review]})) == {"changed": []}


async def test_forget_makes_studied_cards_new_and_leaves_new_ones(anki: FakeAnki) -> None:
    study_material(anki)
    held = cards(anki)
    review, learning, new = held["Площадь круга"], held["Закон Ома"], held["Интеграл 1/x"]
    answer = await call("anki.forget", {"card_ids": [review, learning, new, MISSING]})
    assert answer == {"changed": sorted([review, learning]), "missing": [MISSING]}
    for card in (review, learning):
        assert queue_of(anki, card) == (0, 0, 0)


async def test_the_scheduling_tools_are_small_and_hinted() -> None:
    from core.mcp_server import build_server
    from tests.hints import hints

    async with Client(build_server(["anki_bridge"])) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    for name in ("anki.suspend", "anki.unsuspend", "anki.forget"):
        assert set(tools[name].input_schema["properties"]) == {"card_ids"}
        assert len(tools[name].description or "") < 80, name
    assert hints(tools["anki.forget"]).destructive is True
    for name in ("anki.suspend", "anki.unsuspend"):
        assert (hints(tools[name]).destructive, hints(tools[name]).idempotent) == (False, True)


async def test_note_info_gives_each_cards_schedule(anki: FakeAnki) -> None:
    study_material(anki)
    held = cards(anki)
    review, learning, new = held["Площадь круга"], held["Закон Ома"], held["Интеграл 1/x"]
    with anki.collection() as col:
        card = col.get_card(review)  # type: ignore[arg-type]
        card.due, card.ivl, card.factor, card.reps, card.lapses = (
            col.sched.today + 12,
            20,
            2300,
            7,
            2,
        )
        col.update_card(card)
        col.sched.suspend_cards([new])  # type: ignore[list-item]
        note_of = {cid: int(col.get_card(cid).nid) for cid in (review, learning, new)}  # type: ignore[arg-type]
        position = int(col.get_card(new).due)  # type: ignore[arg-type]
    answer = await call(
        "anki.note_info", {"noteIds": [note_of[c] for c in (review, learning, new)]}
    )
    schedules = [note["schedule"] for note in answer["notes"]]
    assert schedules[0] == [
        {
            "card": review,
            "state": "review",
            "due": (scheduling.anki_date() + timedelta(days=12)).isoformat(),
            "interval": 20,
            "ease": 230,
            "reps": 7,
            "lapses": 2,
        }
    ]
    assert schedules[1][0]["state"] == "learning"
    assert schedules[1][0]["due"].startswith(str(timezone.now().year))
    assert schedules[2] == [
        {
            "card": new,
            "state": "new",
            "queue": "suspended",
            "due": f"#{position}",
            "interval": 0,
            "reps": 0,
            "lapses": 0,
        }
    ]


async def test_a_running_server_delivers_a_dead_senders_rows_at_its_next_read(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    """The server runs before the sender dies (its start-up look finds nothing); its next
    call, a read, has the dead sender's rows delivered (issue 52, item 4)."""
    server = runmcp(anki, {**subprocess_db_env})
    server.env = {
        **{key: value for key, value in (server.env or {}).items() if key != "REDIS_URL"},
        "ANKI_TAKEOVER_CHECK_SECONDS": "0",
    }
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        assert not (await client.call_tool("anki.decks", {})).is_error  # running, nothing left
        anki.stop()
        await orm(lambda: services.notes_add_from_model(items=items(10), deck=DECK))
        token = await orm(gone_holder_token)
        until = timezone.now() + timedelta(minutes=10)  # a long lease: its holder is gone
        await orm(lambda: Note.objects.update(claim=token, claimed_until=until))
        anki.start()
        assert not (await client.call_tool("anki.decks", {})).is_error
        deadline = time.monotonic() + STARTUP_DEADLINE
        sent = 0
        while sent < 10 and time.monotonic() < deadline:
            sent = await orm(lambda: Note.objects.filter(status="sent", placed=True).count())
    assert sent == 10
    assert {n["decks"][0] for n in anki.notes()} == {DECK}


async def test_note_info_gives_the_fsrs_memory_state_where_anki_has_one(anki: FakeAnki) -> None:
    """No AnkiConnect build returns it: it is read with Anki's `prop:s/d/r` searches."""
    with anki.collection() as col:
        col.set_config("fsrs", True)
        basic = col.models.by_name("Basic")
        notes = []
        for front, eases in (("studied", (3, 3)), ("hard", (1, 3)), ("new", ())):
            note = col.new_note(basic)  # type: ignore[arg-type]
            note["Front"], note["Back"] = front, "ответ"
            col.add_note(note, 1)  # type: ignore[arg-type]
            notes.append(int(note.id))
            for ease in eases:
                card = note.cards()[0]
                card.start_timer()
                col.sched.answerCard(card, ease)  # type: ignore[attr-defined]
        expected = []
        for nid in notes[:2]:
            card = col.get_note(nid).cards()[0]  # type: ignore[arg-type]
            state = card.memory_state
            assert state is not None
            retrievability = col.card_stats_data(card.id).fsrs_retrievability
            expected.append((state.stability, (state.difficulty - 1) / 9 * 100, retrievability))
    answer = await call("anki.note_info", {"noteIds": notes})
    schedules = [note["schedule"][0] for note in answer["notes"]]
    for shown, (stability, difficulty, retrievability) in zip(schedules, expected, strict=False):
        assert shown["stability"] == pytest.approx(stability, rel=0.01)
        assert shown["difficulty"] == pytest.approx(difficulty, abs=1)
        assert shown["retrievability"] == pytest.approx(retrievability * 100, abs=1)
    assert "stability" not in schedules[2]  # a new card has no memory state


async def test_without_fsrs_no_memory_state_is_shown(anki: FakeAnki) -> None:
    study_material(anki)
    review = cards(anki)["Площадь круга"]
    with anki.collection() as col:
        note = int(col.get_card(review).nid)  # type: ignore[arg-type]
    answer = await call("anki.note_info", {"noteIds": [note]})
    assert set(answer["notes"][0]["schedule"][0]) == {
        "card",
        "state",
        "due",
        "interval",
        "reps",
        "lapses",
    }


@pytest.mark.queue_thread
async def test_the_web_processs_server_delivers_a_dead_senders_rows_at_a_read(
    anki: FakeAnki, settings: Any
) -> None:
    """The server config/asgi.py builds (no `runmcp` start-up): a read-only call has the
    rows a dead sender left delivered in the background; the web process also looks as it
    starts serving (`core.serving`)."""
    from core.mcp_server import build_server
    from core.serving import _hooks

    assert takeover.notes_takeover_due in _hooks
    settings.ANKI_TAKEOVER_CHECK_SECONDS = 0
    anki.stop()
    await orm(lambda: services.notes_add_from_model(items=items(5), deck=DECK))
    waiting.queue_watch_stop()  # the adding process is gone, and its waiting thread
    token = await orm(gone_holder_token)
    until = timezone.now() + timedelta(minutes=10)
    await orm(lambda: Note.objects.update(claim=token, claimed_until=until))
    anki.start()
    async with Client(build_server(["anki_bridge"])) as client:
        assert not (await client.call_tool("anki.decks", {})).is_error
    deadline = time.monotonic() + STARTUP_DEADLINE
    sent = 0
    while sent < 5 and time.monotonic() < deadline:
        sent = await orm(lambda: Note.objects.filter(status="sent", placed=True).count())
    assert sent == 5
