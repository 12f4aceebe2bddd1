"""Use cases of the Anki bridge: adding notes (two ways), and the face of the others.

Adding always goes through the journal (`anki_bridge.journal`): a note is written down
before it is sent, so a closed Anki queues notes instead of losing them. Models and decks
live in `anki_bridge.decks`, reading, finding, deleting and changing notes in
`anki_bridge.notes`; adapters and the other modules take them all from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from anki_bridge.client import AnkiClient
from anki_bridge.decks import (
    cards_reschedule,
    deck_described,
    deck_resolve,
    decks_list,
    model_info_get,
    model_known,
    model_resolve,
    stats_get,
    target_load,
)
from anki_bridge.delivery import Known
from anki_bridge.drafts import drafts_build, items_parse, note_validate, target_given
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from anki_bridge.journal import MediaReady, Submission
from anki_bridge.ledger import dedup_release, dedup_sent
from anki_bridge.notemodel import NoteModel, fields_normalize
from anki_bridge.notes import (
    note_update,
    notes_delete,
    notes_find,
    notes_info_get,
)
from anki_bridge.schemas import AddNotesResult, NoteDetail, NoteInput
from core.exceptions import InvalidInput

# The bridge's one face: adapters and the other modules import these from here.
__all__ = [
    "PROBLEMS_MAX",
    "cards_reschedule",
    "clozes_check",
    "deck_described",
    "deck_resolve",
    "decks_list",
    "greeting_make",
    "model_info_get",
    "model_known",
    "model_resolve",
    "note_update",
    "notes_add",
    "notes_add_from_model",
    "notes_delete",
    "notes_find",
    "notes_info_get",
    "result_make",
    "stats_get",
]

# Problems per call of `anki.add_problems` (and per run of the admin action).
PROBLEMS_MAX = 50


def greeting_make(*, name: str) -> str:
    """The seed's ping answer: `Привет, {name}! Я твой MCP-сервер.`"""
    name = name.strip()
    if not name:
        raise InvalidInput("name must not be empty or whitespace", field="name")
    return f"Привет, {name}! Я твой MCP-сервер."


def result_make(details: Sequence[NoteDetail]) -> AddNotesResult:
    added = sum(1 for d in details if d.status == "ok")
    skipped = sum(1 for d in details if d.status in ("duplicate", "error"))
    return AddNotesResult(added=added, skipped=skipped, details=list(details))


def notes_add_from_model(
    *,
    items: Sequence[NoteInput | Mapping[str, Any]],
    deck: str | None = None,
    model: str | None = None,
    source: str = "anki.add_from_model",
    owner: int | None = None,
) -> AddNotesResult:
    """Seed 002 `anki.add_from_model`: fields mapped onto the model, the deck created.

    While Anki is unreachable the model's last known fields (or the default model's)
    are used and the notes are queued. `owner`: the user the journal rows belong to.
    """
    deck_name, model_name = deck_resolve(deck), model_resolve(model)
    notes = items_parse(items, name="items")
    structure, seen, reachable = _target_seen(model=model_name, deck=deck_name)
    if structure is not None:
        clozes_check(structure, notes, name="items")
    done = _dedup_held([n.dedup_key for n in notes if n.dedup_key], owner, reachable)

    def fields_of(note: NoteInput) -> tuple[dict[str, str], list[str]]:
        if structure is None:
            return dict(note.fields), [
                f"model_unverified: Anki is unreachable and «{model_name}» was never seen; "
                "field names are sent as given"
            ]
        return fields_normalize(structure, note.fields)

    def target_of(note: NoteInput, target: str) -> str | None:
        if structure is not None:
            return structure.field_named(target)
        return _key_named(note.fields, target)

    media = MediaReady(send=reachable)  # journaled and stored in Anki as they are ready
    with Submission(
        deck=deck_name,
        model=model_name,
        ensure_deck=True,
        source=source,
        deliver=reachable,
        seen=seen,
        owner=owner,
        media=media,
    ) as submission:
        drafts_build(
            notes,
            name="items",
            fields_of=fields_of,
            target_of=target_of,
            back_of=lambda note: structure.back_field() if structure is not None else None,
            skip=lambda note: note.dedup_key in done,
            on_file=media.add,
            on_ready=submission.add,  # the first notes go to Anki while the rest are prepared
        )
        return result_make(submission.finish())


def _target_seen(*, model: str, deck: str) -> tuple[NoteModel | None, Known | None, bool]:
    """The model and the deck as Anki has them now (`target_load`), and True; while Anki is
    unreachable the model as last seen (None when never seen), no `Known`, and False."""
    try:
        with AnkiClient() as client:
            structure, seen = target_load(client, model=model, deck=deck)
    except AnkiUnavailable:
        return model_known(model), None, False
    return structure, seen, True


def clozes_check(model: NoteModel, notes: Sequence[NoteInput], *, name: str) -> None:
    """InvalidInput naming the first note of a cloze `model` without a deletion, before
    anything is sent (Anki would refuse it «for unknown reason»)."""
    for i, note in enumerate(notes):
        field = model.cloze_missing(note.fields)
        if field is not None:
            where = f"{name}[{i}].fields.{field}"
            raise InvalidInput(
                f"{where}: a note of the cloze type «{model.name}» needs a deletion such as "
                "{{c1::answer}}; nothing was sent to Anki",
                field=where,
            )


def _key_named(fields: Mapping[str, str], name: str) -> str | None:
    wanted = name.strip().casefold()
    return next((key for key in fields if key.casefold() == wanted), None)


def notes_add(
    *,
    notes: Sequence[NoteInput | Mapping[str, Any]],
    deck: str | None = None,
    model: str | None = None,
    source: str = "anki.add_notes",
    owner: int | None = None,
) -> AddNotesResult:
    """Seed 002 `anki.add_notes`: fields sent as given; no model lookup, no deck creation.

    An image whose `target_field` is none of the note's fields fails the whole call
    before anything is sent (InvalidInput naming it) — unless it was left at the default
    "Back" and the model's back field (as last seen, or the default model's) is one of the
    note's fields: the image goes there. `owner`: the user the journal rows (and their
    dedup keys) belong to.
    """
    deck_name, model_name = deck_resolve(deck), model_resolve(model)
    if not notes:
        raise InvalidInput("notes must hold at least one note", field="notes")
    parsed = [note_validate(n, f"notes[{i}]") for i, n in enumerate(notes)]
    known = model_known(model_name)
    if known is not None:
        clozes_check(known, parsed, name="notes")
    back = known.back_field() if known is not None else None

    def back_of(note: NoteInput) -> str | None:
        return _key_named(note.fields, back) if back else None

    for i, note in enumerate(parsed):
        for j, spec in enumerate(note.images):
            if _key_named(note.fields, spec.target_field) is None and (
                target_given(spec) or back_of(note) is None
            ):
                where = f"notes[{i}].images[{j}].target_field"
                raise InvalidInput(
                    f"{where}: {spec.target_field!r} is not a field of the note "
                    f"({', '.join(note.fields)}); nothing was sent to Anki",
                    field=where,
                )
    done = _dedup_held([n.dedup_key for n in parsed if n.dedup_key], owner, reachable=True)
    media = MediaReady(send=True)  # sends nothing (no thread) for notes without files
    with Submission(
        deck=deck_name,
        model=model_name,
        ensure_deck=False,
        source=source,
        owner=owner,
        media=media,
    ) as submission:
        drafts_build(
            parsed,
            name="notes",
            fields_of=lambda note: (dict(note.fields), []),
            target_of=lambda note, target: _key_named(note.fields, target),
            back_of=back_of,
            skip=lambda note: note.dedup_key in done,
            on_file=media.add,
            on_ready=submission.add,
        )
        return result_make(_queued_warned(submission.finish(), parsed, known))


DEDUP_CHECK_SECONDS = 5


def _dedup_held(keys: list[str], owner: int | None, reachable: bool) -> set[str]:
    """The keys among `keys` whose notes of `owner`'s Anki holds: delivered before and, when
    Anki answers, still there. A note deleted in Anki since (by the user, in Anki) frees
    its key: the note given now is added, not called a duplicate of one that is gone."""
    sent = dedup_sent(keys, owner) if keys else {}
    ids = [note for note in sent.values() if note]
    if not ids or not reachable:
        return set(sent)
    try:  # a short look: an Anki that hangs is waited for by the delivery, not twice
        with AnkiClient(timeout=min(DEDUP_CHECK_SECONDS, settings.ANKI_CONNECT_TIMEOUT)) as client:
            infos = client.notes_info(ids)
    except (AnkiUnavailable, AnkiError):  # or refusing (no collection open): the keys stand
        return set(sent)
    gone = {note for note, info in zip(ids, infos, strict=True) if not info}
    dedup_release(gone, owner)
    return {key for key, note in sent.items() if note not in gone}


def _queued_warned(
    details: list[NoteDetail], notes: Sequence[NoteInput], known: NoteModel | None
) -> list[NoteDetail]:
    """Each queued note told now of its fields the model, as last seen, lacks: Anki will
    refuse it once it answers (a note sent now that Anki refuses says so itself)."""
    for detail in details:
        if detail.status == "queued" and (unknown := _fields_unknown(known, notes[detail.index])):
            detail.warnings = [*(detail.warnings or []), unknown]
    return details


def _fields_unknown(known: NoteModel | None, note: NoteInput) -> str:
    """The warning for the names of `note`'s fields the model `known` lacks ('' for none)."""
    if known is None:
        return ""
    unknown = [name for name in note.fields if known.field_named(name) is None]
    if not unknown:
        return ""
    return (
        f"unknown_field: {', '.join(map(repr, unknown))} is not a field of «{known.name}» "
        f"({', '.join(known.fields)}); Anki refuses the note"
    )
