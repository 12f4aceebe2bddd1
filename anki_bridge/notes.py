"""Notes as Anki holds them: read (with their cards' scheduling), found by an Anki search,
deleted on a signed confirmation, and changed in place (journaled, read back).

Adding notes is `anki_bridge.services` (through the journal); these use cases are reached
through it too.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from django.core import signing
from django.core.cache import cache
from django.utils import timezone

from anki_bridge import scheduling
from anki_bridge.client import AnkiClient
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from anki_bridge.ledger import keys_free
from anki_bridge.models import Note, NoteChange
from anki_bridge.schemas import DeleteNotesResult, FoundNotes, NoteUpdated
from core.exceptions import Conflict, InvalidInput, NotFound

NOTE_IDS_MAX = 500


def notes_info_get(*, note_ids: Sequence[int]) -> list[dict[str, Any] | None]:
    """Seed 002 `anki.note_info`: a NoteInfo or None per id, in request order, with each
    card's scheduling facts (`schedule`, in the order of `cards`)."""
    if not note_ids:
        raise InvalidInput("noteIds must hold at least one id", field="noteIds")
    if len(note_ids) > NOTE_IDS_MAX:
        raise InvalidInput(f"noteIds holds at most {NOTE_IDS_MAX} ids", field="noteIds")
    with AnkiClient() as client:
        notes = notes_described(client, note_ids)
        cards = [card for note in notes if note for card in note["cards"]]
        facts = scheduling.cards_scheduled(client, cards) if cards else {}
    for note in notes:
        if note is not None:
            note["schedule"] = [facts[c] for c in note["cards"] if c in facts]
    return notes


FIND_LIMIT_MAX = 100
FIELD_CHARS_SHOWN = 500


def notes_find(*, query: str, limit: int = 20, offset: int = 0) -> FoundNotes:
    """`anki.find_notes`: the notes an Anki search finds, oldest first, a page at a time;
    a field longer than FIELD_CHARS_SHOWN characters is cut, and named in `shortened`."""
    if not query.strip():
        raise InvalidInput(
            "query must hold an Anki search, e.g. deck:Физика tag:механика", field="query"
        )
    if not 1 <= limit <= FIND_LIMIT_MAX:
        raise InvalidInput(f"limit must be 1–{FIND_LIMIT_MAX}, got {limit}", field="limit")
    if offset < 0:
        raise InvalidInput(f"offset must be 0 or more, got {offset}", field="offset")
    with AnkiClient() as client:
        try:
            found = sorted(client.find_notes(query))
        except AnkiError as exc:
            raise InvalidInput(
                f"query: Anki cannot read this search ({exc.message})", field="query"
            ) from exc
        page = found[offset : offset + limit]
        described = notes_described(client, page) if page else []
    notes = []
    for info in described:
        if info is None:  # deleted between the search and the read
            continue
        cut = [name for name, value in info["fields"].items() if len(value) > FIELD_CHARS_SHOWN]
        for name in cut:
            info["fields"][name] = info["fields"][name][:FIELD_CHARS_SHOWN] + "…"
        notes.append({**info, "shortened": cut or None})
    return FoundNotes.model_validate(
        {
            "total": len(found),
            "offset": offset,
            "has_more": offset + len(page) < len(found),
            "notes": notes,
        }
    )


DELETE_SALT = "anki_bridge.notes_delete"
DELETE_CONFIRM_SECONDS = 600
DELETE_MAX = 100


def notes_delete(
    *, note_ids: Sequence[int], confirm_token: str | None, user_id: int | None
) -> DeleteNotesResult:
    """`anki.delete_notes`, in two steps. Without `confirm_token`: what would go (each
    note as Anki holds it now) and a token; nothing is deleted. With the token of exactly
    these notes, given to this user in the last DELETE_CONFIRM_SECONDS: they are deleted,
    once. The token is signed, not stored: any process of the deployment checks it; its
    use is marked in the cache (shared by the processes of a deployment with Redis)."""
    ids = sorted(set(note_ids))
    if not ids:
        raise InvalidInput("note_ids must hold at least one note id", field="note_ids")
    if len(ids) > DELETE_MAX:
        raise InvalidInput(f"note_ids holds at most {DELETE_MAX} ids", field="note_ids")
    if confirm_token is None:
        return _delete_preview(ids, user_id=user_id)
    _delete_token_check(confirm_token, ids, user_id=user_id)
    used = f"anki:delete-token-used:{hashlib.sha256(confirm_token.encode()).hexdigest()}"
    if not cache.add(used, 1, DELETE_CONFIRM_SECONDS):  # atomic: one of two racing calls
        raise InvalidInput(
            "confirm_token: already used: its notes were deleted; a token deletes once",
            field="confirm_token",
        )
    try:
        with AnkiClient() as client:
            client.delete_notes(ids)
    except BaseException:
        cache.delete(used)  # Anki did not confirm: a retry with the token may delete them
        raise
    # their keys free: a note added again under its key is a new note, not this gone one
    keys_free(Note.objects.filter(anki_note_id__in=ids), "the note was deleted (anki.delete_notes)")
    return DeleteNotesResult(deleted=ids)


def _delete_preview(ids: list[int], *, user_id: int | None) -> DeleteNotesResult:
    """The first step of `notes_delete`: the notes as Anki holds them now and a token
    signed for exactly those of them Anki holds, for `user_id`; nothing is deleted."""
    with AnkiClient() as client:
        described = notes_described(client, ids)
    found = [info for info in described if info is not None]
    missing = [i for i, info in zip(ids, described, strict=True) if info is None]
    if not found:
        raise InvalidInput("note_ids: Anki holds none of these notes", field="note_ids")
    listed = [n["noteId"] for n in found]
    token = signing.dumps({"notes": listed, "user": user_id}, salt=DELETE_SALT)
    return DeleteNotesResult.model_validate(
        {
            "deleted": [],
            "would_delete": found,
            "missing": missing or None,
            "confirm_token": token,
        }
    )


def _delete_token_check(token: str, ids: list[int], *, user_id: int | None) -> None:
    """InvalidInput unless `token` was signed here, in the last DELETE_CONFIRM_SECONDS, for
    `user_id` and exactly the notes `ids` (whether it was used is the caller's check)."""
    try:
        signed = signing.loads(token, salt=DELETE_SALT, max_age=DELETE_CONFIRM_SECONDS)
    except signing.SignatureExpired as exc:
        raise InvalidInput(
            f"confirm_token: expired (a token holds {DELETE_CONFIRM_SECONDS // 60} minutes); "
            "call again without it for a new one",
            field="confirm_token",
        ) from exc
    except signing.BadSignature as exc:
        raise InvalidInput(
            "confirm_token: not a token this server gave; call without it first",
            field="confirm_token",
        ) from exc
    if not isinstance(signed, dict) or signed.get("user") != user_id:
        raise InvalidInput("confirm_token: given to another user", field="confirm_token")
    if signed.get("notes") != ids:
        raise InvalidInput(
            "confirm_token: given for other notes; it deletes exactly the notes it listed "
            f"({', '.join(map(str, signed['notes']))})",
            field="confirm_token",
        )


def notes_described(client: AnkiClient, note_ids: Sequence[int]) -> list[dict[str, Any] | None]:
    """A NoteInfo or None per id, in order, with each note's deck (two requests)."""
    infos = client.notes_info(note_ids)
    cards = [c for info in infos if info for c in info.get("cards", [])]
    decks = client.get_decks(cards) if cards else {}
    deck_of = {cid: deck for deck, cids in decks.items() for cid in cids}
    notes: list[dict[str, Any] | None] = []
    for info in infos:
        if not info or "noteId" not in info:
            notes.append(None)
            continue
        ordered = sorted(info.get("fields", {}).items(), key=lambda kv: kv[1].get("order", 0))
        card_ids = list(info.get("cards", []))
        notes.append(
            {
                "noteId": info["noteId"],
                "modelName": info.get("modelName"),
                "deckName": deck_of.get(card_ids[0]) if card_ids else None,
                "tags": list(info.get("tags", [])),
                "fields": _field_values({"fields": dict(ordered)}),
                "cards": card_ids,
            }
        )
    return notes


def note_update(
    *,
    note_id: int,
    fields: Mapping[str, str] | None,
    tags: Sequence[str] | None,
    user_id: int | None,
) -> NoteUpdated:
    """`anki.update_note`: the named fields (matched exactly, as AnkiConnect matches them:
    an unknown name is refused here, where the add-on would skip it without a word) and,
    when given, all of the note's tags. Refused while the note is selected in Anki's
    Browser, whose editor would write its own copy back over the change. Journaled
    (`NoteChange`) before it is sent, and read back after: a change Anki did not keep is
    reported, not presented as done."""
    if not fields and tags is None:
        raise InvalidInput("give fields or tags to change", field="fields")
    spaced = [tag for tag in tags or [] if not tag.strip() or len(tag.split()) > 1]
    if spaced:
        raise InvalidInput(
            f"tags: a tag is one word (Anki splits a tag at its spaces): {spaced[0]!r}",
            field="tags",
        )
    with AnkiClient() as client:
        info = _note_editable(client, note_id, fields)
        held = _field_values(info)
        before = {name: held[name] for name in fields or {}}
        change = NoteChange.objects.create(
            anki_note_id=note_id,
            fields=dict(fields or {}),
            tags=list(tags) if tags is not None else None,
            before={"fields": before, "tags": list(info.get("tags", []))},
            owner_id=user_id,
        )
        try:
            client.update_note(note_id, fields=fields or None, tags=tags)
            (after,) = client.notes_info([note_id])
        except (AnkiUnavailable, AnkiError) as exc:
            NoteChange.objects.filter(pk=change.pk).update(
                status=NoteChange.Status.FAILED, last_error=str(exc)
            )
            raise
    lost = _change_lost(after or {}, fields=fields, tags=tags)
    if lost:
        reason = (
            f"Anki did not keep the change of {', '.join(lost)}: is the note open in an Anki "
            "editor (the Browser or an Edit window)? Close it and call again"
        )
        NoteChange.objects.filter(pk=change.pk).update(
            status=NoteChange.Status.FAILED, last_error=reason
        )
        raise Conflict(f"note_id: {reason}")
    NoteChange.objects.filter(pk=change.pk).update(
        status=NoteChange.Status.SENT, sent_at=timezone.now()
    )
    return NoteUpdated(
        note_id=note_id,
        changed=[name for name, value in (fields or {}).items() if before[name] != value],
        tags=list((after or {}).get("tags", [])) if tags is not None else None,
        change=change.pk,
    )


def _note_editable(
    client: AnkiClient, note_id: int, fields: Mapping[str, str] | None
) -> dict[str, Any]:
    """The NoteInfo of `note_id`, when a change of `fields` may be sent: NotFound when Anki
    holds no such note, InvalidInput naming a field it lacks, Conflict while the note is
    selected in Anki's Browser."""
    (info,) = client.notes_info([note_id])
    if not info or "noteId" not in info:
        raise NotFound(f"note_id: Anki holds no note {note_id}")
    held = _field_values(info)
    unknown = [name for name in fields or {} if name not in held]
    if unknown:
        raise InvalidInput(
            f"fields: the note ({info.get('modelName')}) has no field "
            f"{', '.join(map(repr, unknown))}; its fields: {', '.join(held)} "
            "(names are matched exactly)",
            field="fields",
        )
    try:
        open_in_browser = note_id in client.selected_notes()
    except AnkiError:  # an add-on build without guiSelectedNotes
        open_in_browser = False
    if open_in_browser:
        raise Conflict(
            f"note_id: note {note_id} is open in Anki's Browser, whose editor would write "
            "its copy back over this change; select another note or close the Browser, "
            "then call again"
        )
    return info


def _change_lost(
    after: Mapping[str, Any], *, fields: Mapping[str, str] | None, tags: Sequence[str] | None
) -> list[str]:
    """The fields (and `tags`, when given) that the note read back (`after`) does not
    hold as sent: what Anki did not keep."""
    now = _field_values(after)
    lost = [
        name for name, value in (fields or {}).items() if _nfc(now.get(name, "")) != _nfc(value)
    ]
    tags_now = list(after.get("tags", []))
    if tags is not None and {_nfc(t).casefold() for t in tags_now} != {
        _nfc(t).casefold() for t in tags
    }:  # Anki keeps a tag once, whatever its case
        lost.append("tags")
    return lost


def _field_values(info: Mapping[str, Any]) -> dict[str, str]:
    """A NoteInfo's fields as name → value, in the order given."""
    return {name: value.get("value", "") for name, value in info.get("fields", {}).items()}


def _nfc(value: str) -> str:
    """`value` as Anki stores text (NFC): a field read back compares equal to what was sent."""
    return unicodedata.normalize("NFC", value)
