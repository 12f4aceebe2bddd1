"""Review sessions held by the server (issue 29, item 3): a deck's cards in Anki's order,
the front first and the back only when asked, each card rated once through Anki's
scheduler.

The session and its cards are rows (`ReviewSession`, `ReviewCard`): any process of the
deployment serves the next call, a restart loses nothing, a user sees only their own. A
card moves queued → shown → revealed → rating → rated by conditional updates, so two calls
racing on one card cannot both pass a step. What the model reads before `review_reveal`
is the card's front as Anki renders it (its question), never its note's fields: the back
cannot leak through them.

A rating is marked `rating` before it goes to Anki and `rated` once Anki has it; when the
answer does not come (Anki closed meanwhile), the card goes back to `revealed` if Anki's
review log does not hold the answer, so a retry neither loses nor doubles it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import lxml.html
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from anki_bridge.client import AnkiClient, deck_query, find_cards
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from anki_bridge.models import ReviewCard, ReviewSession
from anki_bridge.schemas import ReviewCardOut, ReviewRated, ReviewRevealed, ReviewStarted
from core.exceptions import Conflict, InvalidInput, NotFound

LIMIT_MAX = 200
EASES = {1: "again", 2: "hard", 3: "good", 4: "easy"}
_ANSWER_RULE = re.compile(r"<hr[^>]*id\s*=\s*['\"]?answer['\"]?[^>]*>", re.IGNORECASE)
State = ReviewCard.State


@dataclass(frozen=True)
class _Queue:
    """The cards of a deck to review, each kind in Anki's order."""

    learning: list[int]
    review: list[int]
    new: list[int]


def session_start(
    *, user: AbstractBaseUser, deck: str, include_new: bool, limit: int
) -> ReviewStarted:
    """A session over `deck` (its subdecks too), as Anki's reviewer orders the cards:
    learning cards due now, then review cards by due date, then, when asked, new cards in
    their order; at most `limit`."""
    if not deck.strip():
        raise InvalidInput("deck must name an Anki deck", field="deck")
    if not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput(f"limit must be 1–{LIMIT_MAX}, got {limit}", field="limit")
    with AnkiClient() as client:
        if deck not in client.deck_names():  # asked before any search: no deck is created
            raise InvalidInput(f"deck: Anki has no deck named {deck!r}", field="deck")
        queue = _queue(client, deck, include_new=include_new)
    chosen = [
        (card, kind)
        for kind, cards in (
            (ReviewCard.Kind.LEARNING, queue.learning),
            (ReviewCard.Kind.REVIEW, queue.review),
            (ReviewCard.Kind.NEW, queue.new),
        )
        for card in cards
    ][:limit]
    now = timezone.now()
    ReviewSession.objects.filter(expires_at__lt=now).delete()  # expired ones, anyone's
    with transaction.atomic():
        session = ReviewSession.objects.create(
            owner_id=user.pk, deck=deck, include_new=include_new, expires_at=_expiry(now)
        )
        ReviewCard.objects.bulk_create(
            ReviewCard(session=session, card_id=card, position=n, kind=kind)
            for n, (card, kind) in enumerate(chosen)
        )
    kinds = [kind for _, kind in chosen]
    return ReviewStarted(
        session=session.public_id,
        deck=deck,
        cards=len(chosen),
        learning=kinds.count(ReviewCard.Kind.LEARNING),
        review=kinds.count(ReviewCard.Kind.REVIEW),
        new=kinds.count(ReviewCard.Kind.NEW),
        expires_at=session.expires_at,
    )


def _queue(client: AnkiClient, deck: str, *, include_new: bool) -> _Queue:
    within = deck_query(deck)
    searches = [
        find_cards(f"{within} is:learn is:due"),
        find_cards(f"{within} is:due -is:learn"),
        find_cards(f"{within} is:new -is:suspended -is:buried") if include_new else None,
    ]
    outcomes = client.multi([s for s in searches if s is not None])
    for outcome in outcomes:
        if not outcome.ok:
            raise AnkiError(f"Anki could not search the deck {deck!r}: {outcome.error}")
    learning, review, *new = [list(map(int, o.result)) for o in outcomes]
    ordered = _in_due_order(client, [*learning, *review, *(new[0] if new else [])])
    return _Queue(
        learning=[c for c in ordered if c in set(learning)],
        review=[c for c in ordered if c in set(review)],
        new=[c for c in ordered if new and c in set(new[0])],
    )


def _in_due_order(client: AnkiClient, cards: list[int]) -> list[int]:
    """`cards` by their due (a learning card's time, a review card's day, a new card's
    position), each kind apart as given; a card Anki no longer holds left out."""
    if not cards:
        return []
    infos = client.cards_info(cards)
    due = {int(info["cardId"]): info.get("due", 0) for info in infos if info}
    return sorted((c for c in cards if c in due), key=lambda c: (due[c], c))


def card_next(*, user: AbstractBaseUser, session: str) -> ReviewCardOut:
    """The card shown now: the one shown and not yet revealed, else the next queued one.
    Its front only. `done` when every card went."""
    held = _session(user, session)
    with AnkiClient() as client:
        while True:
            card = _current(held)
            if card is None:
                return _summary(held)
            info = client.cards_info([card.card_id])[0]
            if not info:  # deleted in Anki meanwhile
                ReviewCard.objects.filter(pk=card.pk).update(state=State.SKIPPED)
                continue
            if card.state == State.QUEUED:
                ReviewCard.objects.filter(pk=card.pk, state=State.QUEUED).update(state=State.SHOWN)
            left = held.cards.filter(state__in=[State.QUEUED, State.SHOWN]).count()
            return ReviewCardOut(
                session=held.public_id,
                card=card.card_id,
                kind=card.kind,
                position=card.position + 1,
                remaining=left - 1,
                deck=info.get("deckName"),
                front=html_text(str(info.get("question", ""))),
            )


def card_reveal(*, user: AbstractBaseUser, session: str, card: int) -> ReviewRevealed:
    """The back of the card shown now, and when each rating would bring it back."""
    held = _session(user, session)
    found = _card(held, card)
    if found.state == State.QUEUED:
        raise Conflict(
            f"card: {card} has not been shown yet; call anki.review_next and show its front "
            "to the learner first"
        )
    if found.state in (State.RATING, State.RATED, State.SKIPPED):
        raise Conflict(f"card: {card} is done in this session ({found.get_state_display()})")
    with AnkiClient() as client:
        info = client.cards_info([card])[0]
    if not info:
        ReviewCard.objects.filter(pk=found.pk).update(state=State.SKIPPED)
        raise NotFound(f"card: Anki no longer holds card {card}; call anki.review_next")
    ReviewCard.objects.filter(pk=found.pk, state=State.SHOWN).update(
        state=State.REVEALED, revealed_at=timezone.now()
    )
    answer = str(info.get("answer", ""))
    parts = _ANSWER_RULE.split(answer, maxsplit=1)
    back = parts[1] if len(parts) == 2 else answer
    intervals = list(info.get("nextReviews") or [])
    return ReviewRevealed(
        session=held.public_id,
        card=card,
        back=html_text(back),
        next_intervals=dict(zip(EASES.values(), intervals, strict=False)) or None,
    )


def card_rate(*, user: AbstractBaseUser, session: str, card: int, ease: int) -> ReviewRated:
    """Rate a card revealed in this session, once, through Anki's scheduler."""
    if ease not in EASES:
        raise InvalidInput(
            f"ease must be 1–4 (1 again, 2 hard, 3 good, 4 easy), got {ease}", field="ease"
        )
    held = _session(user, session)
    found = _card(held, card)
    moved = ReviewCard.objects.filter(pk=found.pk, state=State.REVEALED).update(
        state=State.RATING, ease=ease
    )
    if not moved:
        found.refresh_from_db()
        if found.state != State.RATING:
            raise Conflict(_not_rateable(found))
        if _answered_in_anki(found):  # an earlier call's answer reached Anki
            _rated(found, found.ease or ease)
            raise Conflict(f"card: {card} was rated already ({EASES[found.ease or ease]})")
        ReviewCard.objects.filter(pk=found.pk).update(ease=ease)
    try:
        with AnkiClient() as client:
            (done,) = client.answer_cards([(card, ease)])
    except (AnkiUnavailable, AnkiError):
        found.refresh_from_db()
        if not _answered_in_anki(found):
            ReviewCard.objects.filter(pk=found.pk, state=State.RATING).update(state=State.REVEALED)
        raise
    if not done:
        ReviewCard.objects.filter(pk=found.pk).update(state=State.SKIPPED)
        raise NotFound(f"card: Anki no longer holds card {card}; call anki.review_next")
    _rated(found, ease)
    left = held.cards.filter(state__in=[State.QUEUED, State.SHOWN, State.REVEALED]).count()
    return ReviewRated(session=held.public_id, card=card, ease=ease, remaining=left)


def _rated(card: ReviewCard, ease: int) -> None:
    ReviewCard.objects.filter(pk=card.pk).update(
        state=State.RATED, ease=ease, rated_at=timezone.now()
    )


def _answered_in_anki(card: ReviewCard) -> bool:
    """Whether Anki's review log holds an answer to the card since it was revealed."""
    if card.revealed_at is None:
        return False
    since = int(card.revealed_at.timestamp() * 1000)
    try:
        with AnkiClient() as client:
            entries = client.reviews_of_cards([card.card_id]).get(card.card_id, [])
    except (AnkiUnavailable, AnkiError):
        return False
    return any(int(entry.get("id", 0)) >= since for entry in entries)


def _not_rateable(card: ReviewCard) -> str:
    if card.state == State.RATED:
        return f"card: {card.card_id} was rated already in this session ({EASES[card.ease or 3]})"
    if card.state == State.SKIPPED:
        return f"card: Anki no longer holds card {card.card_id}"
    return (
        f"card: {card.card_id} has not been revealed; a card is rated after the learner "
        "answered and anki.review_reveal showed its back"
    )


def _session(user: AbstractBaseUser, public_id: str) -> ReviewSession:
    """The caller's session, its expiry moved on (it lasts while it is used)."""
    now = timezone.now()
    held = ReviewSession.objects.filter(public_id=public_id, owner_id=user.pk).first()
    if held is None:
        raise NotFound(f"session: you have no review session {public_id!r}")
    if held.expires_at < now:
        hours = settings.ANKI_REVIEW_SESSION_HOURS
        raise NotFound(
            f"session: {public_id!r} expired (a session lasts {hours} h unused); "
            "start another with anki.review_start"
        )
    held.expires_at = _expiry(now)
    ReviewSession.objects.filter(pk=held.pk).update(expires_at=held.expires_at)
    return held


def _card(session: ReviewSession, card: int) -> ReviewCard:
    found = session.cards.filter(card_id=card).first()
    if found is None:
        raise Conflict(f"card: {card} is not a card of this session")
    return found


def _current(session: ReviewSession) -> ReviewCard | None:
    shown = session.cards.filter(state=State.SHOWN).order_by("position").first()
    return shown or session.cards.filter(state=State.QUEUED).order_by("position").first()


def _summary(session: ReviewSession) -> ReviewCardOut:
    eases = list(session.cards.filter(state=State.RATED).values_list("ease", flat=True))
    pending = session.cards.filter(state=State.REVEALED).count()
    return ReviewCardOut(
        session=session.public_id,
        done=not pending,
        remaining=pending,
        rated={name: eases.count(ease) for ease, name in EASES.items()},
    )


def _expiry(now: Any) -> Any:
    return now + timedelta(hours=settings.ANKI_REVIEW_SESSION_HOURS)


def html_text(html: str) -> str:
    """The text a card's HTML shows: styles and scripts dropped, images named, lines kept."""
    if not html.strip():
        return ""
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for gone in root.xpath(".//style|.//script"):
        gone.drop_tree()
    for image in root.xpath(".//img"):
        image.tail = f"[image: {image.get('src', '')}]" + (image.tail or "")
    for br in root.xpath(".//br|.//div|.//p|.//hr|.//li"):
        br.tail = "\n" + (br.tail or "")
    text = root.text_content()
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)
