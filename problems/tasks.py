"""Celery adapters of the problem bank: the fuzzy-search fan-out and the crawler."""

from __future__ import annotations

from celery import shared_task

from core import background
from core.exceptions import UpstreamError
from problems import catalog, crawl, services
from problems.subjects import Site


@shared_task(name="problems.fetch_chunk")
def problems_fetch_chunk_task(
    subject: str, exam: str, problem_ids: list[str]
) -> dict[str, str | None]:
    """Fetch and store a chunk of problems; per id None (stored) or the error's message."""
    errors = services.problems_fetch_missing(
        site=Site(subject=subject, exam=exam),
        problem_ids=problem_ids,
        progress=background.task_progress(),
    )
    return {pid: None if err is None else err.message for pid, err in errors.items()}


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


@shared_task(name="problems.crawl_work", acks_late=True, reject_on_worker_lost=True)
def crawl_work_task(crawl_id: str) -> int:
    """One worker's loop of a shared crawl (`problems.crawl`); the categories it read."""
    return crawl.crawl_work(crawl_id)
