"""After a crash (issue 52, item 4): a new MCP server delivers what a killed one left
though its first call only reads; on builds without per-note verdicts (the 2023
AnkiConnect) a note whose answer was lost is found, not called a duplicate; a retry of
the interrupted call delivers exactly the rest."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from mcp import Client

from anki_bridge import journal, services
from anki_bridge.models import Note
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.test_decks import runmcp
from tests.conftest import STARTUP_DEADLINE, gone_holder_token, orm

pytestmark = pytest.mark.django_db(transaction=True)

DECK = "Аренда"


def items(count: int) -> list[dict[str, str]]:
    return [
        {"Prompt": f"Вопрос {i}", "Response": f"Ответ {i}", "dedup_key": f"q{i}"}
        for i in range(count)
    ]


@pytest.mark.anyio
async def test_a_new_server_whose_first_call_reads_delivers_what_a_killed_one_left(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    anki.stop()
    await orm(lambda: services.notes_add_from_model(items=items(30), deck=DECK))
    token = await orm(gone_holder_token)
    until = timezone.now() + timedelta(minutes=10)  # a long lease: its holder is gone
    await orm(lambda: Note.objects.update(claim=token, claimed_until=until))
    anki.start()
    # A desktop client's process and no broker (as `tool-hub mcp` on a laptop): the new
    # server delivers itself. With REDIS_URL the delivery is a task for the workers.
    server = runmcp(anki, {**subprocess_db_env})
    server.env = {key: value for key, value in (server.env or {}).items() if key != "REDIS_URL"}
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        decks = await client.call_tool("anki.decks", {})
        assert not decks.is_error
        deadline = time.monotonic() + STARTUP_DEADLINE
        sent = 0
        while sent < 30 and time.monotonic() < deadline:
            sent = await orm(lambda: Note.objects.filter(status="sent", placed=True).count())
    assert sent == 30
    notes = anki.notes()
    assert len(notes) == 30
    assert {n["decks"][0] for n in notes} == {DECK}


def test_on_a_build_without_verdicts_a_lost_answer_is_found_and_placed(anki: FakeAnki) -> None:
    """The 2023 AnkiConnect (no canAddNotesWithErrorDetail): Anki added the notes, the
    answers were lost, the cards still in Default; the next delivery finds each note by
    its content and moves its cards into the deck."""
    anki.state.unsupported = {"canAddNotesWithErrorDetail"}
    anki.state.kill_before("changeDeck")
    services.notes_add_from_model(items=items(5), deck=DECK)
    anki.wait_killed()
    anki.start()
    held = {n["id"] for n in anki.notes()}
    assert len(held) == 5
    assert {n["decks"][0] for n in anki.notes()} == {"Default"}  # where Anki filed them
    # the answers never came back: the rows only show that their addNote went out
    Note.objects.update(status="pending", anki_note_id=None, unanswered_since=timezone.now())
    outcome = journal.notes_flush()
    assert (outcome.sent, outcome.duplicate) == (5, 0)
    rows = list(Note.objects.all())
    assert {r.anki_note_id for r in rows} == held
    assert all(r.status == "sent" and r.placed for r in rows)
    assert {n["decks"][0] for n in anki.notes()} == {DECK}
    assert len(anki.notes()) == 5


@pytest.mark.parametrize("keyed", [True, False], ids=["dedup_key", "no-key"])
def test_a_retry_of_an_interrupted_add_delivers_exactly_the_rest(
    anki: FakeAnki, keyed: bool
) -> None:
    """A call journaled 20 of its 50 notes and Anki took 10 of them when the call died:
    the same call again leaves Anki with each of the 50 once, in the deck. With
    dedup_key the retry's own answer says so; without, Anki's duplicate check (the note
    type and first field) refuses what it holds, and the flush settles the old rows."""
    notes = (
        items(50)
        if keyed
        else [{k: v for k, v in i.items() if k != "dedup_key"} for i in items(50)]
    )
    anki.state.kill_after("addNote", 10)
    first = services.notes_add_from_model(items=notes[:20], deck=DECK)
    anki.wait_killed()
    assert {d.status for d in first.details} == {"queued"}
    token = gone_holder_token()
    Note.objects.update(claim=token, claimed_until=timezone.now() + timedelta(minutes=10))
    anki.start()
    retry = services.notes_add_from_model(items=notes, deck=DECK)
    statuses = [d.status for d in retry.details]
    if keyed:
        assert set(statuses) == {"ok"}
        assert Note.objects.filter(status="sent").count() == 50
    else:
        assert statuses.count("duplicate") == 10  # the ones Anki took before the kill
        journal.notes_flush()
    held = anki.notes()
    assert sorted(n["fields"]["Prompt"] for n in held) == sorted(i["Prompt"] for i in notes)
    assert {n["decks"][0] for n in held} == {DECK}
