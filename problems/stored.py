"""Answers from the stored copy when the site cannot be read.

A reader (a tool, a REST view, a resource) asks the site when its copy is past the TTL or
when `refresh` is asked. When the site cannot be reached or answers with something that
is not the page asked (`SdamgiaUnavailable` and its kinds: blocked, a page that is not
the one asked), the stored copy answers instead, whatever its age, with a `Staleness`
saying why and when it was fetched. A page on which the site says the thing does not
exist (`ProblemNotFound`) is an answer, not a failure: it is never covered up.

The strict use cases (`services.problem_get`, `catalog.catalog_get`, …) stay strict: a
crawl or an admin refresh must know that the site was not read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from problems.exceptions import SdamgiaUnavailable

T = TypeVar("T")


@dataclass(frozen=True)
class Staleness:
    """Why an answer is the stored copy and not the site's page."""

    fetched_at: datetime | None  # when the copy was fetched (its oldest part); None: unknown
    reason: str  # the site's failure, in the words of its error (names the service)
    refresh: bool  # `refresh` was asked: the fresh copy asked for could not be had


@dataclass(frozen=True)
class Answer(Generic[T]):
    """What a reader gets: the value, and whether it is a stored copy served instead."""

    value: T
    stale: Staleness | None = None


def fetch_or_stored(
    fetch: Callable[[], T],
    stored: Callable[[], T | None],
    fetched_at: Callable[[T], datetime | None],
    *,
    refresh: bool,
) -> Answer[T]:
    """`fetch()`; when the site fails, the stored copy (`stored()`), marked stale.

    Without a stored copy the site's error is raised as it was.
    """
    try:
        return Answer(fetch())
    except SdamgiaUnavailable as exc:
        copy = stored()
        if copy is None:
            raise
        return Answer(copy, Staleness(fetched_at(copy), exc.message, refresh))
