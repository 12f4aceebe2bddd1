"""`anki.decks` (issue 29, item 1): the deck tree with today's counts, equal to what the
stand-in's Anki collection (Anki's own scheduler) reports, asked through the SDK client
of a `manage.py runmcp` spawned over stdio."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anki.consts import CARD_TYPE_REV, QUEUE_TYPE_REV
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.conftest import MANAGE, PYTHON, ROOT, STARTUP_DEADLINE, subprocess_env, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

DECKS = {
    "Математика": ["Производная x²", "Интеграл 1/x", "Предел sin x / x"],
    "Математика::Геометрия": ["Площадь круга", "Теорема Пифагора"],
    "Физика": ["Второй закон Ньютона", "Закон Ома"],
    "English": ["to be", "to have"],
}


def study_material(anki: FakeAnki) -> None:
    """Notes in four decks (one a subdeck), and cards in every state: new, in learning
    (answered «Again»), due for review today, and a review not due yet."""
    with anki.state.lock:
        col = anki.state.col
        basic = col.models.by_name("Basic")
        for deck, fronts in DECKS.items():
            deck_id = col.decks.id(deck)
            for front in fronts:
                note = col.new_note(basic)
                note["Front"], note["Back"] = front, f"ответ: {front}"
                col.add_note(note, deck_id)
        cards = {col.get_card(cid).note()["Front"]: col.get_card(cid) for cid in col.find_cards("")}
        for front in ("Площадь круга", "Второй закон Ньютона", "to be"):
            review = cards[front]
            review.type, review.queue = CARD_TYPE_REV, QUEUE_TYPE_REV
            review.ivl, review.due = 3, col.sched.today  # due today
            col.update_card(review)
        later = cards["to have"]
        later.type, later.queue = CARD_TYPE_REV, QUEUE_TYPE_REV
        later.ivl, later.due = 10, col.sched.today + 5  # not due today
        col.update_card(later)
        learner = cards["Закон Ома"]
        learner.start_timer()  # as the reviewer does when it shows the card
        col.sched.answerCard(learner, 1)  # «Again»: in learning


def anki_deck_list(anki: FakeAnki) -> list[dict[str, Any]]:
    """The deck list as Anki's scheduler counts it, in its order (a parent first)."""
    with anki.state.lock:
        col = anki.state.col
        out: list[dict[str, Any]] = []

        def walk(node: Any, level: int) -> None:
            for child in node.children:
                name = col.decks.name(child.deck_id)
                out.append({
                    "name": name, "id": child.deck_id, "level": level,
                    "new": child.new_count, "learning": child.learn_count,
                    "review": child.review_count,
                    "due_today": child.learn_count + child.review_count,
                    "total": child.total_in_deck,
                })  # fmt: skip
                walk(child, level + 1)

        walk(col.sched.deck_due_tree(), 0)
        return out


async def test_the_deck_list_is_ankis_own_counts(anki: FakeAnki) -> None:
    study_material(anki)
    expected = anki_deck_list(anki)
    assert {d["name"] for d in expected} == set(DECKS)  # the empty «Default» is hidden
    by_name = {d["name"]: d for d in expected}
    assert by_name["Физика"]["learning"] == 1
    assert by_name["Физика"]["review"] == 1
    assert by_name["Математика"]["review"] == 1  # its subdeck's card counts in it
    assert by_name["English"]["total"] == 2

    server = StdioServerParameters(
        command=PYTHON,
        args=[MANAGE, "runmcp", "--apps", "anki_bridge"],
        cwd=str(ROOT),
        env=subprocess_env(ANKI_CONNECT_URL=anki.url),
    )
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        result = await client.call_tool("anki.decks", {})
    assert not result.is_error, text_of(result)
    assert json.loads(text_of(result))["decks"] == expected
    assert result.structured_content == {"decks": expected}


async def test_with_anki_closed_the_deck_list_names_anki(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import free_port

    server = StdioServerParameters(
        command=PYTHON,
        args=[MANAGE, "runmcp", "--apps", "anki_bridge"],
        cwd=str(ROOT),
        env=subprocess_env(ANKI_CONNECT_URL=f"http://127.0.0.1:{free_port()}"),
    )
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        result = await client.call_tool("anki.decks", {})
    assert result.is_error
    assert "Anki" in text_of(result)
