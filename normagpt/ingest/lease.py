"""The ingestion's lease: one process renders a document's PDF at a time, and one that
stops midway (killed, its host gone) is noticed and marked failed, never left `running`.

The holder (`core.holders.holder_token`) renews `ingest_heartbeat_at` from a thread every
third of NORMAGPT_INGEST_LEASE_SECONDS and with every page. The recovery sweep
(`ingests_expire`, from `services.runs_recover`) marks failed an ingestion whose holder
is a process of this host that has ended, or whose heartbeat is older than the lease (a
holder on another host, or a document `running` from before leases were kept). The sweep
does not start it again (a file that killed its process would kill the next one too): a
person does, or Celery redelivering the task of a worker it lost; either start takes the
lease over and goes on from the pages rendered (`normagpt.ingest.documents`).
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.heartbeat import Heartbeat
from core.holders import holder_gone
from normagpt.exceptions import DocumentNotFound, IngestLost, IngestRunning
from normagpt.models import NormDocument

logger = logging.getLogger(__name__)

Ingest = NormDocument.Ingest


def lease_seconds() -> int:
    return int(settings.NORMAGPT_INGEST_LEASE_SECONDS)


def beat_interval() -> float:
    return max(0.2, lease_seconds() / 3)


def lease_take(*, document_id: int, holder: str) -> None:
    """Take the document's ingestion lease for `holder` and mark it `running`.

    A lease held by a live process is waited for (at most a lease and two heartbeats):
    IngestRunning as soon as its heartbeat moves, or if it has not lapsed by then.
    """
    deadline = time.monotonic() + lease_seconds() + 2 * beat_interval()
    seen: tuple[Any, ...] | None = None
    while not _claim(document_id, holder):
        row = (
            NormDocument.objects.filter(pk=document_id)
            .values_list("ingest_heartbeat_at", "code", "ingest_done", "ingest_total")
            .first()
        )
        if row is None:
            raise DocumentNotFound(f"document {document_id} does not exist")
        if (seen is not None and row[0] != seen[0]) or time.monotonic() >= deadline:
            raise IngestRunning(
                f"{row[1]} is being ingested by another process ({row[2]} of {row[3]} pages "
                "rendered): wait for it to finish"
            )
        seen = row
        time.sleep(beat_interval() / 2)


def _claim(document_id: int, holder: str) -> bool:
    now = timezone.now()
    free = Q(ingest_holder="") | Q(ingest_heartbeat_at=None) | Q(ingest_heartbeat_at__lt=_stale())
    current = (
        NormDocument.objects.filter(pk=document_id).values_list("ingest_holder", flat=True).first()
    )
    if current and holder_gone(current):
        free |= Q(ingest_holder=current)
    return bool(
        NormDocument.objects.filter(pk=document_id)
        .filter(free)
        .update(
            ingest_holder=holder,
            ingest_heartbeat_at=now,
            ingest_status=Ingest.RUNNING,
            ingest_error="",
        )
    )


def _stale() -> datetime:
    return timezone.now() - timedelta(seconds=lease_seconds())


def lease_renew(*, document_id: int, holder: str, **progress: int) -> None:
    """Renew the lease, recording `progress` (ingest_done, ingest_total); IngestLost when
    `holder` no longer holds it."""
    if not NormDocument.objects.filter(pk=document_id, ingest_holder=holder).update(
        ingest_heartbeat_at=timezone.now(), **progress
    ):
        raise IngestLost(f"document {document_id}: its ingestion was taken over; stopping")


def lease_release(*, document_id: int, holder: str, **fields: Any) -> bool:
    """Let the lease go, writing `fields`; whether `holder` still held it."""
    return bool(
        NormDocument.objects.filter(pk=document_id, ingest_holder=holder).update(
            ingest_holder="", ingest_heartbeat_at=None, **fields
        )
    )


def lease_held(document: NormDocument) -> bool:
    """Whether a live process holds the document's ingestion lease."""
    if document.ingest_status != Ingest.RUNNING or not document.ingest_holder:
        return False
    beat = document.ingest_heartbeat_at
    return beat is not None and beat >= _stale() and not holder_gone(document.ingest_holder)


def heartbeat(*, document_id: int, holder: str) -> Heartbeat:
    """The ingestion's lease renewed every third of its length until the block ends."""

    def renew() -> None:
        NormDocument.objects.filter(pk=document_id, ingest_holder=holder).update(
            ingest_heartbeat_at=timezone.now()
        )

    return Heartbeat(renew, interval=beat_interval(), name=f"ingest-{document_id}-heartbeat")


def ingests_expire() -> list[int]:
    """Mark failed every ingestion whose holder stopped (its process on this host ended, or
    no heartbeat for a lease), saying where and that starting it again goes on; their ids."""
    rows = NormDocument.objects.filter(ingest_status=Ingest.RUNNING).values_list(
        "pk", "ingest_holder", "ingest_heartbeat_at", "ingest_done", "ingest_total"
    )
    expired = []
    for pk, holder, beat, done, total in rows:
        why = _stopped(holder, beat)
        if why is None:
            continue
        where = f" at page {done + 1} of {total}" if total else ""
        more = " to go on from there" if done else ""
        reason = f"ingestion stopped ({why}){where}: start it again{more}"
        if NormDocument.objects.filter(
            pk=pk, ingest_status=Ingest.RUNNING, ingest_holder=holder
        ).update(ingest_status=Ingest.FAILED, ingest_holder="", ingest_error=reason):
            logger.warning("document %s: %s", pk, reason)
            expired.append(pk)
    return expired


def _stopped(holder: str, beat: datetime | None) -> str | None:
    """Why an ingestion counts as stopped, or None while its holder lives."""
    if holder and holder_gone(holder):
        return "its process ended"
    if beat is None:
        return "it began before ingestions kept a lease"
    if beat < _stale():
        return f"no heartbeat for {lease_seconds()} s"
    return None
