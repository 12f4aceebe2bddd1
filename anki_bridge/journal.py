"""The journal's use cases: write every note before sending it, deliver, flush the queue.

A note is journaled (with its images and its target deck) in one transaction, claimed by
the writing call, and delivered outside any transaction. When Anki is unreachable the
claim is released and the note waits as `pending`; `notes_flush_later` has it delivered
once Anki answers: by the flush task (Celery) with a broker, by a thread of this process
without one (`anki_bridge.waiting`, handed `notes_flush`). A call that reaches Anki
flushes what waits, and a new MCP server has what a killed one left delivered as it
starts (`notes_takeover`), whatever its first call.
`dedup_key` is unique per owner: a key already sent never makes a second note of its
owner's, and a key being delivered by another call is not delivered twice; one user's key
is no answer for another's note.

Crash safety: a row is marked `unanswered_since` before its addNote goes out, so when the
answer is lost (Anki killed, closed, the worker gone) the next delivery recognises the
note Anki already holds instead of calling it a duplicate; a sent row stays `placed=False`
until its cards are confirmed in its deck, and every flush places what is not.
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, IntegrityError, transaction

from anki_bridge import waiting
from anki_bridge.client import AnkiClient
from anki_bridge.delivery import Delivered, Known, Placement, notes_deliver
from anki_bridge.exceptions import AnkiError, AnkiRefused, AnkiUnavailable
from anki_bridge.images import MediaFile
from anki_bridge.ledger import (
    JournalLedger,
    claim_free,
    due,
    free,
    held,
    lease,
    media_prune,
    media_store,
    outgoing,
    placed_record,
    record,
    release,
    row_fault,
)
from anki_bridge.media_upload import MediaAhead
from anki_bridge.models import Note
from anki_bridge.schemas import NoteDetail
from core import background

logger = logging.getLogger(__name__)

FLUSH_BATCH = 200
FLUSH_TASK = "anki_bridge.flush"
FLUSH_SCHEDULED_KEY = "anki:flush-scheduled"  # the flush task clears it when it starts
FLUSH_NOW_KEY = "anki:flush-now"
FLUSH_NOW_SECONDS = 5  # calls that find notes waiting start at most one flush this often
S = Note.Status


@dataclass
class Draft:
    """A note ready for the journal: final fields (image tags in place) and its files."""

    index: int
    fields: dict[str, str]
    tags: list[str] = field(default_factory=list)
    media: list[MediaFile] = field(default_factory=list)
    dedup_key: str | None = None
    warnings: list[str] = field(default_factory=list)
    journal_id: int | None = None  # the journal row that covers it, once written


class MediaReady:
    """A call's files as they become ready: journaled in batches on the calling thread and,
    when Anki answers, sent ahead (`MediaAhead`) while the other images are prepared.

    `add` is `drafts_build`'s `on_file`; `settle` journals what is handed over and waits
    until Anki was asked to store it (`stored`); `finish` does the same at the end.
    A file is journaled before any note that shows it, so nothing is lost if the process
    dies: a file no note needs is pruned later (`media_prune`).
    """

    BATCH = 20

    def __init__(self, *, send: bool) -> None:
        self._ahead = MediaAhead() if send else None
        self._batch: list[MediaFile] = []
        self.journaled: set[str] = set()
        self.stored: dict[str, str] = {}  # name → the name Anki stored it under

    def add(self, file: MediaFile) -> None:
        if self._ahead is not None:
            self._ahead.add(file)
        self._batch.append(file)
        if len(self._batch) >= self.BATCH:
            self._journal()

    def settle(self) -> None:
        self._journal()
        if self._ahead is not None:
            self.stored = self._ahead.settle()

    def finish(self) -> None:
        self._journal()
        if self._ahead is not None:
            self.stored = self._ahead.finish()

    def _journal(self) -> None:
        if self._batch:
            media_store(self._batch)
            self.journaled.update(f.filename for f in self._batch)
            self._batch = []


@dataclass
class FlushOutcome:
    sent: int = 0
    duplicate: int = 0
    failed: int = 0
    pending: int = 0  # still waiting after the flush

    def count(self, results: Iterable[Delivered]) -> None:
        for result in results:
            setattr(self, result.status, getattr(self, result.status) + 1)


class Submission:
    """One call's notes on their way to Anki, in waves (`drafts_build`'s `on_ready`): each
    wave is journaled, then delivered while the next one is prepared; `finish` gives a
    detail per draft.

    With `deliver=False` (Anki known to be unreachable) or once Anki turns out to be
    unreachable, the notes are queued: their detail says `queued`. `owner` is the user the
    rows belong to (None: no user). `media`: the drafts' files as `drafts_build` handed
    them over; those it journaled are not journaled again, those Anki stored not sent again.
    A note is journaled before it is sent; every row of the call is claimed by one token,
    held (its lease renewed) from the first wave to `finish`.
    """

    def __init__(
        self,
        *,
        deck: str,
        model: str,
        ensure_deck: bool,
        source: str,
        deliver: bool = True,
        owner: int | None = None,
        seen: Known | None = None,
        media: MediaReady | None = None,
    ) -> None:
        self.deck, self.model, self.ensure_deck, self.source = deck, model, ensure_deck, source
        self.owner, self.seen = owner, seen
        self.media = media or MediaReady(send=False)
        self.token, self.until = lease()
        self.queued = not deliver
        self.drafts: list[Draft] = []
        self.fixed: dict[int, NoteDetail] = {}
        self.results: dict[int, Delivered] = {}
        self._open = contextlib.ExitStack()
        self._client: AnkiClient | None = None
        self.placement = Placement()  # every wave's new cards, moved into the deck at the end

    def __enter__(self) -> Submission:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._open.close()

    def add(self, drafts: Sequence[Draft]) -> None:
        """Journal `drafts` (the next ones, in order) and deliver them unless Anki is away."""
        self.media.settle()
        fixed = _journal(
            self.deck,
            self.model,
            drafts,
            self.ensure_deck,
            self.source,
            self.token,
            self.until,
            self.owner,
            self.media.journaled,
        )
        self.fixed.update(fixed)
        self.drafts.extend(drafts)
        if self.queued:
            return
        results: dict[int, Delivered] = {}
        try:
            if self._client is None:
                self._client = self._open.enter_context(AnkiClient())
                self._open.enter_context(held(self.token))
            files = {f.filename: f.data for draft in drafts for f in draft.media}
            ledger = JournalLedger(files, self.media.stored)
            _deliver_claimed(
                self.token, self._client, results, self.seen, ledger, later=self.placement
            )
        except AnkiUnavailable:
            self.queued = True
            self._open.close()
        except AnkiError as exc:
            self._open.close()
            release(self.token, exc.message)
            raise
        finally:
            self.results.update(results)

    def finish(self) -> list[NoteDetail]:
        self.media.finish()
        if self._client is not None and not self.queued and self.placement.note_keys():
            placing = {key: self.results[key] for key in self.placement.note_keys()}
            try:
                self.placement.run(self._client, self.results)
            except AnkiUnavailable:
                pass  # their rows stay unplaced: the flush places them when Anki is back
            finally:
                placed_record(placing)
        self._open.close()
        if self.queued:
            release(self.token, "Anki was unreachable; queued")
            notes_flush_later()
        elif any(r.status == S.SENT and not r.placed for r in self.results.values()):
            notes_flush_later()  # Anki went away before the cards were placed
        elif Note.objects.filter(due()).exclude(claim=self.token).exists():
            notes_flush_later(now=True)  # Anki is back: deliver what earlier calls queued
        media_prune()
        return _details(self.drafts, self.fixed, self.token, self.results)


def notes_flush_later(*, now: bool = False) -> None:
    """Have the queue delivered: `now` (Anki just answered) or once Anki answers again.

    With a broker: the flush task, at once or after ANKI_FLUSH_BACKOFF (one delayed task
    at a time; it retries with backoff while Anki stays away). Without one: a thread of
    this process that asks Anki every ANKI_WAIT_POLL seconds and flushes when it answers.
    """
    if not background.broker_available():  # the thread must see the queued rows
        transaction.on_commit(lambda: waiting.queue_watch(notes_flush))
    elif now:
        if cache.add(FLUSH_NOW_KEY, 1, timeout=FLUSH_NOW_SECONDS):
            background.start(FLUSH_TASK)
    elif cache.add(FLUSH_SCHEDULED_KEY, 1, timeout=settings.ANKI_FLUSH_BACKOFF_MAX):
        background.start(FLUSH_TASK, countdown=settings.ANKI_FLUSH_BACKOFF)


def notes_takeover() -> None:
    """Have the rows no live sender holds delivered in the background: those a killed
    process left (its lease is over at once, `ledger.free`) or that wait for Anki. Called
    as a new MCP server starts, so that its first call, a read too, finds them on their
    way; it costs one query and never waits for Anki."""
    try:
        waiting_rows = Note.objects.filter(free(), due()).exists()
    except DatabaseError:  # a database without the journal yet: nothing was left
        logger.warning("the Anki journal could not be read at start-up", exc_info=True)
        return
    if waiting_rows:
        notes_flush_later(now=True)


def _journal(
    deck: str,
    model: str,
    drafts: Sequence[Draft],
    ensure_deck: bool,
    source: str,
    token: str,
    until: datetime,
    owner: int | None,
    journaled: Collection[str] = (),
) -> dict[int, NoteDetail]:
    """Write the rows (claimed by `token`); details for drafts another row already covers.

    `journaled`: files already kept (`MediaReady`)."""
    fixed: dict[int, NoteDetail] = {}

    def row(draft: Draft) -> Note:
        return Note(
            deck=deck,
            model=model,
            fields=draft.fields,
            tags=draft.tags,
            media=[f.filename for f in draft.media],
            dedup_key=draft.dedup_key,
            ensure_deck=ensure_deck,
            source=source,
            warnings=draft.warnings,
            claim=token,
            claimed_until=until,
            owner_id=owner,
        )

    with transaction.atomic():
        media_store(f for draft in drafts for f in draft.media if f.filename not in journaled)
        if not any(draft.dedup_key for draft in drafts):  # no key to check: one INSERT
            rows = Note.objects.bulk_create([row(draft) for draft in drafts])
            for draft, written in zip(drafts, rows, strict=True):
                draft.journal_id = written.pk
            return fixed
        for draft in drafts:  # in order: notes reach Anki in the order they were given
            fresh = row(draft)
            if draft.dedup_key is None:
                fresh.save()
                draft.journal_id = fresh.pk
                continue
            try:
                with transaction.atomic():
                    fresh.save()
                draft.journal_id = fresh.pk
            except IntegrityError:
                detail = _reuse(draft, fresh, token, until, owner)
                if detail is not None:
                    fixed[draft.index] = detail
    return fixed


def _reuse(
    draft: Draft, fresh: Note, token: str, until: datetime, owner: int | None
) -> NoteDetail | None:
    """The owner's journaled note with the same dedup_key: taken over when it may be, else
    a detail."""
    note = Note.objects.select_for_update().get(dedup_key=draft.dedup_key, owner_id=owner)
    draft.journal_id = note.pk
    if note.status in (S.SENT, S.DUPLICATE):
        what = (
            f"was already sent as note {note.anki_note_id}"
            if note.anki_note_id
            else ("was already delivered (Anki holds it)")
        )
        return NoteDetail(
            index=draft.index,
            status="duplicate",
            noteId=note.anki_note_id,
            dedup_key=draft.dedup_key,
            error=f"dedup_key {draft.dedup_key!r} {what}",
        )
    if not claim_free(note):
        by = "an earlier note of this call" if note.claim == token else "another call"
        return NoteDetail(
            index=draft.index,
            status="duplicate",
            dedup_key=draft.dedup_key,
            error=f"dedup_key {draft.dedup_key!r} is being delivered by {by}",
        )
    if note.status == S.FAILED:  # a resend: the new content replaces the refused one
        for name in ("deck", "model", "fields", "tags", "media", "ensure_deck", "source"):
            setattr(note, name, getattr(fresh, name))
        note.warnings = fresh.warnings
        note.status = S.PENDING
        note.last_error = ""
    note.claim, note.claimed_until = token, until
    note.save()
    return None


def _deliver_claimed(
    token: str,
    client: AnkiClient,
    results: dict[int, Delivered],
    seen: Known | None = None,
    ledger: JournalLedger | None = None,
    later: Placement | None = None,
) -> None:
    """Deliver (or place) the notes `token` holds, by deck and model, into `results` by row id.

    What Anki answered is recorded even when it goes away midway (AnkiUnavailable).
    """
    groups: dict[tuple[str, str, bool], list[Note]] = defaultdict(list)
    for note in Note.objects.filter(due(), claim=token).order_by("id"):
        fault = row_fault(note.fields, note.tags, note.media)
        if fault is not None:  # a row broken by hand fails alone; the others go on
            results[note.pk] = Delivered("failed", error=f"the journal row is unsound: {fault}")
            continue
        groups[(note.deck, note.model, note.ensure_deck)].append(note)
    try:
        for (deck, model, ensure_deck), notes in groups.items():
            try:
                notes_deliver(
                    client,
                    deck=deck,
                    model=model,
                    notes=[outgoing(n) for n in notes],
                    ensure_deck=ensure_deck,
                    ledger=ledger or JournalLedger(),
                    results=results,
                    known=seen,
                    later=later,
                )
            except AnkiRefused as exc:  # the deck or model cannot be made: these notes fail
                results.update(
                    {
                        n.pk: Delivered("failed", error=exc.message)
                        for n in notes
                        if n.pk not in results
                    }
                )
    finally:  # Anki closed or refusing us midway: what it answered is kept, the rest waits
        record(token, results)


def _details(
    drafts: Sequence[Draft], fixed: dict[int, NoteDetail], token: str, results: dict[int, Delivered]
) -> list[NoteDetail]:
    details = []
    for draft in drafts:
        if draft.index in fixed:
            details.append(fixed[draft.index])
            continue
        pk = draft.journal_id
        result = results.get(pk) if pk is not None else None
        warnings = [*draft.warnings, *(result.warnings if result else [])] or None
        if result is None:
            details.append(
                NoteDetail(
                    index=draft.index, status="queued", dedup_key=draft.dedup_key, warnings=warnings
                )
            )
            continue
        status = {"sent": "ok", "duplicate": "duplicate"}.get(result.status, "error")
        details.append(
            NoteDetail(
                index=draft.index,
                status=status,
                noteId=result.note_id,
                dedup_key=draft.dedup_key,
                warnings=warnings,
                error=result.error or None,
            )
        )
    return details


def notes_flush(*, note_ids: Sequence[int] | None = None) -> FlushOutcome:
    """Deliver every pending note no sender holds (or only `note_ids`), oldest first, and
    place the cards of delivered notes that are not in their deck yet.

    Raises AnkiUnavailable when Anki cannot be reached (what was delivered stays so).
    """
    outcome = FlushOutcome()
    after = 0
    with AnkiClient() as client:
        client.version()  # Anki away: no row is taken (AnkiUnavailable)
        while True:
            token, until = lease()
            pending = Note.objects.filter(free(), due(), pk__gt=after)
            if note_ids is not None:
                pending = pending.filter(pk__in=list(note_ids))
            ids = list(pending.order_by("pk").values_list("pk", flat=True)[:FLUSH_BATCH])
            if not ids:
                break
            Note.objects.filter(free(), due(), pk__in=ids).update(claim=token, claimed_until=until)
            after = ids[-1]
            undelivered = set(
                Note.objects.filter(pk__in=ids, status=S.PENDING).values_list("pk", flat=True)
            )
            results: dict[int, Delivered] = {}
            try:
                with held(token):
                    _deliver_claimed(token, client, results)
            except (AnkiUnavailable, AnkiError) as exc:
                release(token, exc.message)
                raise
            except BaseException:  # the rows must not stay held for a whole lease
                release(token, "the delivery was interrupted")
                raise
            finally:  # rows that were only placed are not counted again
                outcome.count(r for pk, r in results.items() if pk in undelivered)
    outcome.pending = Note.objects.filter(status=S.PENDING).count()
    media_prune()
    return outcome


def notes_resend(*, note_ids: Sequence[int]) -> FlushOutcome:
    """Send the given failed, duplicate or pending notes again (the admin's action)."""
    Note.objects.filter(pk__in=list(note_ids), status__in=[S.FAILED, S.DUPLICATE]).update(
        status=S.PENDING, last_error="", anki_note_id=None
    )
    return notes_flush(note_ids=note_ids)
