"""Celery adapters of the norms agent: advancing runs, recovering stalled ones, ingestion.

`normagpt.run_advance` is acknowledged only when done and re-queued if its worker is lost;
a worker killed outright (SIGKILL, OOM) is covered by the run's lease: once it expires,
`normagpt.runs_recover` (run when any worker starts, and on a schedule if configured)
hands the run to a live worker, which goes on from the last checkpoint.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from core.exceptions import UpstreamError
from normagpt import services

logger = logging.getLogger(__name__)

LLM_RETRIES = 3
# pdfium is not thread-safe: one ingestion at a time in a process (the pool without a broker).
_pdfium = threading.Lock()


@shared_task(
    name="normagpt.run_advance",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=LLM_RETRIES,
)
def run_advance_task(self: Any, run_id: int) -> str:
    """Advance a run until it finishes or waits for review; its status.

    The model being down leaves the run at its checkpoint and retries later (backoff);
    after the last retry the run fails with the reason. Called directly (in-process, no
    broker to hold a retry) the first failure fails the run.
    """
    try:
        return services.run_advance(run_id=run_id).status
    except UpstreamError as exc:
        if not self.request.called_directly and self.request.retries < LLM_RETRIES:
            raise self.retry(exc=exc, countdown=30 * 2**self.request.retries) from exc
        services.run_fail(run_id=run_id, message=exc.message)
        return "failed"
    except Exception as exc:
        message = getattr(exc, "message", None) or f"unexpected error: {type(exc).__name__}"
        if not hasattr(exc, "message"):
            logger.exception("run %s failed", run_id)
        services.run_fail(run_id=run_id, message=message)
        return "failed"


@shared_task(name="normagpt.runs_recover")
def runs_recover_task() -> list[int]:
    """Start again every run whose lease expired; their ids."""
    return services.runs_recover()


@worker_ready.connect
def _recover_on_worker_start(**_: Any) -> None:
    runs_recover_task.delay()


@shared_task(name="normagpt.document_ingest", acks_late=True, reject_on_worker_lost=True)
def document_ingest_task(document_id: int) -> int:
    """Ingest a stored document's PDF; the number of pages."""
    with _pdfium:
        return services.document_ingest(document_id=document_id).page_count
