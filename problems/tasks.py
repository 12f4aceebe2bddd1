"""Celery adapters of the problem bank: the fuzzy-search fan-out and the crawler."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from celery import current_app as app
from celery import group, shared_task
from celery.result import GroupResult

from core.exceptions import DomainError, UpstreamError
from problems import catalog, services
from problems.exceptions import SdamgiaUnavailable
from problems.services import Progress
from problems.subjects import Site

logger = logging.getLogger(__name__)

CHUNK_SIZE = 5
FANOUT_TIMEOUT = 120.0


@shared_task(name="problems.fetch_chunk")
def problems_fetch_chunk_task(
    subject: str, exam: str, problem_ids: list[str]
) -> dict[str, str | None]:
    """Fetch and store a chunk of problems; per id None (stored) or the error's message."""
    errors = services.problems_fetch_missing(
        site=Site(subject=subject, exam=exam), problem_ids=problem_ids
    )
    return {pid: None if err is None else err.message for pid, err in errors.items()}


def fetch_missing_fanout(
    site: Site, problem_ids: Sequence[str], progress: Progress | None
) -> dict[str, DomainError | None]:
    """Fetch problems as a group of chunk tasks on the workers; in-process without a broker.

    Waits at most FANOUT_TIMEOUT seconds; ids whose chunk did not finish get an error.
    """
    ids = list(dict.fromkeys(problem_ids))
    if app.conf.task_always_eager or not workers_available():
        return services.problems_fetch_missing(site=site, problem_ids=ids, progress=progress)
    chunks = [ids[i : i + CHUNK_SIZE] for i in range(0, len(ids), CHUNK_SIZE)]
    result: GroupResult = group(
        problems_fetch_chunk_task.s(site.subject, site.exam, chunk) for chunk in chunks
    ).apply_async()  # type: ignore[assignment]
    deadline = time.monotonic() + FANOUT_TIMEOUT
    reported = -1
    while not result.ready() and time.monotonic() < deadline:
        done = result.completed_count()
        if progress is not None and done != reported:
            progress(min(done * CHUNK_SIZE, len(ids)), len(ids))
            reported = done
        time.sleep(0.05)
    merged: dict[str, DomainError | None] = {}
    for chunk, chunk_result in zip(chunks, result.results or [], strict=True):
        if chunk_result.successful():
            answers: dict[str, str | None] = chunk_result.get()
            for pid, message in answers.items():
                merged[pid] = None if message is None else SdamgiaUnavailable(message)
        else:
            reason = (
                "timed out waiting for a worker" if not chunk_result.ready() else "worker failed"
            )
            for pid in chunk:
                merged[pid] = SdamgiaUnavailable(f"problem {pid}: {reason}")
    if progress is not None:
        progress(len(ids), len(ids))
    return merged


_workers_seen_at = 0.0


def workers_available() -> bool:
    """Whether a worker answers a ping (remembered for 30 s; a ping costs up to 0.5 s).

    With a broker but no worker, fetching in-process beats waiting for nobody.
    """
    global _workers_seen_at
    if time.monotonic() - _workers_seen_at < 30:
        return True
    if app.control.ping(timeout=0.5):
        _workers_seen_at = time.monotonic()
        return True
    logger.warning("no Celery worker answers: fetching in-process")
    return False


@shared_task(
    name="problems.crawl_category",
    autoretry_for=(UpstreamError,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=5,
)
def category_crawl_task(subject: str, exam: str, category_id: str, refresh: bool = False) -> int:
    """Read a whole category listing into the database; the number of problems it holds."""
    outcome = catalog.category_problems_get(
        site=Site(subject=subject, exam=exam),
        category_id=category_id,
        limit=1,
        refresh=refresh,
    )
    return outcome.total
