"""Celery adapters of the norms agent: advancing runs, recovering stalled ones, ingestion.

`normagpt.run_advance` is acknowledged only when done and re-queued if its worker is lost;
a worker killed outright (SIGKILL, OOM) is covered by the run's lease: once it expires,
`normagpt.runs_recover` (run when any worker starts, and on a schedule if configured)
hands the run to a live worker, which goes on from the last checkpoint.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app as app
from celery import shared_task
from celery.signals import worker_ready

from core.exceptions import UpstreamError
from normagpt import selectors
from normagpt.agent.runner import run_advance, run_fail, run_in_thread
from normagpt.ingest import document_ingest

logger = logging.getLogger(__name__)

LLM_RETRIES = 3


def run_dispatch(run_id: int) -> None:
    """Start advancing the run: on a worker with a broker, on a thread here without one."""
    if app.conf.task_always_eager:
        run_in_thread(run_id)
    else:
        run_advance_task.delay(run_id)


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
    after the last retry the run fails with the reason.
    """
    try:
        return run_advance(run_id=run_id).status
    except UpstreamError as exc:
        if self.request.retries < LLM_RETRIES:
            raise self.retry(exc=exc, countdown=30 * 2**self.request.retries) from exc
        run_fail(run_id=run_id, message=exc.message)
        return "failed"
    except Exception as exc:
        message = getattr(exc, "message", None) or f"unexpected error: {type(exc).__name__}"
        if not hasattr(exc, "message"):
            logger.exception("run %s failed", run_id)
        run_fail(run_id=run_id, message=message)
        return "failed"


@shared_task(name="normagpt.runs_recover")
def runs_recover_task() -> list[int]:
    """Re-dispatch every run whose lease expired; their ids."""
    stalled = selectors.runs_stalled()
    for run_id in stalled:
        logger.warning("run %s: its worker stopped; resuming from its last checkpoint", run_id)
        run_advance_task.delay(run_id)
    return stalled


@worker_ready.connect
def _recover_on_worker_start(**_: Any) -> None:
    runs_recover_task.delay()


@shared_task(name="normagpt.document_ingest", acks_late=True, reject_on_worker_lost=True)
def document_ingest_task(document_id: int) -> int:
    """Ingest a stored document's PDF; the number of pages."""
    return document_ingest(document_id=document_id).page_count
