"""The journal's rows: leases, what is due, recording Anki's answers, the media kept.

Row-level operations the journal's use cases (`anki_bridge.journal`) are made of. A
sender holds rows with a lease (`claim`, `claimed_until`); a row is due while it is
undelivered or delivered with its cards not yet placed; `record` writes what Anki answered
in a few statements; image bytes wait in `Media` until their notes are delivered.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from anki_bridge.delivery import Delivered, Outgoing
from anki_bridge.images import MediaFile
from anki_bridge.models import Media, Note
from core.holders import holder_gone, holder_token

S = Note.Status


def lease() -> tuple[str, datetime]:
    """A new claim token naming this process (`core.holders`) and the moment it runs out."""
    return holder_token(), timezone.now() + timedelta(seconds=settings.ANKI_JOURNAL_LEASE)


def free() -> Q:
    """Rows no sender holds: never claimed, the claim ran out, or its holder is a process
    of this host that no longer runs (killed mid-delivery: taken over at once)."""
    now = timezone.now()
    held = Note.objects.exclude(claim="").filter(claimed_until__gte=now)
    gone = [
        claim for claim in held.values_list("claim", flat=True).distinct() if holder_gone(claim)
    ]
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now) | Q(claim__in=gone)


def claim_free(note: Note) -> bool:
    """Whether another sender may take `note` (see `free`)."""
    lapsed = note.claimed_until is None or note.claimed_until < timezone.now()
    return lapsed or holder_gone(note.claim)


_held: set[str] = set()  # the tokens this process holds now: released when it exits
_held_lock = threading.Lock()


@contextmanager
def held(token: str) -> Iterator[None]:
    """Hold `token`'s rows while the block works: the lease is renewed every third of it
    (a thread), and released if the process exits meanwhile (atexit; a killed process is
    recognised by `free` at once on its host, and its lease lapses soon elsewhere)."""
    stop = threading.Event()
    every = max(settings.ANKI_JOURNAL_LEASE / 3, 0.1)

    def renew() -> None:
        try:
            while not stop.wait(every):
                until = timezone.now() + timedelta(seconds=settings.ANKI_JOURNAL_LEASE)
                Note.objects.filter(claim=token).update(claimed_until=until)
        finally:
            connection.close()

    with _held_lock:
        _held.add(token)
    renewer = threading.Thread(target=renew, name="anki-lease", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join()
        with _held_lock:
            _held.discard(token)


@atexit.register
def _release_held() -> None:
    """The process ends (stdio closed, a signal turned into an exit): its rows wait free."""
    with _held_lock:
        tokens = list(_held)
    for token in tokens:
        with contextlib.suppress(Exception):
            release(token, "the process delivering it ended")


def due() -> Q:
    """Rows a flush has work for: undelivered, or delivered with their cards not yet placed."""
    return Q(status=S.PENDING) | Q(status=S.SENT, placed=False, anki_note_id__isnull=False)


def notes_waiting() -> bool:
    """Whether the journal holds notes that still need Anki."""
    return Note.objects.filter(due()).exists()


class JournalLedger:
    """The journal as delivery sees it (anki_bridge.delivery.Ledger).

    `files`: bytes the calling process still holds (not read back from the database);
    `ahead`: files Anki already stored for this call (name → the name Anki gave it).
    """

    def __init__(
        self, files: Mapping[str, bytes] | None = None, ahead: Mapping[str, str] | None = None
    ) -> None:
        self._files = files or {}
        self._ahead = ahead or {}

    def load_media(self, names: Sequence[str]) -> dict[str, bytes]:
        held = {name: self._files[name] for name in names if name in self._files}
        rest = [name for name in names if name not in held]
        return {**held, **media_load(rest)} if rest else held

    def media_ahead(self) -> Mapping[str, str]:
        return self._ahead

    def sending(self, keys: Sequence[int]) -> None:
        Note.objects.filter(pk__in=list(keys), unanswered_since__isnull=True).update(
            unanswered_since=timezone.now()
        )

    def holders(self, note_ids: Sequence[int]) -> dict[int, int]:
        rows = Note.objects.filter(anki_note_id__in=list(note_ids))
        return {int(nid): pk for nid, pk in rows.values_list("anki_note_id", "pk") if nid}


def dedup_sent(keys: Iterable[str], owner: int | None = None) -> dict[str, int | None]:
    """The keys among `keys` whose notes of `owner`'s were delivered (no need to prepare
    them), each with its note's Anki id (None: Anki held it already, id unknown)."""
    done = Note.objects.filter(
        dedup_key__in=list(keys), owner_id=owner, status__in=[S.SENT, S.DUPLICATE]
    )
    return {key: note for key, note in done.values_list("dedup_key", "anki_note_id") if key}


def owner_keys_release(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A `pre_delete` receiver of the user model: the user's notes keep their content and
    lose their owner (SET_NULL), and so their keys, which would clash with the keys of the
    notes no user owns."""
    keys_free(Note.objects.filter(owner_id=instance.pk), "its owner was deleted")


def dedup_release(note_ids: Iterable[int], owner: int | None = None) -> None:
    """Free the keys of `owner`'s notes Anki no longer holds (`note_ids`): a note added
    again under one is a new note."""
    gone = Note.objects.filter(anki_note_id__in=list(note_ids), owner_id=owner)
    keys_free(gone, "the note is gone from Anki")


def keys_free(notes: Any, why: str) -> None:
    """`notes`' dedup keys set free (None), each said in its note's `last_error`, where the
    admin's search still finds it («dedup_key 'k' freed: …»)."""
    notes.exclude(dedup_key=None).update(
        last_error=Concat(Value("dedup_key '"), F("dedup_key"), Value(f"' freed: {why}")),
        dedup_key=None,
    )


def media_store(files: Iterable[MediaFile]) -> None:
    """Keep the bytes of `files` until their notes are delivered (one row per name)."""
    by_name = {f.filename: f for f in files}
    if not by_name:
        return
    now = timezone.now()
    existing = set(
        Media.objects.filter(filename__in=list(by_name)).values_list("filename", flat=True)
    )
    for name in existing:
        f = by_name[name]
        Media.objects.filter(filename=name).update(
            data=f.data, sha1=f.sha1, size=len(f.data), touched_at=now
        )
    Media.objects.bulk_create(
        [
            Media(filename=f.filename, data=f.data, sha1=f.sha1, size=len(f.data), touched_at=now)
            for name, f in by_name.items()
            if name not in existing
        ],
        ignore_conflicts=True,
    )


def media_load(names: Sequence[str]) -> dict[str, bytes]:
    rows = Media.objects.filter(filename__in=list(names)).exclude(data=None)
    return {name: bytes(data) for name, data in rows.values_list("filename", "data") if data}


def media_prune() -> int:
    """Drop the bytes no undelivered note needs (kept a lease after their last store)."""
    needed: set[str] = set()
    for names in Note.objects.filter(status__in=[S.PENDING, S.FAILED]).values_list(
        "media", flat=True
    ):
        needed.update(names)
    quiet = timezone.now() - timedelta(seconds=settings.ANKI_JOURNAL_LEASE)
    stale = Media.objects.filter(touched_at__lt=quiet).exclude(data=None)
    return stale.exclude(filename__in=needed).update(data=None)


def row_fault(fields: object, tags: object, media: object) -> str | None:
    """What makes a journal row no note Anki can take (a row edited by hand, in the admin
    or the database): its fields an object of texts, its tags and media lists of texts.
    None when it is sound."""
    if not isinstance(fields, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in fields.items()
    ):
        return "fields: an object of texts, {field name: text}"
    for name, value in (("tags", tags), ("media", media)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{name}: a list of texts"
    return None


def outgoing(note: Note) -> Outgoing:
    return Outgoing(
        note.pk,
        dict(note.fields),
        list(note.tags),
        list(note.media),
        unanswered_since=note.unanswered_since,
        note_id=note.anki_note_id if note.status == S.SENT else None,
    )


def record(token: str, results: dict[int, Delivered]) -> None:
    """Write what Anki answered, in one transaction (rows another sender took are skipped).

    A few statements whatever the count: the note ids in one executemany, the rest grouped
    by equal values (Django's bulk_update builds a CASE per field and row: slower than the
    delivery itself at a few hundred rows).
    """
    if not results:
        return
    now = timezone.now()
    table = Note._meta.db_table
    with transaction.atomic():
        rows = Note.objects.filter(pk__in=list(results), claim=token)
        current = {
            pk: (status, warnings)
            for pk, status, warnings in rows.values_list("pk", "status", "warnings")
        }
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {table} SET anki_note_id = %s WHERE id = %s",  # noqa: S608 (our table)
                [(results[pk].note_id, pk) for pk in current],
            )
        groups: dict[tuple[str, str, bool, bool], list[int]] = defaultdict(list)
        for pk, (status, warnings) in current.items():
            result = results[pk]
            new = [w for w in result.warnings if w not in warnings]
            if new:
                Note.objects.filter(pk=pk).update(warnings=[*warnings, *new])
            placed = result.placed or result.status != S.SENT
            groups[(result.status, result.error, placed, status == S.PENDING)].append(pk)
        for (status, error, placed, was_pending), pks in groups.items():
            values: dict[str, object] = {"status": status, "last_error": error, "placed": placed,
                                         "unanswered_since": None, "claim": "",
                                         "claimed_until": None, "updated_at": now}  # fmt: skip
            if was_pending:
                values["attempts"] = F("attempts") + 1
                if status == S.SENT:
                    values["sent_at"] = now
            Note.objects.filter(pk__in=pks).update(**values)


def placed_record(results: Mapping[int, Delivered]) -> None:
    """Write a placement made after the rows were recorded (`record`): the rows whose cards
    are in their deck now, and the warnings it added."""
    if not results:
        return
    with transaction.atomic():
        done = [pk for pk, result in results.items() if result.placed]
        if done:
            Note.objects.filter(pk__in=done, status=S.SENT).update(placed=True)
        rows = Note.objects.filter(pk__in=list(results)).values_list("pk", "warnings")
        for pk, warnings in rows:
            new = [w for w in results[pk].warnings if w not in warnings]
            if new:
                Note.objects.filter(pk=pk).update(warnings=[*warnings, *new])


def release(token: str, error: str) -> None:
    """Give up the rows `token` still holds; the undelivered ones wait with `error`."""
    Note.objects.filter(claim=token, status=S.PENDING).update(
        claim="", claimed_until=None, attempts=F("attempts") + 1, last_error=error
    )
    Note.objects.filter(claim=token).update(claim="", claimed_until=None)
