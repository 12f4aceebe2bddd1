"""Which cards of a deck Anki's reviewer shows today, in its order (issue 52, item 3).

Anki's reviewer (the v3 scheduler) shows the learning cards due now, then the reviews due
with the new cards mixed among them (or after, or before them: the deck's «New/review
order», `newMix`), no more new or review cards than the deck's daily limits leave today.
Those limits are read as Anki's deck list applies them (`getDeckStats`: the deck's and its
parents' limits, the cards studied today), capped by the deck's options (`getDeckConfig`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from anki_bridge.client import (
    AnkiClient,
    Outcome,
    deck_config,
    deck_query,
    deck_stats,
    find_cards,
)
from anki_bridge.exceptions import AnkiError
from anki_bridge.models import ReviewCard

Kind = ReviewCard.Kind
T = TypeVar("T")
ORDERED_MAX = 1000  # due cards (then new ones) ordered at the start of a session
INFO_CHUNK = 200  # cards per cardsInfo request

# The deck option «New/review order» (`newMix`), as Anki numbers it.
MIX_WITH_REVIEWS, NEW_AFTER_REVIEWS, NEW_BEFORE_REVIEWS = 0, 1, 2


@dataclass(frozen=True)
class Queue:
    """The cards of a deck to review today, each kind in Anki's order and within the
    deck's limits, and how Anki mixes new cards among the reviews."""

    learning: list[int]
    review: list[int]
    new: list[int]
    new_mix: int = MIX_WITH_REVIEWS

    def ordered(self) -> list[tuple[int, Kind]]:
        """The cards as Anki's reviewer shows them: learning cards due now first, then the
        reviews with the new cards mixed in (or after, or before them: the deck's option)."""
        review = [(card, Kind.REVIEW) for card in self.review]
        new = [(card, Kind.NEW) for card in self.new]
        if self.new_mix == NEW_AFTER_REVIEWS:
            main = review + new
        elif self.new_mix == NEW_BEFORE_REVIEWS:
            main = new + review
        else:
            main = _interspersed(review, new)
        return [(card, Kind.LEARNING) for card in self.learning] + main


def _interspersed(one: list[T], two: list[T]) -> list[T]:
    """`two` spread evenly through `one`, as Anki's scheduler (v3, `Intersperser`) mixes
    new cards among reviews: the next of `two` goes first when its place, scaled by
    (len(one) + 1) / (len(two) + 1), comes before the next of `one`'s."""
    ratio = (len(one) + 1) / (len(two) + 1)
    mixed: list[T] = []
    i = j = 0
    while i < len(one) or j < len(two):
        if j < len(two) and (i == len(one) or (j + 1) * ratio < i + 1):
            mixed.append(two[j])
            j += 1
        else:
            mixed.append(one[i])
            i += 1
    return mixed


def queue_today(client: AnkiClient, deck: str, *, include_new: bool) -> Queue:
    """The cards of `deck` (its subdecks too) Anki shows today (AnkiError when Anki
    cannot search it)."""
    within = deck_query(deck)
    searches = [
        find_cards(f"{within} is:learn is:due"),
        find_cards(f"{within} is:due -is:learn"),
        find_cards(f"{within} is:new -is:suspended -is:buried"),
    ]
    *found, config, stats = client.multi(
        [*searches[: 3 if include_new else 2], deck_config(deck), deck_stats([deck])]
    )
    for outcome in found:
        if not outcome.ok:
            raise AnkiError(f"Anki could not search the deck {deck!r}: {outcome.error}")
    learning, review, *new = [list(map(int, o.result)) for o in found]
    kinds = [learning, review, new[0] if new else []]
    ordered = _in_due_order(client, [card for cards in kinds for card in cards][:ORDERED_MAX])
    learning_set, review_set, new_set = (set(cards) for cards in kinds)
    limits = _DayLimits.read(config, stats)
    return Queue(
        learning=[c for c in ordered if c in learning_set],
        review=[c for c in ordered if c in review_set][: limits.review],
        new=[c for c in ordered if c in new_set][: limits.new],
        new_mix=limits.new_mix,
    )


@dataclass(frozen=True)
class _DayLimits:
    """How many new and review cards Anki shows of a deck today, and how it mixes them."""

    new: int | None = None
    review: int | None = None
    new_mix: int = MIX_WITH_REVIEWS

    @classmethod
    def read(cls, config: Outcome, stats: Outcome) -> _DayLimits:
        """From the deck's counts (Anki's deck list: its limits, a parent's, and the cards
        answered today applied), capped by its options' daily limits; a build or a deck
        that answers neither leaves the cards unlimited, as before these were read."""
        options = config.result if config.ok and isinstance(config.result, dict) else {}
        counts = stats.result if stats.ok and isinstance(stats.result, dict) else {}
        today: dict[str, Any] = next(iter(counts.values()), {}) if len(counts) == 1 else {}
        new = _least(_per_day(options, "new"), today.get("new_count"))
        review = _least(_per_day(options, "rev"), today.get("review_count"))
        mix = options.get("newMix", MIX_WITH_REVIEWS)
        return cls(new=new, review=review, new_mix=mix if isinstance(mix, int) else 0)


def _per_day(options: dict[str, Any], kind: str) -> int | None:
    limit = (options.get(kind) or {}).get("perDay")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def _least(*limits: object) -> int | None:
    known = [max(0, n) for n in limits if isinstance(n, int) and not isinstance(n, bool)]
    return min(known) if known else None


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
