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
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from anki_bridge.card_sides import SideImage, html_text, side_images
from anki_bridge.client import AnkiClient, clean_error, deck_name_check, deck_spelled
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from anki_bridge.models import ReviewCard, ReviewSession
from anki_bridge.review_queue import queue_today
from anki_bridge.schemas import ReviewCardOut, ReviewRated, ReviewRevealed, ReviewStarted
from core.exceptions import Conflict, InvalidInput, NotFound

LIMIT_MAX = 200
HOLD_MARGIN = 30  # seconds a rating call holds its card beyond Anki's deadline
EASES = {1: "again", 2: "hard", 3: "good", 4: "easy"}
AGAIN = 1  # rated so, a card comes back later in the session
_ANSWER_RULE = re.compile(r"<hr[^>]*id\s*=\s*['\"]?answer['\"]?[^>]*>", re.IGNORECASE)
State = ReviewCard.State
T = TypeVar("T")


@dataclass(frozen=True)
class Seen(Generic[T]):
    """What a review tool shows the model: the answer, and the pictures of the side it
    shows (a picture quiz is reviewed by the image, not by its file name)."""

    shown: T
    images: list[SideImage]


def session_start(
    *, user: AbstractBaseUser, deck: str, include_new: bool, limit: int
) -> ReviewStarted:
    """A session over `deck` (its subdecks too) as Anki's reviewer shows it today: learning
    cards due now, then review cards by due date with, when asked, new cards in their order
    mixed in as the deck's options say; no more new or review cards than the deck's daily
    limits leave today (`getDeckStats`, `getDeckConfig`); at most `limit`."""
    if not deck.strip():
        raise InvalidInput("deck must name an Anki deck", field="deck")
    deck = deck_name_check(deck.strip())
    if not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput(f"limit must be 1–{LIMIT_MAX}, got {limit}", field="limit")
    with AnkiClient() as client:
        spelled = deck_spelled(client.deck_names(), deck)  # any case, as Anki matches
        if spelled is None:  # asked before any search: no deck is created
            raise InvalidInput(f"deck: Anki has no deck named {deck!r}", field="deck")
        deck = spelled
        queue = queue_today(client, deck, include_new=include_new)
    chosen = queue.ordered()[:limit]
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


def card_next(*, user: AbstractBaseUser, session: str) -> ReviewCardOut:
    """The card shown now: the one shown and not yet revealed, else the next queued one.
    Its front only. `done` when every card went."""
    return _next(user, session, pictures=False).shown


def card_next_seen(*, user: AbstractBaseUser, session: str) -> Seen[ReviewCardOut]:
    """`card_next` with the front's pictures from Anki's media folder."""
    return _next(user, session, pictures=True)


def _next(user: AbstractBaseUser, session: str, *, pictures: bool) -> Seen[ReviewCardOut]:
    held = _session(user, session)
    with AnkiClient() as client:
        while True:
            card = _current(held)
            if card is None:
                return Seen(_summary(held), [])
            info = client.cards_info([card.card_id])[0]
            if not info or _set_aside(info):  # deleted, suspended or buried in Anki meanwhile
                ReviewCard.objects.filter(pk=card.pk).update(state=State.SKIPPED)
                continue
            if card.state == State.QUEUED:
                ReviewCard.objects.filter(pk=card.pk, state=State.QUEUED).update(state=State.SHOWN)
            left = held.cards.filter(state__in=[State.QUEUED, State.SHOWN]).count()
            front = str(info.get("question", ""))
            shown = ReviewCardOut(
                session=held.public_id,
                card=card.card_id,
                kind=card.kind,
                position=card.position + 1,
                remaining=max(0, left - 1),
                deck=info.get("deckName"),
                front=html_text(front),
            )
            return Seen(shown, side_images(client, front) if pictures else [])


def card_reveal(*, user: AbstractBaseUser, session: str, card: int) -> ReviewRevealed:
    """The back of the card shown now, and when each rating would bring it back."""
    return _reveal(user, session, card, pictures=False).shown


def card_reveal_seen(*, user: AbstractBaseUser, session: str, card: int) -> Seen[ReviewRevealed]:
    """`card_reveal` with the back's own pictures (those below the answer rule)."""
    return _reveal(user, session, card, pictures=True)


def _reveal(
    user: AbstractBaseUser, session: str, card: int, *, pictures: bool
) -> Seen[ReviewRevealed]:
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
        if aside := _set_aside(info):
            ReviewCard.objects.filter(pk=found.pk).update(state=State.SKIPPED)
            raise Conflict(f"card: {card} was {aside} in Anki meanwhile; call anki.review_next")
        ReviewCard.objects.filter(pk=found.pk, state=State.SHOWN).update(
            state=State.REVEALED,
            revealed_at=timezone.now(),
            reps_at_reveal=int(info.get("reps", 0)),
        )
        answer = str(info.get("answer", ""))
        parts = _ANSWER_RULE.split(answer, maxsplit=1)
        back = parts[1] if len(parts) == 2 else answer
        images = side_images(client, back) if pictures else []
    intervals = [clean_error(i) for i in info.get("nextReviews") or []]  # no invisible marks
    revealed = ReviewRevealed(
        session=held.public_id,
        card=card,
        back=html_text(back),
        next_intervals=dict(zip(EASES.values(), intervals, strict=False)) or None,
    )
    return Seen(revealed, images)


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
            (info,) = client.cards_info([card])
            if not info:  # deleted in Anki meanwhile
                ReviewCard.objects.filter(pk=found.pk).update(state=State.SKIPPED)
                raise NotFound(f"card: Anki no longer holds card {card}; call anki.review_next")
            if int(info.get("reps", 0)) > (found.reps_at_reveal or 0):  # answered since
                return _answered_already(held, found)
            if aside := _set_aside(info):  # rating it would take it back into the queue
                ReviewCard.objects.filter(pk=found.pk).update(
                    state=State.SKIPPED, claimed_until=None
                )
                raise Conflict(
                    f"card: {card} was {aside} in Anki meanwhile; it is not rated (a rating "
                    "would undo that). Call anki.review_next"
                )
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


def _set_aside(info: dict[str, Any]) -> str:
    """What the learner did to the card in Anki that takes it out of today's reviews
    (its `queue`: -1 suspended, -2 or -3 buried); "" for none."""
    queue = info.get("queue")
    return "suspended" if queue == -1 else "buried" if queue in (-2, -3) else ""


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
    """Anki gave no reply: what to raise. Without a connection, or with no profile open,
    nothing was done: the card is revealed again. Otherwise Anki may have rated it: the
    card stays `rating`, unheld, and the next call confirms the rating or sends it."""
    if exc.extra.get("kind") in ("connect", "no_profile"):
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
    """The card rated. Rated «Again», it is in learning, due within minutes: it comes
    back at the end of the session, as Anki's reviewer shows it again."""
    if ease == AGAIN:
        last = ReviewCard.objects.filter(session_id=card.session_id).aggregate(Max("position"))
        ReviewCard.objects.filter(pk=card.pk).update(
            state=State.QUEUED, kind=ReviewCard.Kind.LEARNING, ease=ease,
            position=(last["position__max"] or 0) + 1, rated_at=timezone.now(),
            claimed_until=None, revealed_at=None, reps_at_reveal=None,
        )  # fmt: skip
        return
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
