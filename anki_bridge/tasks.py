"""Celery adapters of the Anki bridge: delivering the journal's queue once Anki is back."""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from anki_bridge import journal
from anki_bridge.exceptions import AnkiUnavailable


@shared_task(
    name="anki_bridge.flush",
    autoretry_for=(AnkiUnavailable,),
    retry_backoff=settings.ANKI_FLUSH_BACKOFF,
    retry_backoff_max=settings.ANKI_FLUSH_BACKOFF_MAX,
    retry_jitter=True,
    max_retries=settings.ANKI_FLUSH_MAX_RETRIES,
    acks_late=True,
    reject_on_worker_lost=True,
)
def notes_flush_task() -> dict[str, int]:
    """Deliver the queued notes; retried with backoff while Anki stays unreachable.

    Safe to run twice at once or again after a crash: notes are held by a lease and a
    delivered note is never sent again.
    """
    cache.delete(journal.FLUSH_SCHEDULED_KEY)  # notes queued from now on schedule a new one
    return asdict(journal.notes_flush())


@shared_task(name="anki_bridge.packages_expire")
def packages_expire_task() -> int:
    """Remove the Anki packages past ANKI_PACKAGE_TTL_HOURS (their files and rows)."""
    from anki_bridge.packages import packages_expire

    return packages_expire()
