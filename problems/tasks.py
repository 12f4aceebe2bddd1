"""Celery adapters of the problem bank: the fuzzy-search fan-out, the crawler, and the
retries in the background of what a reader answered from its stored copy
(`problems.stored`)."""

from __future__ import annotations

from typing import Any

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


# A site that did not answer a reader is asked again with the whole policy of the client
# (SDAMGIA_RETRIES within SDAMGIA_DEADLINE), then, on a worker, again after a back-off.
REFRESH_RETRIES = 5
REFRESH_BACKOFF = 10  # seconds before the first retry on a worker, doubling
REFRESH_BACKOFF_MAX = 600
REFRESH: dict[str, Any] = {  # the options of each task asking the site again
    "autoretry_for": (UpstreamError,),
    "retry_backoff": REFRESH_BACKOFF,
    "retry_backoff_max": REFRESH_BACKOFF_MAX,
    "max_retries": REFRESH_RETRIES,
}


@shared_task(name="problems.problems_refresh", **REFRESH)
def problems_refresh_task(subject: str, exam: str, problem_ids: list[str]) -> int:
    """Fetch and store `problem_ids` again; the number stored. The first failure worth a
    retry is raised (the whole list is asked again: storing is idempotent)."""
    errors = services.problems_fetch_missing(
        site=Site(subject=subject, exam=exam), problem_ids=problem_ids
    )
    for error in errors.values():
        if isinstance(error, UpstreamError):
            raise error
    return sum(1 for error in errors.values() if error is None)


@shared_task(name="problems.catalog_refresh", **REFRESH)
def catalog_refresh_task(subject: str, exam: str) -> int:
    """Read a site's catalog again; the number of its topics."""
    return len(catalog.catalog_get(site=Site(subject=subject, exam=exam), refresh=True))


@shared_task(name="problems.test_refresh", **REFRESH)
def exam_test_refresh_task(subject: str, exam: str, test_id: str) -> str:
    """Read a test's page again; its id."""
    site = Site(subject=subject, exam=exam)
    return catalog.exam_test_get(site=site, test_id=test_id, refresh=True).test_id


@shared_task(name="problems.sheets_expire")
def sheets_expire_task() -> int:
    """Delete printed sheets past `SDAMGIA_SHEET_TTL_DAYS`; the number deleted (daily from
    `make beat`)."""
    from problems import sheets  # reportlab: off a worker's start-up

    return sheets.sheets_expire()
