"""Review sessions held by the server and note edits (issue 29, items 2–4): through the
SDK client of a `manage.py runmcp` spawned over stdio, on the stand-in, whose actions run
Anki's own collection and scheduler."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from anki.consts import CARD_TYPE_REV, QUEUE_TYPE_REV
from django.contrib.auth import get_user_model
from django.utils import timezone
from mcp import Client
from mcp.shared.exceptions import MCPError

from anki_bridge import review
from anki_bridge.client import AnkiClient
from anki_bridge.models import NoteChange, ReviewCard, ReviewSession
from core.exceptions import Conflict, NotFound
from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.test_decks import runmcp
from tests.conftest import STARTUP_DEADLINE, orm, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

DECK = "Физика::Механика"
# front → back; the backs share no word with any front
CARDS = {
    "Второй закон Ньютона": "F = m·a: сила равна массе, умноженной на ускорение",
    "Единица силы в СИ": "ньютон (Н) — кг·м/с²",
    "Закон сохранения импульса": "в замкнутой системе суммарный p постоянен",
    "Ускорение свободного падения": "около 9,81 м/с² у поверхности Земли",
    "Третий закон Ньютона": "действие равно противодействию",
}


def deck_to_review(anki: FakeAnki) -> dict[str, int]:
    """The deck's cards: one in learning (answered «Again»), two reviews due (one two days
    overdue), one review due later, one new; and a note in another deck. Card ids by
    front."""
    with anki.state.lock:
        col = anki.state.col
        basic = col.models.by_name("Basic")
        deck_id = col.decks.id(DECK)
        for front, back in CARDS.items():
            note = col.new_note(basic)
            note["Front"], note["Back"] = front, back
            col.add_note(note, deck_id)
        other = col.new_note(basic)
        other["Front"], other["Back"] = "Столица Франции", "Париж"
        col.add_note(other, col.decks.id("География"))
        ids = {col.get_card(c).note()["Front"]: c for c in col.find_cards(f'"deck:{DECK}"')}
        for front, due in (("Единица силы в СИ", 0), ("Второй закон Ньютона", -2)):
            card = col.get_card(ids[front])
            card.type, card.queue, card.ivl = CARD_TYPE_REV, QUEUE_TYPE_REV, 5
            card.due = col.sched.today + due
            col.update_card(card)
        later = col.get_card(ids["Третий закон Ньютона"])
        later.type, later.queue, later.ivl = CARD_TYPE_REV, QUEUE_TYPE_REV, 20
        later.due = col.sched.today + 7
        col.update_card(later)
        learner = col.get_card(ids["Закон сохранения импульса"])
        learner.start_timer()
        col.sched.answerCard(learner, 1)  # «Again»: in learning, due within minutes
        return {front: int(cid) for front, cid in ids.items()}


def said(result: Any) -> str:
    """Everything a tool call answered: its text and its structured content."""
    return text_of(result) + json.dumps(result.structured_content or {}, ensure_ascii=False)


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, said(result)
    return text_of(result)


async def test_a_review_shows_no_back_before_reveal_rates_once_and_survives_a_restart(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    ids = await orm(deck_to_review, anki)
    answered: dict[int, int] = {}
    before_reveal: list[str] = []  # every answer the model had before each reveal
    order: list[str] = []
    eases = iter([3, 1, 4, 2, 3])

    async def one_card(client: Client, session: str) -> None:
        shown = await client.call_tool("anki.review_next", {"session": session})
        before_reveal.append(said(shown))
        card = shown.structured_content
        front = card["front"]
        order.append(front)
        assert front in CARDS, card
        # the back is not in anything said so far
        assert not any(CARDS[front] in text for text in before_reveal)
        assert "not been revealed" in await refused(
            client, "anki.review_rate", session=session, card=card["card"], ease=3
        )
        # asking again shows the same card (nothing is skipped by a repeated call)
        again = await call(client, "anki.review_next", session=session)
        assert again["card"] == card["card"]
        revealed = await call(client, "anki.review_reveal", session=session, card=card["card"])
        assert CARDS[front] in revealed["back"]
        assert front not in revealed["back"]  # the back only, not the front repeated
        assert set(revealed["next_intervals"]) == {"again", "hard", "good", "easy"}
        ease = next(eases)
        rated = await call(
            client, "anki.review_rate", session=session, card=card["card"], ease=ease
        )
        assert rated["ease"] == ease
        answered[card["card"]] = ease
        # rated once; a card rated «Again» comes back later in the session, as in Anki
        refusal = "not been revealed" if ease == 1 else "rated already"
        assert refusal in await refused(
            client, "anki.review_rate", session=session, card=card["card"], ease=4
        )

    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        started = await client.call_tool(
            "anki.review_start", {"deck": DECK, "include_new": True, "limit": 10}
        )
        before_reveal.append(said(started))
        session = started.structured_content["session"]
        assert {k: started.structured_content[k] for k in ("learning", "review", "new")} == {
            "learning": 1, "review": 2, "new": 1,
        }  # fmt: skip
        assert "not a card of this session" in await refused(
            client, "anki.review_rate", session=session, card=1, ease=3
        )
        # the learning card, revealed in another session of the same deck: not in this one
        other = await call(client, "anki.review_start", deck=DECK, include_new=True)
        first_of_other = await call(client, "anki.review_next", session=other["session"])
        await call(client, "anki.review_reveal", session=other["session"],
                   card=first_of_other["card"])  # fmt: skip
        assert "not been revealed" in await refused(
            client, "anki.review_rate", session=session, card=first_of_other["card"], ease=2
        )
        for _ in range(2):
            await one_card(client, session)
    # a new process (a new desktop session) goes on with the same session
    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        for _ in range(3):  # the two left, and the one rated «Again» once more
            await one_card(client, session)
        end = await call(client, "anki.review_next", session=session)
        assert end["done"] is True
        assert sum(end["rated"].values()) == 4
        assert "no review session" in await refused(client, "anki.review_next", session="unknown")
    # Anki's order: the learning card, the reviews by due date with the new card mixed in
    assert order == [
        "Закон сохранения импульса", "Второй закон Ньютона", "Ускорение свободного падения",
        "Единица силы в СИ", "Второй закон Ньютона",
    ]  # fmt: skip
    with AnkiClient() as anki_client:
        log = anki_client.reviews_of_cards(list(answered))
    for card, ease in answered.items():
        assert [entry["ease"] for entry in log[card]][-1] == ease, (card, log[card])
    assert len(log[ids["Закон сохранения импульса"]]) == 2  # its «Again» before, and ours


def _user(name: str) -> Any:
    return get_user_model().objects.create_user(username=name)


async def test_a_session_belongs_to_its_user_and_expires(anki: FakeAnki) -> None:
    await orm(deck_to_review, anki)

    def scenario() -> None:
        alice, bob = _user("alice"), _user("bob")
        started = review.session_start(user=alice, deck=DECK, include_new=False, limit=5)
        card = review.card_next(user=alice, session=started.session)
        with pytest.raises(NotFound, match="no review session"):
            review.card_next(user=bob, session=started.session)
        with pytest.raises(NotFound, match="no review session"):
            review.card_reveal(user=bob, session=started.session, card=card.card or 0)
        ReviewSession.objects.filter(public_id=started.session).update(
            expires_at=timezone.now() - timedelta(minutes=1)
        )
        with pytest.raises(NotFound, match="expired"):
            review.card_reveal(user=alice, session=started.session, card=card.card or 0)
        # a new session clears the expired ones
        review.session_start(user=bob, deck=DECK, include_new=False, limit=5)
        assert not ReviewSession.objects.filter(public_id=started.session).exists()
        assert not ReviewCard.objects.filter(session__public_id=started.session).exists()

    await orm(scenario)


async def test_a_deck_anki_lacks_is_refused_and_not_created(anki: FakeAnki) -> None:
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
        text = await refused(client, "anki.review_start", deck="Нет такой колоды")
    assert "deck" in text
    assert "Нет такой колоды" in text
    with anki.collection() as col:
        assert col.decks.id_for_name("Нет такой колоды") is None


async def test_update_note_checks_names_refuses_an_open_note_and_reads_back(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    ids = await orm(deck_to_review, anki)
    with anki.collection() as col:
        note_id = int(col.get_card(ids["Единица силы в СИ"]).nid)
    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        text = await refused(client, "anki.update_note", note_id=note_id, fields={"back": "ньютон"})
        assert "'back'" in text
        assert "Front, Back" in text
        updated = await call(
            client, "anki.update_note", note_id=note_id,
            fields={"Back": "ньютон, Н = кг·м/с²"}, tags=["механика", "СИ"],
        )  # fmt: skip
        assert updated["changed"] == ["Back"]
        assert sorted(updated["tags"]) == sorted(["механика", "СИ"])
        anki.select_in_browser([note_id])
        text = await refused(client, "anki.update_note", note_id=note_id, fields={"Back": "?"})
        assert "open in Anki's Browser" in text
        # an add-on without guiSelectedNotes: the editor's copy wins, and the read-back says so
        anki.state.unsupported.add("guiSelectedNotes")
        text = await refused(client, "anki.update_note", note_id=note_id, fields={"Back": "?"})
        assert "did not keep" in text
        assert "Back" in text
        assert "no note" in await refused(
            client, "anki.update_note", note_id=1, fields={"Back": "?"}
        )
    [note] = anki.notes(f"nid:{note_id}")
    assert note["fields"]["Back"] == "ньютон, Н = кг·м/с²"
    assert sorted(note["tags"]) == sorted(["механика", "СИ"])
    journal = await orm(
        lambda: list(NoteChange.objects.order_by("id").values_list("status", "anki_note_id"))
    )
    assert journal == [("sent", note_id), ("failed", note_id)]  # refused ones go nowhere


async def test_a_card_reads_without_anki_s_play_tags_and_invisible_marks(anki: FakeAnki) -> None:
    """The default note type reads its prompt aloud (`{{tts …}}`): Anki renders a play
    tag in the side's HTML, and wraps the intervals' values in isolation marks. Neither is
    text for the model or the learner."""
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
        await call(client, "anki.add_from_model", items=[{"Prompt": "T1"}], deck="QA")
        session = (await call(client, "anki.review_start", deck="QA", include_new=True))["session"]
        card = await call(client, "anki.review_next", session=session)
        revealed = await call(client, "anki.review_reveal", session=session, card=card["card"])
        read = await client.read_resource("anki://deck/QA")
    assert card["front"] == "T1"
    intervals = "".join(revealed["next_intervals"].values())
    assert intervals
    assert not {"\u2068", "\u2069"} & set(intervals)
    assert "anki:play" not in read.contents[0].text  # type: ignore[union-attr]


async def test_the_deck_resource_and_the_review_prompt(anki: FakeAnki) -> None:
    await orm(deck_to_review, anki)
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
        read = await client.read_resource(f"anki://deck/{DECK}")
        text = read.contents[0].text  # type: ignore[union-attr]
        assert "New: 1 · learning: 1 · review: 2 · due today: 3 · cards: 5" in text
        assert "Третий закон Ньютона" in text
        assert "Столица Франции" not in text
        with pytest.raises(MCPError, match="no deck"):
            await client.read_resource("anki://deck/Нет")
        prompt = await client.get_prompt("review_session", {"deck": DECK})
        message = prompt.messages[0].content.text  # type: ignore[union-attr]
    steps = ["anki.review_start", "anki.review_next", "anki.review_reveal", "anki.review_rate"]
    positions = [message.index(step) for step in steps]
    assert positions == sorted(positions)
    assert DECK in message
    # the numbers a model fills in are written as numbers: `"ease": "3"` is refused
    assert '"card": <card>, "ease": <1–4>}' in message


def _revealed(user: Any) -> tuple[str, int]:
    """A session of DECK with its first card shown and revealed."""
    started = review.session_start(user=user, deck=DECK, include_new=False, limit=5)
    card = review.card_next(user=user, session=started.session).card
    assert card is not None
    review.card_reveal(user=user, session=started.session, card=card)
    return started.session, card


def _answers(anki: FakeAnki, card: int) -> int:
    with anki.collection() as col:
        return int(col.db.scalar("select count() from revlog where cid = ?", card))


def _state(session: str, card: int) -> str:
    return str(ReviewCard.objects.get(session__public_id=session, card_id=card).state)


async def test_a_rating_whose_reply_is_lost_is_confirmed_not_sent_twice(anki: FakeAnki) -> None:
    """Anki closed before the rating: revealed again, rated once Anki is back. Anki killed
    after rating, its reply lost: the card waits as `rating`; the next call reads Anki's
    count, confirms the rating and sends nothing."""
    await orm(deck_to_review, anki)

    def scenario() -> None:
        from anki_bridge.exceptions import AnkiUnavailable

        user = _user("learner")
        session, card = _revealed(user)
        before = _answers(anki, card)
        anki.stop()
        with pytest.raises(AnkiUnavailable, match="not reachable"):
            review.card_rate(user=user, session=session, card=card, ease=3)
        assert _state(session, card) == "revealed"  # nothing reached Anki
        anki.start()
        anki.state.kill_after("answerCards")
        with pytest.raises(AnkiUnavailable, match="may have reached Anki"):
            review.card_rate(user=user, session=session, card=card, ease=3)
        anki.wait_killed()
        assert _state(session, card) == "rating"
        assert _answers(anki, card) == before + 1  # Anki had rated it
        anki.start()
        rated = review.card_rate(user=user, session=session, card=card, ease=3)
        assert (rated.card, rated.ease) == (card, 3)
        assert _answers(anki, card) == before + 1  # confirmed, not sent again
        assert _state(session, card) == "rated"
        with pytest.raises(Conflict, match="rated already"):
            review.card_rate(user=user, session=session, card=card, ease=3)

    await orm(scenario)


async def test_a_card_answered_elsewhere_or_being_rated_is_not_rated_again(
    anki: FakeAnki,
) -> None:
    await orm(deck_to_review, anki)

    def scenario() -> None:
        user = _user("learner")
        session, card = _revealed(user)
        with anki.collection() as col:  # the learner answers it in Anki meanwhile
            answered = col.get_card(card)
            answered.start_timer()
            col.sched.answerCard(answered, 4)
        before = _answers(anki, card)
        with pytest.raises(Conflict, match="answered in Anki or in another session"):
            review.card_rate(user=user, session=session, card=card, ease=3)
        assert _answers(anki, card) == before
        assert _state(session, card) == "skipped"
        # a card another call is rating right now is refused, not sent a second time
        other, second = _revealed(user)
        ReviewCard.objects.filter(session__public_id=other, card_id=second).update(
            state=ReviewCard.State.RATING, ease=3,
            claimed_until=timezone.now() + timedelta(minutes=1),
        )  # fmt: skip
        with pytest.raises(Conflict, match="being rated by another call"):
            review.card_rate(user=user, session=other, card=second, ease=3)

    await orm(scenario)


async def test_a_card_suspended_in_anki_mid_session_is_left_out_not_taken_back(
    anki: FakeAnki,
) -> None:
    """A card suspended in Anki after the session began was shown and rated, and the
    rating took it back into the learning queue: the learner's suspension undone."""
    await orm(deck_to_review, anki)

    def queue_of(card: int) -> int:
        with anki.collection() as col:
            return int(col.get_card(card).queue)

    def scenario() -> None:
        user = _user("learner")
        session, card = _revealed(user)
        with anki.collection() as col:
            col.sched.suspend_cards([card])
        before = _answers(anki, card)
        with pytest.raises(Conflict, match="was suspended in Anki meanwhile; it is not rated"):
            review.card_rate(user=user, session=session, card=card, ease=3)
        assert _answers(anki, card) == before
        assert queue_of(card) == -1  # still suspended
        assert _state(session, card) == "skipped"
        # one suspended before it is shown is passed over
        shown = review.card_next(user=user, session=session)
        with anki.collection() as col:
            col.sched.suspend_cards([shown.card])
        ReviewCard.objects.filter(session__public_id=session, card_id=shown.card).update(
            state=ReviewCard.State.QUEUED
        )
        following = review.card_next(user=user, session=session)
        assert following.card != shown.card
        assert _state(session, shown.card) == "skipped"

    await orm(scenario)
