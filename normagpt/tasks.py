"""Celery adapters of the norms agent: advancing runs, recovering stalled ones, ingestion.

`normagpt.run_advance` is acknowledged only when done and re-queued if its worker is lost:
the redelivered task waits for the dead advancer's lease and takes the run over. A worker
killed outright (SIGKILL, OOM) is covered by every live worker's sweeper thread
(`normagpt.recovery`), which hands a run whose lease lapsed to a live worker; beat's
`normagpt.runs_recover` is a safety net. The model failing is not retried here: the
client's retries are the node's whole budget (one chain of attempts, counted against the
run's caps), and past it the run fails with the model's error.
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

# One ingestion at a time in a process (the pool without a broker): each holds a page image
# in memory (pdfium's own calls are serialised page by page in normagpt.ingest.pdf).
_pdfium = threading.Lock()


@shared_task(name="normagpt.run_advance", acks_late=True, reject_on_worker_lost=True)
def run_advance_task(run_id: int) -> str:
    """Advance a run until it finishes or waits for review; its status.

    The model failing past the client's retries fails the run with the model's error and
    what was found so far (no second chain of retries, no lease left to lapse).
    """
    try:
        return services.run_advance(run_id=run_id).status
    except Exception as exc:
        message = getattr(exc, "message", None) or f"unexpected error: {type(exc).__name__}"
        if not isinstance(exc, UpstreamError) and not hasattr(exc, "message"):
            logger.exception("run %s failed", run_id)
        services.run_fail(run_id=run_id, message=message)
        return "failed"


@shared_task(name="normagpt.runs_recover")
def runs_recover_task() -> list[int]:
    """Start again every run whose lease expired; their ids."""
    return services.runs_recover()


@worker_ready.connect
def _recover_on_worker_start(**_: Any) -> None:
    """A worker starting sweeps at once, then every half lease (`normagpt.recovery`)."""
    from normagpt import recovery

    runs_recover_task.delay()
    recovery.sweeper_start()


@shared_task(name="normagpt.document_ingest", acks_late=True, reject_on_worker_lost=True)
def document_ingest_task(document_id: int) -> int:
    """Ingest a stored document's PDF; the number of pages. Redelivered after its worker
    was lost, it takes the ingestion over and goes on from the pages rendered."""
    with _pdfium:
        return services.document_ingest(document_id=document_id).page_count
