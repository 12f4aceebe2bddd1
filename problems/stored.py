"""Answers from the stored copy when the site cannot be read.

A reader (a tool, a REST view, a resource) asks the site when its copy is past the TTL or
when `refresh` is asked. When the site cannot be reached or answers with something that
is not the page asked (`SdamgiaUnavailable` and its kinds: blocked, a page that is not
the one asked), the stored copy answers instead, whatever its age, with a `Staleness`
saying why and when it was fetched. A page on which the site says the thing does not
exist (`ProblemNotFound`) is an answer, not a failure: it is never covered up.

A reader that holds a copy does not wait out the site's whole retry policy: the site gets
one attempt's time (`client.first_attempt_only`, SDAMGIA_TIMEOUT), the copy answers, and
the site is asked again in the background (`stored_refresh_later`: a Celery task with its
retries on a worker, or this process's pool without a broker), at most one such retry
per thing at a time (the cache: shared when Redis is). Without a copy the site is the
only source: it gets its whole deadline.

The strict use cases (`services.problem_get`, `catalog.catalog_get`, …) stay strict: a
crawl or an admin refresh must know that the site was not read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

from django.core.cache import cache
from django.utils import timezone

from core import background
from problems.client import first_attempt_only
from problems.exceptions import SdamgiaUnavailable

T = TypeVar("T")
Argument = str | int | bool | list[str]
RETRY_HOLD = 120.0  # seconds one background retry of a thing holds off another


def fetched_when(moment: datetime | None) -> str:
    """When a copy was fetched, for a person: `2024-05-01 10:00 UTC (3 days ago)`."""
    if moment is None:
        return "at an unknown time"
    days = (timezone.now() - moment).days
    ago = "today" if days < 1 else "1 day ago" if days == 1 else f"{days} days ago"
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC ({ago})"


@dataclass(frozen=True)
class Staleness:
    """Why an answer is the stored copy and not the site's page."""

    fetched_at: datetime | None  # when the copy was fetched (its oldest part); None: unknown
    reason: str  # the site's failure, in the words of its error (names the service)
    refresh: bool  # `refresh` was asked: the fresh copy asked for could not be had
    retrying: bool = False  # the site is being asked again in the background

    def warning(self) -> str:
        """The warning of an answer served from the stored copy: why, and how old it is."""
        if self.refresh:
            text = (
                f"refresh failed: {self.reason}; answered from the stored copy fetched "
                f"{fetched_when(self.fetched_at)}, which may be out of date"
            )
        else:
            text = f"stored copy fetched {fetched_when(self.fetched_at)}: {self.reason}"
        return f"{text}; {RETRYING}" if self.retrying else text


RETRYING = "the site is being asked again in the background"


@dataclass(frozen=True)
class Answer(Generic[T]):
    """What a reader gets: the value, and whether it is a stored copy served instead."""

    value: T
    stale: Staleness | None = None


@dataclass(frozen=True)
class Retry:
    """The Celery task (by name) and its JSON arguments that fetch a thing again."""

    task: str
    args: tuple[Argument, ...]


class _Once(Generic[T]):
    """`read()` called at most once: the copy looked up when the site is about to be asked
    is the copy served when it fails."""

    def __init__(self, read: Callable[[], T | None]) -> None:
        self._read = read
        self._done = False
        self._value: T | None = None

    def get(self) -> T | None:
        if not self._done:
            self._value, self._done = self._read(), True
        return self._value


def fetch_or_stored(
    fetch: Callable[[], T],
    stored: Callable[[], T | None],
    fetched_at: Callable[[T], datetime | None],
    *,
    refresh: bool,
    retry: Retry | None = None,
) -> Answer[T]:
    """`fetch()`; when the site fails, the stored copy (`stored()`), marked stale.

    With a copy at hand the site gets one attempt's time, and `retry` is started in the
    background when it fails. Without a stored copy the site's error is raised as it was.
    """
    copy = _Once(stored)
    try:
        with first_attempt_only(lambda: copy.get() is not None):
            return Answer(fetch())
    except SdamgiaUnavailable as exc:
        value = copy.get()
        if value is None:
            raise
        if retry is not None:
            stored_refresh_later(retry)
        stale = Staleness(fetched_at(value), exc.message, refresh, retrying=retry is not None)
        return Answer(value, stale)


def stored_refresh_later(retry: Retry) -> None:
    """Start `retry` once the caller's transaction commits, unless the same retry was
    started within RETRY_HOLD seconds (by any process sharing the cache: then it is the
    one asking the site again)."""
    key = json.dumps([retry.task, list(retry.args)], ensure_ascii=False)
    held = f"sdamgia:retry:{hashlib.sha256(key.encode()).hexdigest()}"
    if cache.add(held, True, timeout=RETRY_HOLD):
        background.start(retry.task, *retry.args)
