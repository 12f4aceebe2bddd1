"""Review sessions held by the server (issue 29, item 3): a deck's cards in Anki's order,
the front first and the back only when asked, each card rated once through Anki's
scheduler.

The session and its cards are rows (`ReviewSession`, `ReviewCard`): any process of the
deployment serves the next call, a restart loses nothing, a user sees only their own. A
card moves queued → shown → revealed → rating → rated by conditional updates, so two calls
racing on one card cannot both pass a step. What the model reads before `review_reveal`
is the card's front as Anki renders it (its question), never its note's fields: the back
cannot leak through them.

A rating is sent only if Anki's count of the card's answers (`reps`) is still what it was at
the reveal (not answered meanwhile in Anki or in another session). The card is `rating`,
held by the sending call, until Anki confirms; a concurrent call is refused. When no
connection to Anki could be made, the card is `revealed` again. When the request may have
reached Anki without its reply coming back (a timeout, a dropped connection), the card
stays `rating`, unheld: the next `review_rate` reads the count and either confirms the
rating or sends it. So a retry neither loses nor doubles a rating.
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
ORDERED_MAX = 1000  # due cards (then new ones) ordered at the start of a session
INFO_CHUNK = 200  # cards per cardsInfo request
HOLD_MARGIN = 30  # seconds a rating call holds its card beyond Anki's deadline
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
    kinds = [learning, review, new[0] if new else []]
    ordered = _in_due_order(client, [card for cards in kinds for card in cards][:ORDERED_MAX])
    learning_set, review_set, new_set = (set(cards) for cards in kinds)
    return _Queue(
        learning=[c for c in ordered if c in learning_set],
        review=[c for c in ordered if c in review_set],
        new=[c for c in ordered if c in new_set],
    )


def _in_due_order(client: AnkiClient, cards: list[int]) -> list[int]:
    """`cards` by their due (a learning card's time, a review card's day, a new card's
    position), each kind apart as given; a card Anki no longer holds left out. Read in
    chunks: each card's info carries its rendered sides and its note type's CSS."""
    due: dict[int, int] = {}
    for start in range(0, len(cards), INFO_CHUNK):
        for info in client.cards_info(cards[start : start + INFO_CHUNK]):
            if info:
                due[int(info["cardId"])] = int(info.get("due", 0))
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
                remaining=max(0, left - 1),
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
        state=State.REVEALED, revealed_at=timezone.now(), reps_at_reveal=int(info.get("reps", 0))
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
    now = timezone.now()
    hold = now + timedelta(seconds=settings.ANKI_CONNECT_TIMEOUT + HOLD_MARGIN)
    taken = ReviewCard.objects.filter(pk=found.pk, state=State.REVEALED).update(
        state=State.RATING, ease=ease, claimed_until=hold
    )
    if not taken:
        found.refresh_from_db()
        if found.state != State.RATING:
            raise Conflict(_not_rateable(found))
        if found.claimed_until is not None and found.claimed_until > now:
            raise Conflict(f"card: {card} is being rated by another call right now")
        # An earlier call sent the rating and lost its reply (or died): take the card over.
        taken = ReviewCard.objects.filter(
            pk=found.pk, state=State.RATING, claimed_until=found.claimed_until
        ).update(claimed_until=hold)
        if not taken:
            raise Conflict(f"card: {card} is being rated by another call right now")
    with AnkiClient() as client:
        try:
            answered = _answered_since_reveal(client, found)
            if answered is None:  # deleted in Anki meanwhile
                ReviewCard.objects.filter(pk=found.pk).update(state=State.SKIPPED)
                raise NotFound(f"card: Anki no longer holds card {card}; call anki.review_next")
            if answered:
                return _answered_already(held, found)
            if found.state == State.RATING:  # taken over: this call's rating goes
                ReviewCard.objects.filter(pk=found.pk).update(ease=ease)
            (done,) = client.answer_cards([(card, ease)])
        except AnkiUnavailable as exc:
            raise _rating_lost(found, exc) from exc
        except AnkiError:  # Anki answered: it refused, nothing was rated
            ReviewCard.objects.filter(pk=found.pk).update(state=State.REVEALED, claimed_until=None)
            raise
    if not done:
        ReviewCard.objects.filter(pk=found.pk).update(state=State.SKIPPED)
        raise NotFound(f"card: Anki no longer holds card {card}; call anki.review_next")
    _rated(found, ease)
    return ReviewRated(session=held.public_id, card=card, ease=ease, remaining=_left(held))


def _answered_since_reveal(client: AnkiClient, card: ReviewCard) -> bool | None:
    """Whether Anki counts an answer to the card since it was revealed (None: Anki no
    longer holds the card)."""
    (info,) = client.cards_info([card.card_id])
    if not info:
        return None
    return int(info.get("reps", 0)) > (card.reps_at_reveal or 0)


def _answered_already(session: ReviewSession, card: ReviewCard) -> ReviewRated:
    """The card was answered since its reveal. Taken over from an earlier call of ours
    (`rating`): that call's answer reached Anki and lost its reply; it is confirmed, with
    the rating that call sent. Else it was answered in Anki or in another session: it is
    not rated here."""
    if card.state == State.RATING and card.ease in EASES:
        _rated(card, card.ease)
        return ReviewRated(
            session=session.public_id, card=card.card_id, ease=card.ease, remaining=_left(session)
        )
    ReviewCard.objects.filter(pk=card.pk).update(state=State.SKIPPED, claimed_until=None)
    raise Conflict(
        f"card: {card.card_id} was answered in Anki or in another session since it was "
        "revealed here; it is not rated twice. Call anki.review_next"
    )


def _rating_lost(card: ReviewCard, exc: AnkiUnavailable) -> AnkiUnavailable:
    """Anki gave no reply: what to raise. Without a connection nothing reached it: the card
    is revealed again. Otherwise Anki may have rated it: the card stays `rating`, unheld,
    and the next call confirms the rating or sends it."""
    if exc.extra.get("kind") == "connect":
        ReviewCard.objects.filter(pk=card.pk).update(state=State.REVEALED, claimed_until=None)
        return exc
    ReviewCard.objects.filter(pk=card.pk, state=State.RATING).update(claimed_until=None)
    return AnkiUnavailable(
        f"{exc.message} The rating may have reached Anki: call anki.review_rate again once "
        "Anki answers; it is confirmed, never sent twice.",
        extra=dict(exc.extra),
    )


def _left(session: ReviewSession) -> int:
    return session.cards.filter(
        state__in=[State.QUEUED, State.SHOWN, State.REVEALED, State.RATING]
    ).count()


def _rated(card: ReviewCard, ease: int) -> None:
    ReviewCard.objects.filter(pk=card.pk).update(
        state=State.RATED, ease=ease, rated_at=timezone.now(), claimed_until=None
    )


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
    """No card left to show: done, or the first card revealed and not rated yet (rate it)."""
    eases = list(session.cards.filter(state=State.RATED).values_list("ease", flat=True))
    pending = list(
        session.cards.filter(state__in=[State.REVEALED, State.RATING])
        .order_by("position")
        .values_list("card_id", flat=True)
    )
    return ReviewCardOut(
        session=session.public_id,
        card=pending[0] if pending else None,
        done=not pending,
        remaining=len(pending),
        rated={name: eases.count(ease) for ease, name in EASES.items()},
    )


def _expiry(now: Any) -> Any:
    return now + timedelta(hours=settings.ANKI_REVIEW_SESSION_HOURS)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)


def html_text(html: str) -> str:
    """The text a card's HTML shows: styles, scripts and hidden parts (a `{{hint:…}}`
    field, anything styled `display: none`) dropped, images named, lines kept."""
    html = _CONTROL.sub("", html)  # lxml refuses them; Anki shows nothing for them
    if not html.strip():
        return ""
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for gone in root.xpath(".//style|.//script|.//*[contains(concat(' ', @class, ' '), ' hint ')]"):
        gone.drop_tree()
    for hidden in root.xpath(".//*[@style]"):
        if _HIDDEN.search(hidden.get("style", "")) and hidden.getparent() is not None:
            hidden.drop_tree()
    for image in root.xpath(".//img"):
        image.tail = f"[image: {image.get('src', '')}]" + (image.tail or "")
    for block in root.xpath(".//br|.//div|.//p|.//hr|.//li"):
        block.tail = "\n" + (block.tail or "")
    text = root.text_content()
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n".join(line for line in lines if line)
