"""Delivering a batch of notes to Anki in a few requests, with a result for every note.

For one deck and model, whatever the batch size:
1. `multi`: createDeck (when asked), modelFieldNames, canAddNotesWithErrorDetail — the
   per-note verdicts (older builds without that action: every note is tried);
2. `multi` of storeMediaFile for the notes that can go (split by payload size);
3. `multi` of addNote, one per note: per-note results on every build (`addNotes` is
   all-or-nothing on current builds and loses the indexes of its errors);
4. the deck guard, when the deck is not "Default": findCards + getDecks, and changeDeck
   for cards some builds file under "Default" instead of the asked deck.
A missing default model is created (never changed when it exists: changing a model's
fields forces a full sync). AnkiUnavailable before step 3 answers leaves every note
undelivered; after it, the answers already in hand are kept.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from anki_bridge import client as ankiconnect
from anki_bridge.client import AnkiClient, NewNote, Outcome, clean_error
from anki_bridge.exceptions import AnkiError, AnkiRefused, AnkiUnavailable
from anki_bridge.notemodel import DEFAULT_MODEL

logger = logging.getLogger(__name__)

DEFAULT_DECK = "Default"
MEDIA_BYTES_PER_REQUEST = 8 * 1024 * 1024
NOTES_PER_REQUEST = 500


@dataclass
class Outgoing:
    """A journaled note on its way: `key` identifies it to the caller."""

    key: int
    fields: dict[str, str]
    tags: list[str]
    media: list[str] = field(default_factory=list)


@dataclass
class Delivered:
    status: str  # sent | duplicate | failed
    note_id: int | None = None
    error: str = ""
    warnings: list[str] = field(default_factory=list)


MediaLoader = Callable[[Sequence[str]], dict[str, bytes]]


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
    load_media: MediaLoader,
) -> dict[int, Delivered]:
    """Deliver `notes` (one deck and model); a Delivered for every note key."""
    verdicts, model_fields = _check(client, deck, model, notes, ensure_deck)
    results: dict[int, Delivered] = {}
    ready: list[Outgoing] = []
    for note, verdict in zip(notes, verdicts, strict=True):
        unknown = [n for n in note.fields if model_fields and n.casefold() not in model_fields]
        if unknown:
            results[note.key] = Delivered(
                "failed",
                error=f"{', '.join(repr(n) for n in unknown)} is not a field of «{model}» "
                f"(fields: {', '.join(model_fields.values())})",
            )
        elif verdict.ok and verdict.result is not False:
            ready.append(note)
        else:
            results[note.key] = _refusal(verdict.error or "Anki cannot add this note")
    media_warnings = _store_media(client, ready, load_media)
    for start in range(0, len(ready), NOTES_PER_REQUEST):
        chunk = ready[start : start + NOTES_PER_REQUEST]
        outcomes = client.multi([ankiconnect.add_note(_new(deck, model, note)) for note in chunk])
        for note, outcome in zip(chunk, outcomes, strict=True):
            if outcome.ok and isinstance(outcome.result, int):
                results[note.key] = Delivered(
                    "sent", note_id=outcome.result, warnings=media_warnings.get(note.key, [])
                )
            else:
                results[note.key] = _refusal(outcome.error or "Anki returned no note id")
    sent = {k: r for k, r in results.items() if r.status == "sent" and r.note_id}
    if sent and deck != DEFAULT_DECK:
        _deck_guard(client, deck, sent)
    return results


def _check(
    client: AnkiClient, deck: str, model: str, notes: Sequence[Outgoing], ensure_deck: bool
) -> tuple[list[Outcome], dict[str, str]]:
    """Per-note verdicts and the model's fields (casefolded → name), creating what is due."""
    for attempt in range(2):
        actions = [ankiconnect.create_deck(deck)] if ensure_deck else []
        actions += [
            ankiconnect.model_field_names(model),
            ankiconnect.can_add_notes_with_error_detail([_new(deck, model, n) for n in notes]),
        ]
        *deck_outcome, names, verdicts = client.multi(actions)
        if deck_outcome and not deck_outcome[0].ok:
            raise AnkiRefused(f"Anki refused to create the deck «{deck}»: {deck_outcome[0].error}")
        if is_model_missing(names.error, model) and model == DEFAULT_MODEL.name and attempt == 0:
            model_create_default(client)
            continue
        break
    fields = {n.casefold(): n for n in names.result} if names.ok and names.result else {}
    if not names.ok:
        return [Outcome(error=names.error)] * len(notes), {}
    if verdicts.ok and isinstance(verdicts.result, list) and len(verdicts.result) == len(notes):
        return [
            Outcome(result=True) if v.get("canAdd") else Outcome(error=v.get("error") or "")
            for v in verdicts.result
        ], fields
    # An older build without canAddNotesWithErrorDetail: every note is tried with addNote.
    return [Outcome(result=True)] * len(notes), fields


def _new(deck: str, model: str, note: Outgoing) -> NewNote:
    return NewNote(deck=deck, model=model, fields=note.fields, tags=note.tags)


def _refusal(error: str) -> Delivered:
    error = clean_error(error)
    if "duplicate" in error:
        return Delivered("duplicate", error=error)
    return Delivered("failed", error=error)


def _store_media(
    client: AnkiClient, notes: Sequence[Outgoing], load_media: MediaLoader
) -> dict[int, list[str]]:
    """Store the files `notes` show, in requests of at most MEDIA_BYTES_PER_REQUEST.

    A file Anki stores under another name is renamed in the notes' fields; a file Anki
    refuses is a warning on the notes that show it.
    """
    names = list(dict.fromkeys(name for note in notes for name in note.media))
    if not names:
        return {}
    blobs = load_media(names)
    warnings: dict[int, list[str]] = {}
    stored: dict[str, str] = {}
    batch: list[ankiconnect.Action] = []
    asked_names: list[str] = []
    size = 0

    def send() -> None:
        for asked, outcome in zip(asked_names, client.multi(batch), strict=True):
            if outcome.ok and outcome.result:
                stored[asked] = str(outcome.result)
            else:
                stored[asked] = ""
                logger.warning("Anki refused media %s: %s", asked, outcome.error)

    for name in names:
        data = blobs.get(name)
        if data is None:
            stored[name] = ""
            continue
        encoded = base64.b64encode(data).decode("ascii")
        if batch and size + len(encoded) > MEDIA_BYTES_PER_REQUEST:
            send()
            batch, asked_names, size = [], [], 0
        batch.append(ankiconnect.store_media_file(name, encoded))
        asked_names.append(name)
        size += len(encoded)
    if batch:
        send()
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


def _deck_guard(client: AnkiClient, deck: str, sent: dict[int, Delivered]) -> None:
    """Move cards filed under "Default" instead of `deck` (a bug of some builds)."""
    ids = ",".join(str(r.note_id) for r in sent.values())
    try:
        cards = client.find_cards(f"nid:{ids}")
        by_deck = client.get_decks(cards) if cards else {}
        misfiled = list(by_deck.get(DEFAULT_DECK, []))
        if misfiled:
            client.change_deck(misfiled, deck)
            logger.warning(
                "Anki filed %d new card(s) under %s instead of %s: moved", len(misfiled),
                DEFAULT_DECK, deck,
            )  # fmt: skip
    except (AnkiUnavailable, AnkiError) as exc:
        for result in sent.values():
            result.warnings.append(f"deck_unchecked: the cards' deck was not verified: {exc}")
