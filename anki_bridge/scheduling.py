"""Scheduling control (issue 52, item 7): suspend, unsuspend and forget cards, and each
card's scheduling facts for `anki.note_info`.

AnkiConnect answers success for card ids it does not hold (`forgetCards`; `suspend` and
`unsuspend` fail on one, or pass it over, as their loop happens to walk), so the cards are
looked up first: the known ones are changed and the missing ones named, as `anki.reschedule` does;
none known is refused before anything is sent. What changed is read back from Anki.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.core.cache import cache

from anki_bridge import client as ankiconnect
from anki_bridge.client import Action, AnkiClient, find_cards
from anki_bridge.exceptions import AnkiError
from anki_bridge.schemas import CardsChanged, CardSchedule
from core.exceptions import InvalidInput

CARDS_MAX = 500


def cards_suspend(*, card_ids: Sequence[int]) -> CardsChanged:
    """`anki.suspend`: the cards out of every review until unsuspended (Anki's «Suspend»)."""
    return _cards_change(card_ids, "is:suspended", ankiconnect.suspend, "suspend")


def cards_unsuspend(*, card_ids: Sequence[int]) -> CardsChanged:
    """`anki.unsuspend`: suspended cards back in their place in the reviews."""
    return _cards_change(card_ids, "-is:suspended", ankiconnect.unsuspend, "unsuspend")


def cards_forget(*, card_ids: Sequence[int]) -> CardsChanged:
    """`anki.forget`: the cards new again (Anki's «Forget»; their review history stays)."""
    return _cards_change(card_ids, "is:new", ankiconnect.forget_cards, "forget")


def _cards_change(
    card_ids: Sequence[int], state: str, action: Callable[[Sequence[int]], Action], verb: str
) -> CardsChanged:
    """In two requests: which cards Anki holds and which are already in `state` (an Anki
    search); then the action on the others and the cards in `state` read back."""
    ids = sorted(set(card_ids))
    if not ids:
        raise InvalidInput("card_ids must hold at least one card id", field="card_ids")
    if len(ids) > CARDS_MAX:
        raise InvalidInput(f"card_ids holds at most {CARDS_MAX} ids", field="card_ids")
    cards = f"cid:{','.join(map(str, ids))}"
    with AnkiClient() as client:
        held, before = _found(client.multi([find_cards(cards), find_cards(f"{cards} {state}")]))
        if not held:
            raise InvalidInput("card_ids: Anki holds none of these cards", field="card_ids")
        todo = sorted(set(held) - set(before))
        if not todo:
            after = before
        else:
            changed, now = client.multi([action(todo), find_cards(f"{cards} {state}")])
            if not changed.ok:
                raise AnkiError(f"Anki refused to {verb} the cards: {changed.error}")
            (after,) = _found([now])
    left = sorted(set(todo) - set(after))
    if left:
        raise AnkiError(f"Anki did not {verb} the cards {', '.join(map(str, left))}")
    missing = sorted(set(ids) - set(held))
    return CardsChanged(changed=todo, missing=missing or None)


def _found(outcomes: Sequence[ankiconnect.Outcome]) -> list[list[int]]:
    for outcome in outcomes:
        if not outcome.ok:
            raise AnkiError(f"Anki refused a card search: {outcome.error}")
    return [[int(card) for card in outcome.result] for outcome in outcomes]


# FSRS memory state, which no AnkiConnect build returns: read with Anki's own searches
# (`prop:s>x` stability in days, `prop:d>x` difficulty 0–1, `prop:r>x` retrievability
# 0–1), every card's three values narrowed FSRS_CUTS ways per request, in one `multi` a
# round; for at most FSRS_CARDS_MAX cards a call.
FSRS_CARDS_MAX = 20
FSRS_CUTS = 15
# property: (low, high, log scale, rounds): stability to about 0.5 %, the others 1/256
FSRS_PROPERTIES = {"s": (0.001, 100_000.0, True, 3), "d": (0.0, 1.0, False, 2)}
FSRS_PROPERTIES["r"] = (0.0, 1.0, False, 2)


def cards_memory(client: AnkiClient, cards: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The FSRS stability (days), difficulty and retrievability (%) of `cards` (those
    Anki holds a memory state for), by card; none for a collection without FSRS."""
    bounds = {
        (int(card), prop): (low, high)
        for card in list(cards)[:FSRS_CARDS_MAX]
        for prop, (low, high, _log, _rounds) in FSRS_PROPERTIES.items()
    }
    for round_ in range(max(rounds for *_, rounds in FSRS_PROPERTIES.values())):
        asked = [
            (key, cut)
            for key, (low, high) in bounds.items()
            if round_ < FSRS_PROPERTIES[key[1]][3]
            for cut in _cuts(low, high, log=FSRS_PROPERTIES[key[1]][2])
        ]
        if not asked:
            break
        found = _found(
            client.multi([find_cards(f"cid:{k[0]} prop:{k[1]}>{c:.6g}") for k, c in asked])
        )
        for (key, cut), hit in zip(asked, found, strict=True):
            low, high = bounds[key]
            bounds[key] = (max(low, cut), high) if hit else (low, min(high, cut))
    memory: dict[int, dict[str, Any]] = {}
    for (card, prop), (low, high) in bounds.items():
        middle = (low * high) ** 0.5 if FSRS_PROPERTIES[prop][2] else (low + high) / 2
        shown = float(f"{middle:.3g}") if prop == "s" else round(middle * 100)
        name = {"s": "stability", "d": "difficulty", "r": "retrievability"}[prop]
        memory.setdefault(card, {})[name] = shown
    return memory


def _cuts(low: float, high: float, *, log: bool) -> list[float]:
    parts = FSRS_CUTS + 1
    if log:
        return [low * (high / low) ** (i / parts) for i in range(1, parts)]
    return [low + (high - low) * i / parts for i in range(1, parts)]


TYPES = {0: "new", 1: "learning", 2: "review", 3: "relearning"}
HELD = {-1: "suspended", -2: "buried", -3: "buried"}
REVIEW_QUEUES = (2, 3)  # review and day-learning: `due` is a day number
TODAY_CACHE_SECONDS = 600  # Anki's day number, looked up again after this
ROLLOVER_HOUR = 4  # Anki's default start of the next day (AnkiConnect does not give it)
DUE_SPAN = 100_000  # days around today a due day is looked for
CUTS = 32  # searches per request while looking for today's day number


def cards_scheduled(client: AnkiClient, card_ids: Sequence[int]) -> dict[int, CardSchedule]:
    """Each held card's scheduling facts, by id: state in words, due (a review card's date,
    a new card's position in the new queue, a learning card's time), interval in days,
    ease in %, reps and lapses. One `cardsInfo`; with review cards, Anki's day number
    too (`anki_today`, cached). A suspended or buried review card's date needs a card in
    the review queue among `card_ids`, or Anki's day number found in the last
    TODAY_CACHE_SECONDS: else its `due` is None."""
    ids = ",".join(map(str, card_ids))
    described, remembered = client.multi(
        [ankiconnect.cards_info(card_ids), find_cards(f"cid:{ids} prop:s>0")]
    )
    if not described.ok:
        raise AnkiError(f"Anki refused to describe the cards: {described.error}")
    infos = [info for info in described.result if info]
    memory = cards_memory(client, remembered.result if remembered.ok else [])
    anchor = next((info for info in infos if info.get("queue") in REVIEW_QUEUES), None)
    # without a card in the review queue (a suspended review card alone): as last found
    known = cache.get(_today_key(client))
    today = anki_today(client, anchor) if anchor is not None else known
    if not isinstance(today, int):
        today = None
    return {
        int(info["cardId"]): _schedule(info, today).model_copy(
            update=memory.get(int(info["cardId"]), {})
        )
        for info in infos
    }


def _schedule(info: dict[str, Any], today: int | None) -> CardSchedule:
    kind, queue, due = int(info["type"]), int(info["queue"]), int(info["due"])
    factor = int(info.get("factor") or 0)
    when: str | None
    if kind == 0:
        when = f"#{due}"  # the position in the new queue
    elif due > 1_000_000_000:  # a learning step: a time (seconds since 1970)
        when = datetime.fromtimestamp(due, tz=UTC).isoformat(timespec="minutes")
    elif today is not None:
        when = (anki_date() + timedelta(days=due - today)).isoformat()
    else:
        when = None
    return CardSchedule(
        card=int(info["cardId"]),
        state=TYPES.get(kind, str(kind)),
        queue=HELD.get(queue),
        due=when,
        interval=int(info.get("interval") or 0),
        ease=factor // 10 if factor and kind != 0 else None,
        reps=int(info.get("reps") or 0),
        lapses=int(info.get("lapses") or 0),
    )


def anki_date() -> date:
    """Anki's today in the local calendar (its day starts at ROLLOVER_HOUR)."""
    return (datetime.now() - timedelta(hours=ROLLOVER_HOUR)).date()


def anki_today(client: AnkiClient, anchor: dict[str, Any]) -> int:
    """Anki's day number today, which AnkiConnect does not give: from a card in the review
    queue, whose due day is known, and Anki's own `prop:due` search (days from today),
    narrowed CUTS ways per request. Cached TODAY_CACHE_SECONDS per Anki."""
    key = _today_key(client)
    cached = cache.get(key)
    if isinstance(cached, int):
        return cached
    card, due = int(anchor["cardId"]), int(anchor["due"])
    low, high = -DUE_SPAN, DUE_SPAN + 1  # low <= due - today < high
    while high - low > 1:
        step = -(-(high - low) // CUTS)
        cuts = list(range(low + step, high, step)) or [high - 1]
        found = _found(client.multi([find_cards(f"cid:{card} prop:due<{c}") for c in cuts]))
        high = min((c for c, hit in zip(cuts, found, strict=True) if hit), default=high)
        low = max((c for c in cuts if c < high), default=low)
    today = due - low
    cache.set(key, today, TODAY_CACHE_SECONDS)
    return today


def _today_key(client: AnkiClient) -> str:
    return f"anki:today:{client.url}:{int(time.time() // 86400)}"
