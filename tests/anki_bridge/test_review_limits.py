"""A review session follows the deck's options as Anki's own reviewer does (issue 52,
item 3): new cards per day less those introduced today, reviews per day, new cards mixed
among the reviews; checked against the stand-in's Anki scheduler (`get_queued_cards`)."""

from __future__ import annotations

from typing import Any

import pytest
from anki.consts import CARD_TYPE_REV, QUEUE_TYPE_REV
from django.contrib.auth import get_user_model

from anki_bridge import review, review_queue
from anki_bridge.models import ReviewCard
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.conftest import orm

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

DECK = "Английский"


def deck_with_limits(anki: FakeAnki, *, new_per_day: int, reviews_per_day: int = 200) -> None:
    """10 new cards and 4 reviews due (each on its own day) in DECK, whose options allow
    `new_per_day` new cards and `reviews_per_day` reviews a day."""
    with anki.state.lock:
        col = anki.state.col
        basic = col.models.by_name("Basic")
        deck_id = col.decks.id(DECK)
        for n in range(14):
            note = col.new_note(basic)
            note["Front"], note["Back"] = f"word {n}", f"слово {n}"
            col.add_note(note, deck_id)
        for days_late, card_id in enumerate(sorted(col.find_cards(f'"deck:{DECK}"'))[:4]):
            card = col.get_card(card_id)
            card.type, card.queue, card.ivl = CARD_TYPE_REV, QUEUE_TYPE_REV, 5
            card.due = col.sched.today - days_late
            col.update_card(card)
        config = col.decks.config_dict_for_deck_id(deck_id)
        config["new"]["perDay"] = new_per_day
        config["rev"]["perDay"] = reviews_per_day
        col.decks.save(config)


def anki_queue(anki: FakeAnki) -> list[int]:
    """The cards Anki's own reviewer would show of DECK today, in its order."""
    with anki.state.lock:
        col = anki.state.col
        col.decks.select(col.decks.id(DECK))
        return [int(q.card.id) for q in col.sched.get_queued_cards(fetch_limit=100).cards]


def session_cards(user: Any) -> list[tuple[int, str]]:
    started = review.session_start(user=user, deck=DECK, include_new=True, limit=50)
    cards = ReviewCard.objects.filter(session__public_id=started.session).order_by("position")
    return list(cards.values_list("card_id", "kind"))


async def test_a_session_offers_the_new_cards_the_deck_allows_in_anki_order(
    anki: FakeAnki,
) -> None:
    await orm(lambda: deck_with_limits(anki, new_per_day=3))

    def scenario() -> None:
        user = get_user_model().objects.create_user(username="learner")
        cards = session_cards(user)
        kinds = [kind for _, kind in cards]
        assert kinds.count("new") == 3  # of 10
        assert kinds.count("review") == 4
        assert [card for card, _ in cards] == anki_queue(anki)  # new mixed among reviews
        # a new card studied today counts: 2 are left
        with anki.collection() as col:  # as the reviewer does: the top card each time
            new_card = ""
            while new_card != "new":
                top = col.sched.get_queued_cards().cards[0]
                new_card = dict(cards)[top.card.id]
                card = col.get_card(top.card.id)
                card.start_timer()
                col.sched.answerCard(card, 4)
        assert [kind for _, kind in session_cards(user)].count("new") == 2

    await orm(scenario)


async def test_reviews_per_day_and_new_cards_after_reviews(anki: FakeAnki) -> None:
    await orm(lambda: deck_with_limits(anki, new_per_day=2, reviews_per_day=3))

    def options(**changes: int) -> None:
        with anki.collection() as col:
            config = col.decks.config_dict_for_deck_id(col.decks.id(DECK))
            config["rev"]["perDay"] = changes.get("reviews", config["rev"]["perDay"])
            config["newMix"] = changes.get("mix", config["newMix"])
            col.decks.save(config)

    def scenario() -> None:
        user = get_user_model().objects.create_user(username="learner")
        cards = session_cards(user)
        # 3 of the 4 reviews; the review limit caps new cards too (Anki's v3 scheduler)
        assert [kind for _, kind in cards] == ["review"] * 3
        assert [card for card, _ in cards] == anki_queue(anki)
        options(reviews=200, mix=review_queue.NEW_AFTER_REVIEWS)
        cards = session_cards(user)
        assert [kind for _, kind in cards] == ["review"] * 4 + ["new"] * 2
        assert [card for card, _ in cards] == anki_queue(anki)

    await orm(scenario)
