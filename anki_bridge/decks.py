"""Note models and decks as Anki holds them: a model's fields and templates (kept for when
Anki is away), the deck list with today's counts, a deck's statistics and described page,
and cards set due on a day.

The use cases here are reached through `anki_bridge.services`, which adds notes with the
models loaded here.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

from django.conf import settings
from django.core.cache import cache

from anki_bridge import client as ankiconnect
from anki_bridge.client import (
    NAME_MAX_CHARS,
    AnkiClient,
    card_reviews,
    deck_name_check,
    deck_query,
    deck_spelled,
    find_cards,
    set_due_date,
)
from anki_bridge.delivery import Known, is_model_missing, model_create_default
from anki_bridge.exceptions import AnkiError, AnkiModelNotFound
from anki_bridge.notemodel import DEFAULT_MODEL, NoteModel
from anki_bridge.review import html_text
from anki_bridge.schemas import (
    CardStates,
    DeckCounts,
    DeckList,
    DeckStats,
    RescheduleResult,
    Retention,
)
from core.exceptions import InvalidInput, NotFound

NAME_MAX = NAME_MAX_CHARS
MODEL_CACHE_SECONDS = 30 * 24 * 3600


def _name(value: str | None, default: str, field: str) -> str:
    name = (value or "").strip() or default
    if len(name) > NAME_MAX:
        raise InvalidInput(f"{field} must be at most {NAME_MAX} characters", field=field)
    return name


def deck_resolve(deck: str | None) -> str:
    """The deck to use: `deck`, or ANKI_DEFAULT_DECK when it is empty."""
    return deck_name_check(_name(deck, settings.ANKI_DEFAULT_DECK, "deck"))


def model_resolve(model: str | None) -> str:
    """The model to use: `model`, or ANKI_DEFAULT_MODEL when it is empty."""
    return _name(model, settings.ANKI_DEFAULT_MODEL, "model")


def _cache_key(name: str) -> str:
    digest = hashlib.sha1(name.encode()).hexdigest()  # noqa: S324 (a cache key)
    return f"anki:model-fields:{digest}"


def model_load(client: AnkiClient, name: str) -> NoteModel:
    """The model's fields, templates and styling, in one request.

    The default model is created when missing; another missing model is AnkiModelNotFound
    listing the models Anki has.
    """
    return _load(client, name, deck=None)[0]


def target_load(client: AnkiClient, *, model: str, deck: str) -> tuple[NoteModel, Known | None]:
    """The model (as `model_load`) and `deck` created, in one request.

    `Known` (the deck's id, the model's fields) spares delivery asking again; None when
    Anki refused the deck (delivery then reports why).
    """
    return _load(client, model, deck=deck)


def _load(client: AnkiClient, name: str, *, deck: str | None) -> tuple[NoteModel, Known | None]:
    actions = [
        ankiconnect.model_field_names(name),
        ankiconnect.model_templates(name),
        ankiconnect.model_styling(name),
    ]
    if deck is not None:
        actions.append(ankiconnect.create_deck(deck))
    names, templates, styling, *created = client.multi(actions)
    if is_model_missing(names.error, name):
        if name == DEFAULT_MODEL.name:
            model_create_default(client)
            return _load(client, name, deck=deck)
        known = client.model_names()
        raise AnkiModelNotFound(
            f"model {name!r} was not found in Anki; its models: {', '.join(known)}",
            extra={"model": name},
        )
    for outcome in (names, templates, styling):
        if not outcome.ok:
            raise AnkiError(f"Anki refused to describe the model {name!r}: {outcome.error}")
    model = NoteModel(
        name=name,
        fields=tuple(names.result),
        templates=dict(templates.result),
        styling=str((styling.result or {}).get("css", "")),
    )
    cache.set(
        _cache_key(name),
        {"fields": list(model.fields), "templates": model.templates},
        MODEL_CACHE_SECONDS,
    )
    if deck is not None and created and created[0].ok and isinstance(created[0].result, int):
        return model, Known(deck=deck, model=name, deck_id=created[0].result, fields=model.fields)
    return model, None


def model_known(name: str) -> NoteModel | None:
    """The model's fields and templates as last seen (or the seed's default model) without
    asking Anki."""
    seen = cache.get(_cache_key(name))
    if isinstance(seen, list) and seen:  # cached before templates were kept
        return NoteModel(name=name, fields=tuple(seen))
    if isinstance(seen, dict) and seen.get("fields"):
        return NoteModel(name=name, fields=tuple(seen["fields"]), templates=seen["templates"])
    return DEFAULT_MODEL if name == DEFAULT_MODEL.name else None


def model_info_get(*, model: str | None = None) -> NoteModel:
    """Seed 002 `anki.model_info`: the model as Anki has it now."""
    with AnkiClient() as client:
        return model_load(client, model_resolve(model))


def decks_list() -> DeckList:
    """Every deck Anki lists, in its deck-list order (a parent before its subdecks, names
    sorted), with its counts for today; a deck Anki hides (the empty «Default» beside
    others) is left out, as Anki's list leaves it out."""
    with AnkiClient() as client:
        ids = client.deck_names_and_ids()
        stats = client.deck_stats(sorted(ids)) if ids else {}
    decks = []
    for name in sorted(ids, key=lambda n: [part.casefold() for part in n.split("::")]):
        counts = stats.get(ids[name])
        if counts is None:
            continue
        # Anki counts a deck's own cards only; the due counts already hold its subdecks'
        total = sum(
            int(stats.get(ids[other], {}).get("total_in_deck", 0))
            for other in ids
            if other == name or other.startswith(f"{name}::")
        )
        learning, review = int(counts["learn_count"]), int(counts["review_count"])
        decks.append(
            DeckCounts(
                name=name,
                id=ids[name],
                level=name.count("::"),
                new=int(counts["new_count"]),
                learning=learning,
                review=review,
                due_today=learning + review,
                total=total,
            )
        )
    return DeckList(decks=decks)


CARD_STATES = {
    "new": "is:new",
    "learning": "is:learn",
    "review": "is:review -is:learn",
    "suspended": "is:suspended",
    "total": "",
}
DAYS_AHEAD = 14
PASSED = 2  # ease of the first button that is not «Again»
REVIEW_ENTRY = 1  # revlog type of an answer to a review card
DAY_MS = 86_400_000


def stats_get(*, deck: str | None = None, now_ms: int | None = None) -> DeckStats:
    """Statistics of `deck` and its subdecks (None: the collection), in two requests:
    the deck names, then one `multi` of Anki searches and review-log reads."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    if deck is not None:
        deck = deck_name_check(deck)
    with AnkiClient() as client:
        ids = client.deck_names_and_ids()
        if deck is not None:
            spelled = deck_spelled(ids, deck)
            if spelled is None:
                raise InvalidInput(f"Anki has no deck named {deck!r}", field="deck")
            deck = spelled
        scope = deck_query(deck) if deck is not None else "deck:*"
        searches = [f"{scope} {query}".strip() for query in CARD_STATES.values()]
        searches += [f"{scope} rated:1", f"{scope} is:due"]
        searches += [f"{scope} prop:due={day}" for day in range(1, DAYS_AHEAD)]
        decks = [n for n in ids if deck is None or n == deck or n.startswith(f"{deck}::")]
        since = now_ms - 30 * DAY_MS
        actions = [find_cards(search) for search in searches]
        actions += [card_reviews(name, since) for name in decks]
        outcomes = client.multi(actions)
    failed = next((o for o in outcomes if not o.ok), None)
    if failed is not None:
        raise AnkiError(f"Anki refused a statistics query: {failed.error}")
    counts = [len(o.result) for o in outcomes[: len(searches)]]
    states = dict(zip(CARD_STATES, counts, strict=False))
    reviews = [row for o in outcomes[len(searches) :] for row in o.result]
    return DeckStats(
        deck=deck,
        cards=CardStates(**states),
        studied_today=counts[len(CARD_STATES)],
        retention_7_days=retention(reviews, since=now_ms - 7 * DAY_MS),
        retention_30_days=retention(reviews, since=since),
        due_by_day=counts[len(CARD_STATES) + 1 :],
    )


def retention(rows: Sequence[Sequence[int]], *, since: int) -> Retention:
    """Anki's true retention: of the answers to review cards since `since` (review-log
    rows: id, cid, usn, ease, …, type), the share not answered «Again»."""
    answers = [row for row in rows if row[0] > since and row[8] == REVIEW_ENTRY]
    passed = sum(1 for row in answers if row[3] >= PASSED)
    rate = round(passed / len(answers), 4) if answers else None
    return Retention(reviews=len(answers), passed=passed, rate=rate)


RESCHEDULE_MAX = 500
RESCHEDULE_DAYS_MAX = 36_500


def cards_reschedule(*, card_ids: Sequence[int], days: int) -> RescheduleResult:
    """`anki.reschedule`: the cards due in `days` days (0: today), as Anki's «Set due
    date» does it, in two requests: the cards Anki holds; then the change and a read-back
    of the cards now due on that day."""
    ids = sorted(set(card_ids))
    if not ids:
        raise InvalidInput("card_ids must hold at least one card id", field="card_ids")
    if len(ids) > RESCHEDULE_MAX:
        raise InvalidInput(f"card_ids holds at most {RESCHEDULE_MAX} ids", field="card_ids")
    if not 0 <= days <= RESCHEDULE_DAYS_MAX:
        raise InvalidInput(f"days must be 0–{RESCHEDULE_DAYS_MAX}, got {days}", field="days")
    cards = f"cid:{','.join(map(str, ids))}"
    with AnkiClient() as client:
        held = client.find_cards(cards)
        if not held:
            raise InvalidInput("card_ids: Anki holds none of these cards", field="card_ids")
        changed, due = client.multi(
            [set_due_date(sorted(held), days), find_cards(f"{cards} prop:due={days}")]
        )
    for outcome in (changed, due):
        if not outcome.ok:
            raise AnkiError(f"Anki refused to set the due date: {outcome.error}")
    missing = sorted(set(ids) - set(held))
    return RescheduleResult(
        due_in_days=days, rescheduled=sorted(due.result), missing=missing or None
    )


RECENT_NOTES = 10
RECENT_FIELD_CHARS = 120


def deck_described(*, name: str) -> str:
    """`anki://deck/{name}`: the deck's counts for today (with its subdecks, as Anki's deck
    list counts them) and its RECENT_NOTES newest notes, as Markdown.

    No answer shows before its reveal: a note of one card shows that card's front as Anki
    renders it (a cloze as `[...]`); a note of several cards shows no text, since each
    front can be another card's answer (a reversed card's front is the forward card's
    back; a cloze card shows the other deletions)."""
    with AnkiClient() as client:
        ids = client.deck_names_and_ids()
        spelled = deck_spelled(ids, name)
        if spelled is None:
            raise NotFound(f"name: Anki has no deck named {name!r}")
        subtree = [n for n in ids if n == spelled or n.startswith(f"{spelled}::")]
        every = client.deck_stats(subtree)
        counts = every.get(ids[spelled], {})
        total = sum(int(every.get(ids[n], {}).get("total_in_deck", 0)) for n in subtree)
        newest = sorted(client.find_notes(deck_query(spelled)), reverse=True)[:RECENT_NOTES]
        infos = [i for i in client.notes_info(newest) if i and "noteId" in i] if newest else []
        single = [info["cards"][0] for info in infos if len(info.get("cards", [])) == 1]
        rendered = client.cards_info(single) if single else []
    fronts = {int(card["cardId"]): str(card.get("question", "")) for card in rendered if card}
    learning, due = int(counts.get("learn_count", 0)), int(counts.get("review_count", 0))
    lines = [
        f"# {spelled}",
        "",
        f"New: {counts.get('new_count', 0)} · learning: {learning} · review: {due} · "
        f"due today: {learning + due} · cards: {total}",
        "",
        f"## Newest notes ({len(infos)}), fronts only" if infos else "No notes yet.",
    ]
    for info in infos:
        cards = list(info.get("cards", []))
        text = " ".join(html_text(fronts.get(cards[0], "") if len(cards) == 1 else "").split())
        if len(text) > RECENT_FIELD_CHARS:
            text = text[:RECENT_FIELD_CHARS] + "…"
        shown = (
            text
            if len(cards) == 1
            else f"{len(cards)} cards, text hidden: a front may be another card's answer"
        )
        tags = f" — tags: {', '.join(info['tags'])}" if info.get("tags") else ""
        lines.append(f"- {shown} (note {info['noteId']}, {info.get('modelName')}){tags}")
    return "\n".join(lines)
