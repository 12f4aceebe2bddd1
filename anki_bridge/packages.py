"""Anki packages (`.apkg`) for people without desktop Anki (issue 53).

Notes go into a new package file, never into a running Anki: AnkiDroid, AnkiMobile and
desktop Anki import it as a shared deck. The package is written by genanki (a small,
pure-Python library whose packages every Anki client imports; Anki's own `anki` package
weighs tens of megabytes and is used by the tests to import what we build). The notes
are prepared exactly as `anki.add_from_model` prepares them (`drafts_build`: fields on
the model's names, images fetched, resized and named by their content), so a package and
a delivery to Anki hold the same cards.

A package is built with a note type whose templates the hub knows: Anki's own Basic,
Basic (and reversed card) and Cloze, the seed's «Поля для ChatGPT», or a note type Anki
showed this hub before (`services.model_known`). Ids are derived from names, so the same
deck and note type imported twice are one deck and one note type, and a note's guid from
its `dedup_key` (else its note type and first field), so importing a package again updates
its notes instead of adding them twice.

Stored packages (`AnkiPackage`) belong to the user who made them, live in Django's
storage (any host of the deployment reads them), expire after ANKI_PACKAGE_TTL_HOURS and
are bounded by ANKI_PACKAGE_MAX_BYTES and ANKI_PACKAGE_MAX_PER_USER (the oldest go).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import re
import sqlite3
import tempfile
import time
import unicodedata
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from anki_bridge.drafts import drafts_build, items_parse
from anki_bridge.journal import Draft
from anki_bridge.models import AnkiPackage
from anki_bridge.notemodel import DEFAULT_MODEL, NoteModel, fields_normalize
from anki_bridge.schemas import NoteDetail, NoteInput
from core.exceptions import InvalidInput, NotFound

PACKAGES_DIR = "anki_packages"
MIME = "application/apkg"
ANKI_CSS = """.card {
  font-family: arial;
  font-size: 20px;
  text-align: center;
  color: black;
  background-color: white;
}"""
CLOZE_CSS = ANKI_CSS + "\n.cloze {\n  font-weight: bold;\n  color: blue;\n}"
ANSWER = '{{FrontSide}}\n\n<hr id="answer">\n\n'

# Anki's stock note types, as a new collection has them (names, fields and templates).
STOCK_MODELS = {
    "Basic": NoteModel(
        name="Basic",
        fields=("Front", "Back"),
        templates={"Card 1": {"Front": "{{Front}}", "Back": ANSWER + "{{Back}}"}},
        styling=ANKI_CSS,
    ),
    "Basic (and reversed card)": NoteModel(
        name="Basic (and reversed card)",
        fields=("Front", "Back"),
        templates={
            "Card 1": {"Front": "{{Front}}", "Back": ANSWER + "{{Back}}"},
            "Card 2": {"Front": "{{Back}}", "Back": ANSWER + "{{Front}}"},
        },
        styling=ANKI_CSS,
    ),
    "Cloze": NoteModel(
        name="Cloze",
        fields=("Text", "Back Extra"),
        templates={
            "Cloze": {"Front": "{{cloze:Text}}", "Back": "{{cloze:Text}}<br>\n{{Back Extra}}"}
        },
        styling=CLOZE_CSS,
    ),
    DEFAULT_MODEL.name: DEFAULT_MODEL,
}


@dataclass
class BuiltPackage:
    """A package's bytes and what went into it (a detail per asked note)."""

    data: bytes
    deck: str
    model: str
    notes: int
    cards: int
    media: int
    details: list[NoteDetail] = field(default_factory=list)


# --- Note types and ids ----------------------------------------------------------------


def stable_id(*parts: str) -> int:
    """An id from names, in the range Anki's own ids take (milliseconds since 2001 and
    later): the same deck or note type gets the same id in every package."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return (1 << 40) + int.from_bytes(digest[:5], "big")


def package_model(name: str | None) -> NoteModel:
    """The note type to build with: a stock one (any case), the seed's, or one Anki showed
    this hub; otherwise InvalidInput naming `model` and what can be used."""
    from anki_bridge.services import model_known, model_resolve  # services import Anki's client

    wanted = model_resolve(name)
    for stock_name, stock in STOCK_MODELS.items():
        if stock_name.casefold() == wanted.strip().casefold():
            return stock
    seen = model_known(wanted)
    if seen is not None and seen.templates:
        return seen
    raise InvalidInput(
        f"model: a package is built with a note type whose card templates are known: "
        f"{', '.join(STOCK_MODELS)}, or one that Anki showed this hub (anki.model_info); "
        f"{wanted!r} is neither",
        field="model",
    )


def is_cloze(model: NoteModel) -> bool:
    """Whether the model's cards are cloze deletions (a note without one makes no card)."""
    return model.cloze_missing({}) is not None


def _genanki_model(model: NoteModel) -> Any:
    import genanki  # off the MCP server's start-up

    templates = [
        {"name": name, "qfmt": sides.get("Front", ""), "afmt": sides.get("Back", "")}
        for name, sides in model.templates.items()
    ]
    return genanki.Model(
        stable_id("model", model.name, *model.fields, *(t["qfmt"] for t in templates)),
        model.name,
        fields=[{"name": name} for name in model.fields],
        templates=templates,
        css=model.styling or ANKI_CSS,
        model_type=genanki.Model.CLOZE if is_cloze(model) else genanki.Model.FRONT_BACK,
    )


# --- Building --------------------------------------------------------------------------


def package_build(
    *,
    items: Sequence[NoteInput | Mapping[str, Any]],
    deck: str | None = None,
    model: str | None = None,
    name: str = "items",
) -> BuiltPackage:
    """A package of `items` (the inputs of `anki.add_from_model`) in `deck` ("A::B" kept
    nested). A note repeating an earlier one (same dedup_key, or same note type and first
    field, as Anki judges duplicates) is left out as `duplicate`; a note with no card
    (an empty front, a cloze note with no deletion) is refused before anything is built."""
    from anki_bridge.services import deck_resolve

    deck_name = deck_resolve(deck)
    structure = package_model(model)
    notes = items_parse(items, name=name)
    drafts = drafts_build(
        notes,
        name=name,
        fields_of=lambda note: fields_normalize(structure, note.fields),
        target_of=lambda note, target: structure.field_named(target),
        back_of=lambda note: structure.back_field(),
    )
    _cards_check(drafts, structure, name)
    return _written(drafts, structure, deck_name)


def _cards_check(drafts: Sequence[Draft], model: NoteModel, name: str) -> None:
    first = model.fields[0]
    for draft in drafts:
        if (cloze := model.cloze_missing(draft.fields)) is not None:
            where = f"{name}[{draft.index}].fields.{cloze}"
            raise InvalidInput(
                f"{where}: a cloze note needs a deletion such as {{{{c1::answer}}}}; "
                "without one Anki makes no card",
                field=where,
            )
        where = f"{name}[{draft.index}].fields.{first}"
        value = draft.fields.get(first, "")
        if not value.strip():
            raise InvalidInput(f"{where}: the first field is empty", field=where)


def _written(drafts: Sequence[Draft], model: NoteModel, deck_name: str) -> BuiltPackage:
    return _written_groups([(model, deck_name, drafts)])


def _written_groups(groups: Sequence[tuple[NoteModel, str, Sequence[Draft]]]) -> BuiltPackage:
    """One package of every group's drafts, each group in its note type and deck."""
    import genanki

    decks: dict[str, Any] = {}
    media: dict[str, bytes] = {}
    seen: dict[str, int] = {}
    details: list[NoteDetail] = []
    cards = 0
    for model, deck_name, drafts in groups:
        if deck_name not in decks:
            decks[deck_name] = genanki.Deck(stable_id("deck", deck_name), deck_name)
        deck = decks[deck_name]
        cards += _notes_added(drafts, model, deck, media=media, seen=seen, details=details)
    package = genanki.Package(list(decks.values()))
    data = _package_bytes(package, media)
    names = list(dict.fromkeys(model.name for model, _, _ in groups))
    return BuiltPackage(
        data=data,
        deck=next(iter(decks)) if len(decks) == 1 else "Anki",
        model=", ".join(names),
        notes=sum(len(deck.notes) for deck in decks.values()),
        cards=cards,
        media=len(media),
        details=details,
    )


def _notes_added(
    drafts: Sequence[Draft],
    model: NoteModel,
    genanki_deck: Any,
    *,
    media: dict[str, bytes],
    seen: dict[str, int],
    details: list[NoteDetail],
) -> int:
    """`drafts` added to `genanki_deck` (a repeated note left out as `duplicate`), their
    files to `media`; returns the cards made."""
    import genanki

    genanki_model = _genanki_model(model)
    cards = 0
    for draft in drafts:
        first = _first_field_key(model, draft.fields)
        identity = f"key:{draft.dedup_key}" if draft.dedup_key else first
        if identity in seen:
            details.append(
                NoteDetail(
                    index=draft.index,
                    status="duplicate",
                    dedup_key=draft.dedup_key,
                    warnings=[f"the same note as items[{seen[identity]}]"],
                )
            )
            continue
        seen[identity] = draft.index
        note = genanki.Note(
            model=genanki_model,
            fields=[draft.fields.get(f, "") for f in model.fields],
            tags=draft.tags,
            guid=genanki.guid_for(draft.dedup_key or identity),
        )
        cards += len(note.cards)
        genanki_deck.add_note(note)
        for file in draft.media:
            media.setdefault(file.filename, file.data)
        details.append(
            NoteDetail(
                index=draft.index, status="ok", dedup_key=draft.dedup_key,
                warnings=draft.warnings or None,
            )
        )  # fmt: skip
    return cards


# --- From the journal ---------------------------------------------------------------------

JOURNAL_MAX = 1000  # journal rows in one package (the admin's "select all" has no bound)


@dataclass
class JournalPackage:
    """A package of journal rows, and what it could not hold as it was."""

    built: BuiltPackage
    missing_media: list[str]  # files the fields show whose bytes the journal no longer keeps
    left_out: list[str]  # one line per row not exported, and why


def journal_package_build(*, note_ids: Sequence[int]) -> JournalPackage:
    """A package of the journal's rows `note_ids` (the first JOURNAL_MAX, oldest first) as
    they were written: their stored fields, tags, deck and note type, with the media the
    journal still holds. A file delivered to Anki is no longer kept: its note keeps its
    image tag and the file is named in `missing_media`. A row whose note type's templates
    are unknown to the hub (`package_model`) or that would make no card is left out and
    named in `left_out`; InvalidInput when nothing is left to export."""
    from anki_bridge.images import MediaFile
    from anki_bridge.models import Media, Note

    rows = list(Note.objects.filter(pk__in=note_ids).order_by("id")[:JOURNAL_MAX])
    left_out: list[str] = []
    if len(note_ids) > JOURNAL_MAX:
        left_out.append(f"{len(note_ids) - JOURNAL_MAX} notes beyond the first {JOURNAL_MAX}")
    names = {name for row in rows for name in row.media or []}
    kept = {
        media.filename: bytes(media.data)
        for media in Media.objects.filter(filename__in=names).exclude(data=None)
        if media.data is not None
    }
    models: dict[str, NoteModel] = {}
    refused: dict[str, str] = {}  # note type → why no package is built with it
    groups: dict[tuple[str, str], list[Draft]] = {}
    missing: set[str] = set()
    for row in rows:
        if row.model not in models and row.model not in refused:
            try:
                models[row.model] = package_model(row.model)
            except InvalidInput as exc:
                refused[row.model] = exc.message
        if row.model in refused:
            left_out.append(f"#{row.pk}: {refused[row.model]}")
            continue
        structure = models[row.model]
        draft = Draft(
            index=row.pk,
            fields={name: str(row.fields.get(name, "")) for name in structure.fields},
            tags=[str(tag) for tag in row.tags or []],
            media=[MediaFile(filename=n, data=kept[n]) for n in row.media or [] if n in kept],
            dedup_key=row.dedup_key,
        )
        try:
            _cards_check([draft], structure, "notes")
        except InvalidInput as exc:
            left_out.append(f"#{row.pk}: {exc.message}")
            continue
        groups.setdefault((row.model, row.deck), []).append(draft)
        missing.update(name for name in row.media or [] if name not in kept)
    if not groups:
        raise InvalidInput(
            "notes: nothing to export" + (f" ({'; '.join(left_out)})" if left_out else ""),
            field="notes",
        )
    built = _written_groups(
        [(models[model], deck, drafts) for (model, deck), drafts in groups.items()]
    )
    return JournalPackage(built=built, missing_media=sorted(missing), left_out=left_out)


def _first_field_key(model: NoteModel, fields: Mapping[str, str]) -> str:
    """What Anki compares to call two notes duplicates: the note type and the first field
    (its text, whitespace and case of markup aside)."""
    value = unicodedata.normalize("NFC", fields.get(model.fields[0], ""))
    return f"{model.name}\x1f{' '.join(value.split())}"


def _package_bytes(package: Any, media: Mapping[str, bytes]) -> bytes:
    """The `.apkg` bytes: genanki's collection database, then the media, in a zip.

    genanki's own `write_to_file` leaves its temporary database behind on every call; the
    database is written here with its public `write_to_db` into a file removed after."""
    with tempfile.TemporaryDirectory(prefix="apkg-") as folder:
        path = Path(folder) / "collection.anki2"
        connection = sqlite3.connect(path)
        try:
            timestamp = time.time()
            package.write_to_db(
                connection.cursor(), timestamp, itertools.count(int(timestamp * 1000))
            )
            connection.commit()
        finally:
            connection.close()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, "collection.anki2")
            names = list(media)
            archive.writestr("media", json.dumps({str(i): n for i, n in enumerate(names)}))
            for index, filename in enumerate(names):
                # images are compressed already: stored as they are
                archive.writestr(str(index), media[filename], compress_type=zipfile.ZIP_STORED)
    data = buffer.getvalue()
    if len(data) > settings.ANKI_PACKAGE_MAX_BYTES:
        raise InvalidInput(
            f"items: the package would be {len(data)} bytes, over the "
            f"{settings.ANKI_PACKAGE_MAX_BYTES}-byte limit (ANKI_PACKAGE_MAX_BYTES): "
            "send fewer notes or smaller images (max_side)",
            field="items",
        )
    return data


# --- Storing -----------------------------------------------------------------------------


def package_file_name(deck: str) -> str:
    """A download name from the deck: «Физика::Механика» → `Физика-Механика.apkg`."""
    stem = re.sub(r"[\\/:*?\"<>|\x00-\x1f]+", "-", deck.replace("::", "-")).strip(" .-")
    return f"{stem[:100] or 'deck'}.apkg"


@transaction.atomic
def package_store(*, built: BuiltPackage, owner_id: int) -> AnkiPackage:
    """`built` stored for `owner_id`; their packages beyond ANKI_PACKAGE_MAX_PER_USER (the
    oldest first) and every expired one are removed."""
    package = AnkiPackage(
        owner_id=owner_id,
        name=package_file_name(built.deck),
        deck=built.deck,
        notes=built.notes,
        cards=built.cards,
        media=built.media,
        size=len(built.data),
        expires_at=timezone.now() + timedelta(hours=settings.ANKI_PACKAGE_TTL_HOURS),
    )
    package.file = default_storage.save(
        f"{PACKAGES_DIR}/{package.public_id}.apkg", ContentFile(built.data)
    )
    package.save()
    kept = settings.ANKI_PACKAGE_MAX_PER_USER
    older = AnkiPackage.objects.filter(owner_id=owner_id).order_by("-created_at", "-id")[kept:]
    _remove(list(older))
    return package


def package_get(*, owner_id: int, public_id: str) -> AnkiPackage:
    """A package of `owner_id`'s that has not expired; NotFound otherwise (another user's
    package does not exist for them)."""
    found = AnkiPackage.objects.filter(
        owner_id=owner_id, public_id=public_id, expires_at__gt=timezone.now()
    ).first()
    if found is None:
        raise NotFound(f"package: you have no package {public_id!r} (expired or never made)")
    return found


def package_bytes(package: AnkiPackage) -> bytes:
    try:
        with default_storage.open(package.file, "rb") as handle:
            return bytes(handle.read())
    except FileNotFoundError as exc:
        raise NotFound(f"package: the file of {package.public_id!r} is gone") from exc


def packages_expire(*, now: Any = None) -> int:
    """Remove every expired package (the periodic task); returns how many."""
    expired = list(AnkiPackage.objects.filter(expires_at__lte=now or timezone.now()))
    _remove(expired)
    return len(expired)


def _remove(packages: Sequence[AnkiPackage]) -> None:
    for package in packages:
        default_storage.delete(package.file)  # a missing file is no error
        package.delete()
