"""Delivering a batch of notes to Anki in a few requests: a result for every note, each in its deck.

For one deck and model, whatever the batch size:
1. `multi`: the deck's id (createDeck when asked, else deckNamesAndIds), modelFieldNames,
   and — when a note carries media or may already be in Anki — the per-note verdicts
   (canAddNotesWithErrorDetail; builds without it: every note is tried) and the model's id;
2. reconciling: a note Anki calls a duplicate after an addNote of ours went unanswered is
   looked up by model and first field (Anki's own duplicate search); a match added since
   then and held by no other journal row is that note: delivered, not a duplicate (on
   builds without verdicts the addNote's own `duplicate` answer is reconciled so, step 4);
3. media, the fast way (`anki_bridge.media_upload`);
4. `multi` of addNote, one per note (per-note results on every build: `addNotes` is
   all-or-nothing on current builds and loses the indexes of its errors); the ledger marks
   the notes unanswered before each request goes out;
5. placement: the new cards Anki filed outside the deck (Anki 26 files them under the
   note type's last-used deck) are known from the addNote requests themselves (see `_add`)
   and moved with one changeDeck; the cards of notes delivered earlier whose placement was
   never confirmed are found by note id (one findCards) and moved the same way.

A missing default model is created (never changed when it exists: changing a model's
fields forces a full sync). Results are written into the caller's `results` as they come,
so what Anki answered before it went away is kept when AnkiUnavailable propagates.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from anki_bridge import client as ankiconnect
from anki_bridge.client import AnkiClient, NewNote, Outcome, clean_error
from anki_bridge.exceptions import AnkiError, AnkiRefused, AnkiUnavailable
from anki_bridge.media_upload import REQUEST_BYTES, media_send
from anki_bridge.notemodel import DEFAULT_MODEL

logger = logging.getLogger(__name__)

NOTES_PER_REQUEST = 500  # note ids per findCards
# addNote actions per request: each resets Anki's main window (about 19 ms measured on
# Anki 26.9.3, more in a large collection), so 250 hold Anki about 5 s: far inside
# ANKI_CONNECT_TIMEOUT on a slower machine too, and 200 notes still go in one request.
ADDS_PER_REQUEST = 250
CLOCK_SLACK_MS = 5 * 60 * 1000  # Anki's clock against ours, when matching a lost note by id
RECOVERED = "recovered: Anki had added this note before its answer was lost; it is kept"


@dataclass
class Outgoing:
    """A journaled note on its way: `key` identifies it to the caller.

    `note_id` set: Anki holds it already and only its placement is due.
    """

    key: int
    fields: dict[str, str]
    tags: list[str]
    media: list[str] = field(default_factory=list)
    unanswered_since: datetime | None = None
    note_id: int | None = None


@dataclass
class Delivered:
    status: str  # sent | duplicate | failed
    note_id: int | None = None
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    placed: bool = False


class Ledger(Protocol):
    """What delivery asks of the journal."""

    def load_media(self, names: Sequence[str]) -> dict[str, bytes]: ...

    def media_ahead(self) -> Mapping[str, str]:
        """Files Anki already stored for this delivery: name → the name Anki gave it."""

    def sending(self, keys: Sequence[int]) -> None:
        """These notes' addNote is about to go out (an answer may never come)."""

    def holders(self, note_ids: Sequence[int]) -> dict[int, int]:
        """Anki note id → the key of the journal row that holds it, for the ids held."""
        ...


@dataclass(frozen=True)
class Known:
    """What the caller has just seen in Anki: the deck's id and the model's fields."""

    deck: str
    model: str
    deck_id: int
    fields: tuple[str, ...]


@dataclass
class Context:
    deck_id: int | None
    fields: dict[str, str]  # casefolded → the model's name, in the model's order
    verdicts: list[Outcome]
    model_id: int | None = None


def is_model_missing(error: str | None, model: str) -> bool:
    return bool(error) and error == f"model was not found: {model}"


def model_create_default(client: AnkiClient) -> None:
    """Create the seed's default model; a model that appeared meanwhile is left as it is."""
    outcome = client.multi([ankiconnect.create_model(DEFAULT_MODEL)])[0]
    if not outcome.ok and "already exists" not in (outcome.error or ""):
        raise AnkiRefused(
            f"Anki refused to create the model «{DEFAULT_MODEL.name}»: {outcome.error}"
        )
    logger.info("created the model «%s» in Anki", DEFAULT_MODEL.name)


def notes_deliver(
    client: AnkiClient,
    *,
    deck: str,
    model: str,
    notes: Sequence[Outgoing],
    ensure_deck: bool,
    ledger: Ledger,
    results: dict[int, Delivered],
    known: Known | None = None,
    later: Placement | None = None,
) -> None:
    """Deliver `notes` (one deck and model), writing a Delivered for every key into `results`.

    `later`: the new cards Anki filed outside the deck are gathered there, to be moved
    with the next waves' (`Placement.run`), not by a changeDeck of their own.

    `known` (this deck and model, just seen by the caller) spares the first request when
    no note needs a verdict.
    """
    adding = [n for n in notes if n.note_id is None]
    verdicts_due = _verdicts_due(adding, ledger.media_ahead())
    if known and (known.deck, known.model) == (deck, model) and not verdicts_due:
        fields = {f.casefold(): f for f in known.fields}
        context = Context(known.deck_id, fields, [Outcome(result=True)] * len(adding))
    else:
        context = _check(client, deck, model, adding, ensure_deck, verdicts_due)
    ready, doubtful = _by_verdict(adding, context, model=model, results=results)
    _reconcile(client, context, doubtful, ledger, results)
    media_warnings = _store_media(client, ready, ledger)
    misfiled = _add(client, deck, model, context.deck_id, ready, ledger, results, media_warnings)
    added = {n.key: results[n.key].note_id for n in ready if results[n.key].status == "sent"}
    # Builds without verdicts (the 2023 one) try every note: a note whose earlier addNote
    # went unanswered comes back a duplicate of itself, to be found as above.
    lost = [
        (n, results[n.key].error)
        for n in ready
        if n.unanswered_since and results[n.key].status == "duplicate"
    ]
    _reconcile(client, context, lost, ledger, results)
    doubtful += lost
    earlier: dict[int, int | None] = {n.key: n.note_id for n in notes if n.note_id is not None}
    for key, note_id in earlier.items():
        results[key] = Delivered("sent", note_id=note_id)
    earlier.update({n.key: results[n.key].note_id for n, _ in doubtful})
    if later is not None:
        later.add(deck, context.deck_id, added, misfiled)
    elif misfiled is None:
        earlier.update(added)
    else:
        _place(client, deck, context.deck_id, added, results, misfiled=misfiled)
    _place(client, deck, context.deck_id, earlier, results)


def _by_verdict(
    adding: Sequence[Outgoing], context: Context, *, model: str, results: dict[int, Delivered]
) -> tuple[list[Outgoing], list[tuple[Outgoing, str]]]:
    """The notes Anki would add (ready), and those it calls duplicates whose earlier add
    went unanswered (doubtful: perhaps they are themselves, with Anki's words); the others
    fail now, in `results` (a field the model lacks, or Anki's refusal)."""
    ready: list[Outgoing] = []
    doubtful: list[tuple[Outgoing, str]] = []
    for note, verdict in zip(adding, context.verdicts, strict=True):
        unknown = [n for n in note.fields if context.fields and n.casefold() not in context.fields]
        if unknown:
            results[note.key] = Delivered(
                "failed",
                error=f"{', '.join(repr(n) for n in unknown)} is not a field of «{model}» "
                f"(fields: {', '.join(context.fields.values())})",
            )
        elif verdict.ok and verdict.result is not False:
            ready.append(note)
        elif note.unanswered_since and "duplicate" in (verdict.error or ""):
            doubtful.append((note, verdict.error or ""))
        else:
            results[note.key] = _refusal(verdict.error or "Anki cannot add this note")
    return ready, doubtful


@dataclass
class Placement:
    """New notes whose cards are still to be placed, per deck, gathered over the waves of
    one call: `run` moves them with one changeDeck per deck (Anki resets its main window
    for every changeDeck, and a request waits for its timer)."""

    decks: dict[str, tuple[int | None, dict[int, int | None], list[int] | None]] = field(
        default_factory=dict
    )

    def add(
        self, deck: str, deck_id: int | None, added: Mapping[int, int | None],
        misfiled: list[int] | None,
    ) -> None:  # fmt: skip
        if not added:
            return
        known_id, notes, cards = self.decks.get(deck, (deck_id, {}, []))
        notes.update(added)
        # one wave whose misfiled cards are unknown: every note of the deck is looked up
        cards = None if cards is None or misfiled is None else [*cards, *misfiled]
        self.decks[deck] = (known_id if known_id is not None else deck_id, notes, cards)

    def note_keys(self) -> list[int]:
        return [key for _, notes, _ in self.decks.values() for key in notes]

    def run(self, client: AnkiClient, results: dict[int, Delivered]) -> None:
        """Place every gathered note (AnkiUnavailable propagates: the rest stays unplaced)."""
        while self.decks:
            deck, (deck_id, notes, cards) = next(iter(self.decks.items()))
            _place(client, deck, deck_id, notes, results, misfiled=cards)
            del self.decks[deck]


def _check(
    client: AnkiClient,
    deck: str,
    model: str,
    notes: Sequence[Outgoing],
    ensure_deck: bool,
    verdicts_due: bool,
) -> Context:
    """The deck's id, the model's fields and (`verdicts_due`) the per-note verdicts,
    creating what is due."""
    doubt = any(n.unanswered_since for n in notes)
    for attempt in range(2):
        actions = [
            ankiconnect.create_deck(deck) if ensure_deck else ankiconnect.deck_names_and_ids(),
            ankiconnect.model_field_names(model),
        ]
        if verdicts_due:
            news = [_new(deck, model, n) for n in notes]
            actions.append(ankiconnect.can_add_notes_with_error_detail(news))
        if doubt:
            actions.append(ankiconnect.model_names_and_ids())
        deck_outcome, names, *rest = client.multi(actions)
        if ensure_deck and not deck_outcome.ok:
            raise AnkiRefused(f"Anki refused to create the deck «{deck}»: {deck_outcome.error}")
        if is_model_missing(names.error, model) and model == DEFAULT_MODEL.name and attempt == 0:
            model_create_default(client)
            continue
        break
    deck_id = _deck_id(deck_outcome, deck, ensure_deck)
    if not names.ok:
        return Context(deck_id, {}, [Outcome(error=names.error)] * len(notes))
    fields = {n.casefold(): n for n in names.result or []}
    model_id = _model_id(rest[-1], model) if doubt else None
    verdicts = _verdicts(rest[0], len(notes)) if verdicts_due else None
    return Context(deck_id, fields, verdicts or [Outcome(result=True)] * len(notes), model_id)


def _verdicts_due(notes: Sequence[Outgoing], ahead: Mapping[str, str]) -> bool:
    """Verdicts first when a note carries media still to upload (not uploaded in vain) or
    may be in Anki already. Media stored ahead are no reason: each addNote's own answer
    says what Anki refused."""
    return any(n.unanswered_since or any(m not in ahead for m in n.media) for n in notes)


def _deck_id(outcome: Outcome, deck: str, created: bool) -> int | None:
    if not outcome.ok:
        return None
    if created:
        return int(outcome.result) if isinstance(outcome.result, int) else None
    decks = outcome.result if isinstance(outcome.result, dict) else {}
    found = decks.get(deck)
    if found is None:  # Anki finds decks by name whatever the letter case
        found = next((i for name, i in decks.items() if name.casefold() == deck.casefold()), None)
    return int(found) if isinstance(found, int) else None


def _model_id(outcome: Outcome, model: str) -> int | None:
    found = (outcome.result or {}).get(model) if isinstance(outcome.result, dict) else None
    return int(found) if isinstance(found, int) else None


def _verdicts(outcome: Outcome, count: int) -> list[Outcome] | None:
    """One verdict per note; None when the build lacks the action (every note is tried)."""
    if not outcome.ok or not isinstance(outcome.result, list) or len(outcome.result) != count:
        return None
    return [
        Outcome(result=True) if v.get("canAdd") else Outcome(error=v.get("error") or "")
        for v in outcome.result
    ]


def _new(deck: str, model: str, note: Outgoing) -> NewNote:
    return NewNote(deck=deck, model=model, fields=note.fields, tags=note.tags)


def _refusal(error: str) -> Delivered:
    error = clean_error(error)
    if "duplicate" in error:
        return Delivered("duplicate", error=error)
    return Delivered("failed", error=error)


def _reconcile(
    client: AnkiClient,
    context: Context,
    doubtful: Sequence[tuple[Outgoing, str]],
    ledger: Ledger,
    results: dict[int, Delivered],
) -> None:
    """Notes Anki added before it went away: found by model and first field, then recorded."""
    first = next(iter(context.fields.values()), None)
    if not doubtful or context.model_id is None or first is None:
        results.update({note.key: _refusal(error) for note, error in doubtful})
        return
    queries = [
        ankiconnect.find_notes(ankiconnect.dupe_query(context.model_id, _value(n.fields, first)))
        for n, _ in doubtful
    ]
    found = client.multi(queries)
    candidates = [i for f in found if f.ok for i in f.result or []]
    holders = ledger.holders(candidates)
    taken: set[int] = set()
    for (note, error), outcome in zip(doubtful, found, strict=True):
        sent_at = note.unanswered_since.timestamp() if note.unanswered_since else 0
        since = int(sent_at * 1000) - CLOCK_SLACK_MS
        ours = [
            i
            for i in (outcome.result or [] if outcome.ok else [])
            if i >= since and holders.get(i, note.key) == note.key and i not in taken
        ]
        if ours:
            taken.add(ours[0])
            results[note.key] = Delivered("sent", note_id=ours[0], warnings=[RECOVERED])
        else:
            results[note.key] = _refusal(error)


def _value(fields: dict[str, str], name: str) -> str:
    wanted = name.casefold()
    return next((v for k, v in fields.items() if k.casefold() == wanted), "")


def _store_media(
    client: AnkiClient, notes: Sequence[Outgoing], ledger: Ledger
) -> dict[int, list[str]]:
    """Store the files `notes` show; a renamed file is renamed in the notes' fields, a
    file Anki did not store is a warning on the notes that show it."""
    names = list(dict.fromkeys(name for note in notes for name in note.media))
    if not names:
        return {}
    ahead = ledger.media_ahead()
    stored = {name: ahead[name] for name in names if name in ahead}
    rest = [name for name in names if name not in stored]
    if rest:
        stored.update(media_send(client, ledger.load_media(rest)))
    warnings: dict[int, list[str]] = {}
    for note in notes:
        for name in note.media:
            final = stored.get(name, "")
            if not final:
                warnings.setdefault(note.key, []).append(
                    f"media_failed: {name}: Anki did not store the file; the note shows a "
                    "broken image"
                )
            elif final != name:
                note.fields = {k: v.replace(name, final) for k, v in note.fields.items()}
    return warnings


def _add(
    client: AnkiClient,
    deck: str,
    model: str,
    deck_id: int | None,
    notes: Sequence[Outgoing],
    ledger: Ledger,
    results: dict[int, Delivered],
    media_warnings: dict[int, list[str]],
) -> list[int] | None:
    """Add `notes`; the new cards Anki filed outside the deck (None: not known, look them up).

    With the deck's id, each request brackets its addNote actions with two searches for
    today's cards outside the deck: what the second finds and the first did not is this
    request's misfiled cards, with no request of its own.
    """
    misfiled: list[int] | None = [] if deck_id is not None else None
    for chunk in _chunks(notes):
        actions = [ankiconnect.add_note(_new(deck, model, n)) for n in chunk]
        if deck_id is not None:
            elsewhere = ankiconnect.find_cards(ankiconnect.new_elsewhere_query(deck_id))
            actions = [elsewhere, *actions, elsewhere]
        ledger.sending([n.key for n in chunk])
        outcomes = client.multi(actions)
        if deck_id is not None:
            before, *outcomes, after = outcomes
            if misfiled is not None and before.ok and after.ok:
                misfiled += sorted(set(after.result or []) - set(before.result or []))
            else:
                misfiled = None
        for note, outcome in zip(chunk, outcomes, strict=True):
            if outcome.ok and isinstance(outcome.result, int):
                results[note.key] = Delivered(
                    "sent", note_id=outcome.result, warnings=media_warnings.get(note.key, [])
                )
            else:
                results[note.key] = _refusal(outcome.error or "Anki returned no note id")
    return misfiled


def _chunks(notes: Sequence[Outgoing]) -> list[list[Outgoing]]:
    """Requests of at most ADDS_PER_REQUEST notes and about REQUEST_BYTES (one note: any)."""
    chunks: list[list[Outgoing]] = []
    size = REQUEST_BYTES + 1
    for note in notes:
        weight = len(json.dumps(note.fields, ensure_ascii=False).encode()) + 200
        if size + weight > REQUEST_BYTES or len(chunks[-1]) >= ADDS_PER_REQUEST:
            chunks.append([])
            size = 0
        chunks[-1].append(note)
        size += weight
    return chunks


def _place(
    client: AnkiClient,
    deck: str,
    deck_id: int | None,
    notes: Mapping[int, int | None],
    results: dict[int, Delivered],
    misfiled: list[int] | None = None,
) -> None:
    """Move the cards of `notes` (key → Anki note id) that are not in `deck` into it.

    `misfiled`: those cards, already known (else they are looked up).
    """
    ids = {key: nid for key, nid in notes.items() if nid}
    if not ids:
        return
    try:
        misplaced = misfiled or []
        if misfiled is None:
            if deck_id is None:
                raise AnkiError(f"Anki knows no deck «{deck}»")
            note_ids = list(ids.values())
            for start in range(0, len(note_ids), NOTES_PER_REQUEST):
                chunk = note_ids[start : start + NOTES_PER_REQUEST]
                misplaced += client.find_cards(ankiconnect.misplaced_query(chunk, deck_id))
        if misplaced:
            client.change_deck(misplaced, deck)
            logger.info("Anki filed %d new card(s) outside %s: moved", len(misplaced), deck)
    except AnkiUnavailable as exc:
        for key in ids:
            results[key].warnings.append(
                f"deck_unchecked: the cards' deck was not verified yet ({exc.message}); "
                "they are moved when Anki answers again"
            )
        raise
    except AnkiError as exc:  # nothing a later try would change: reported, not retried
        for key in ids:
            results[key].warnings.append(f"deck_unchecked: {exc.message}")
    for key in ids:
        results[key].placed = True
