"""Celery adapters of the Anki bridge: delivering the journal's queue once Anki is back."""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from celery import current_app as app
from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from anki_bridge import journal
from anki_bridge.exceptions import AnkiUnavailable
from anki_bridge.signals import notes_queued

logger = logging.getLogger(__name__)

SCHEDULED_KEY = "anki:flush-scheduled"


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
    cache.delete(SCHEDULED_KEY)
    return asdict(journal.notes_flush())


def flush_later(**_: Any) -> None:
    """Schedule one flush after the current transaction (none while one is scheduled).

    Without a broker (tasks run in-process) nothing is scheduled: there is no worker to
    wait for Anki, so the next call that reaches Anki or `manage.py anki_flush` delivers.
    """
    if app.conf.task_always_eager:
        return
    if not cache.add(SCHEDULED_KEY, 1, timeout=settings.ANKI_FLUSH_BACKOFF_MAX):
        return
    transaction.on_commit(
        lambda: notes_flush_task.apply_async(countdown=settings.ANKI_FLUSH_BACKOFF)
    )


notes_queued.connect(flush_later, dispatch_uid="anki_bridge.flush_later")
