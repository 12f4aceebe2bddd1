"""Use cases of the Anki bridge: model info, adding notes (two ways), reading notes.

Adding always goes through the journal (`anki_bridge.journal`): a note is written down
before it is sent, so a closed Anki queues notes instead of losing them.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.utils import timezone

from anki_bridge import client as ankiconnect
from anki_bridge.client import (
    AnkiClient,
    card_reviews,
    deck_query,
    deck_spelled,
    find_cards,
    set_due_date,
)
from anki_bridge.delivery import Known, is_model_missing, model_create_default
from anki_bridge.drafts import drafts_build, items_parse, note_validate, target_given
from anki_bridge.exceptions import AnkiError, AnkiModelNotFound, AnkiUnavailable
from anki_bridge.journal import MediaReady, Submission
from anki_bridge.ledger import dedup_sent
from anki_bridge.models import NoteChange
from anki_bridge.notemodel import DEFAULT_MODEL, NoteModel, fields_normalize
from anki_bridge.review import html_text
from anki_bridge.schemas import (
    AddNotesResult,
    CardStates,
    DeckCounts,
    DeckList,
    DeckStats,
    DeleteNotesResult,
    FoundNotes,
    NoteDetail,
    NoteInput,
    NoteUpdated,
    RescheduleResult,
    Retention,
)
from core.exceptions import Conflict, InvalidInput, NotFound

# Problems per call of `anki.add_problems` (and per run of the admin action).
PROBLEMS_MAX = 50

NAME_MAX = 255
NOTE_IDS_MAX = 500
MODEL_CACHE_SECONDS = 30 * 24 * 3600


def greeting_make(*, name: str) -> str:
    """The seed's ping answer: `Привет, {name}! Я твой MCP-сервер.`"""
    name = name.strip()
    if not name:
        raise InvalidInput("name must not be empty or whitespace", field="name")
    return f"Привет, {name}! Я твой MCP-сервер."


def _name(value: str | None, default: str, field: str) -> str:
    name = (value or "").strip() or default
    if len(name) > NAME_MAX:
        raise InvalidInput(f"{field} must be at most {NAME_MAX} characters", field=field)
    return name


def deck_resolve(deck: str | None) -> str:
    """The deck to use: `deck`, or ANKI_DEFAULT_DECK when it is empty."""
    return _name(deck, settings.ANKI_DEFAULT_DECK, "deck")


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
                total=int(counts.get("total_in_deck", 0)),
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
    seen: Known | None = None
    structure: NoteModel | None
    try:
        with AnkiClient() as client:
            structure, seen = target_load(client, model=model_name, deck=deck_name)
        reachable = True
    except AnkiUnavailable:
        structure, reachable = model_known(model_name), False
    if structure is not None:
        clozes_check(structure, notes, name="items")
    done = dedup_sent(n.dedup_key for n in notes if n.dedup_key)

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
) -> AddNotesResult:
    """Seed 002 `anki.add_notes`: fields sent as given; no model lookup, no deck creation.

    An image whose `target_field` is none of the note's fields fails the whole call
    before anything is sent (InvalidInput naming it) — unless it was left at the default
    "Back" and the model's back field (as last seen, or the default model's) is one of the
    note's fields: the image goes there.
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
    done = dedup_sent(n.dedup_key for n in parsed if n.dedup_key)
    media = MediaReady(send=True)  # sends nothing (no thread) for notes without files
    with Submission(
        deck=deck_name, model=model_name, ensure_deck=False, source=source, media=media
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
        return result_make(submission.finish())


def notes_info_get(*, note_ids: Sequence[int]) -> list[dict[str, Any] | None]:
    """Seed 002 `anki.note_info`: a NoteInfo or None per id, in request order."""
    if not note_ids:
        raise InvalidInput("noteIds must hold at least one id", field="noteIds")
    if len(note_ids) > NOTE_IDS_MAX:
        raise InvalidInput(f"noteIds holds at most {NOTE_IDS_MAX} ids", field="noteIds")
    with AnkiClient() as client:
        return notes_described(client, note_ids)


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
    try:
        signed = signing.loads(confirm_token, salt=DELETE_SALT, max_age=DELETE_CONFIRM_SECONDS)
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
    return DeleteNotesResult(deleted=ids)


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
    now = _field_values(after or {})
    lost = [
        name for name, value in (fields or {}).items() if _nfc(now.get(name, "")) != _nfc(value)
    ]
    tags_now = list((after or {}).get("tags", []))
    if tags is not None and {_nfc(t).casefold() for t in tags_now} != {
        _nfc(t).casefold() for t in tags
    }:  # Anki keeps a tag once, whatever its case
        lost.append("tags")
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
        tags=tags_now if tags is not None else None,
        change=change.pk,
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
        counts = client.deck_stats([spelled]).get(ids[spelled], {})
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
        f"due today: {learning + due} · cards: {counts.get('total_in_deck', 0)}",
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


def _field_values(info: Mapping[str, Any]) -> dict[str, str]:
    """A NoteInfo's fields as name → value, in the order given."""
    return {name: value.get("value", "") for name, value in info.get("fields", {}).items()}


def _nfc(value: str) -> str:
    """`value` as Anki stores text (NFC): a field read back compares equal to what was sent."""
    return unicodedata.normalize("NFC", value)
