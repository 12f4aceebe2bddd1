"""The only module that talks to the СДАМ ГИА sites: one method per page kind.

`SdamgiaClient.problem_page / search_page / catalog_page / category_page / test_page`
each fetch one page of a site through the project's HTTP layer (`core.http`), with a
browser-like User-Agent and `Accept-Language: ru`; per host a cap on concurrent requests
and a minimum interval between request starts (`core.limits`); bounded retries with
back-off on connection errors, 429 and 5xx; a per-attempt timeout and a total deadline
per page; a body cap. A 403 or a challenge page is "blocked by the site" and never
parsed. Only the configured site host is ever fetched: a redirect elsewhere is refused,
not followed. Page paths and query parameter names live only here.

Within `first_attempt_only(...)` (a reader that holds a stored copy), a page gets one
attempt's time (SDAMGIA_TIMEOUT) instead of the whole deadline (SDAMGIA_DEADLINE): a hung
site costs that long before the copy answers, and the retries happen in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings

from core.http import AsyncUpstreamClient, Failure, FailureKind, Params, Reply, Upstream
from problems.exceptions import (
    SERVICE,
    ProblemNotFound,
    SdamgiaBadPage,
    SdamgiaBlocked,
    SdamgiaUnavailable,
)
from problems.parsing import looks_like_challenge
from problems.subjects import Site

USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0 Safari/537.36 tool-hub/0.1"
)
MAX_REDIRECTS = 5
RETRY_STATUSES = frozenset({429, *range(500, 600)})
T = TypeVar("T")


def site_base_url(site: Site) -> str:
    """The origin of a site from SDAMGIA_URL_TEMPLATE, without a trailing slash."""
    return settings.SDAMGIA_URL_TEMPLATE.format(subject=site.subject, exam=site.exam).rstrip("/")


def problem_page_url(site: Site, problem_id: str) -> str:
    """The public address of a problem's page (what a person opens)."""
    return f"{site_base_url(site)}/problem?id={problem_id}"


@dataclass(frozen=True)
class Page:
    url: str
    text: str


def sdamgia_upstream() -> Upstream:
    """The sites' policy, from the SDAMGIA_* settings."""
    return Upstream(
        service=SERVICE,
        deadline=float(settings.SDAMGIA_DEADLINE),
        attempt_timeout=float(settings.SDAMGIA_TIMEOUT),
        max_body_bytes=int(settings.SDAMGIA_MAX_BODY_BYTES),
        max_redirects=MAX_REDIRECTS,
        same_host_redirects=True,
        retries=int(settings.SDAMGIA_RETRIES),
        retry_statuses=RETRY_STATUSES,
        min_interval=float(settings.SDAMGIA_MIN_INTERVAL),
        max_concurrency_per_host=int(settings.SDAMGIA_MAX_CONCURRENCY_PER_HOST),
        headers={
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8",
            "Accept-Language": "ru-RU,ru;q=0.9",
        },
        error=_failure_error,
    )


class SdamgiaClient:
    """One client per batch of work (an event loop); close it with `aclose()`.

    `deadline`: seconds for each page instead of SDAMGIA_DEADLINE (None: that setting)."""

    def __init__(
        self, *, transport: httpx.AsyncBaseTransport | None = None, deadline: float | None = None
    ) -> None:
        self._http = AsyncUpstreamClient(sdamgia_upstream(), transport=transport)
        self._deadline = deadline

    @property
    def requests_made(self) -> int:
        return self._http.requests_made

    async def aclose(self) -> None:
        await self._http.aclose()

    async def problem_page(self, site: Site, problem_id: str) -> Page:
        return await self._page(site, "/problem", {"id": problem_id})

    async def search_page(self, site: Site, phrase: str, page: int = 1) -> Page:
        """One page of the site's full-text search results."""
        return await self._page(site, "/search", {"search": phrase, "page": page})

    async def catalog_page(self, site: Site) -> Page:
        return await self._page(site, "/prob_catalog")

    async def category_page(self, site: Site, category_id: str, page: int = 1) -> Page:
        """One page of a catalog category's listing (whole problems, in site order)."""
        params: Params = {"filter": "all", "category_id": category_id, "page": page}
        return await self._page(site, "/test", params)

    async def test_page(self, site: Site, test_id: str) -> Page:
        return await self._page(site, "/test", {"id": test_id})

    async def test_generated(self, site: Site, counts: dict[str, int]) -> Page:
        """The site's variant constructor: `/test?a=generate&prb1=2&…` (problems of each task
        number) answers with a redirect to the new test, whose page this is (`url` holds
        its id)."""
        params: Params = {"a": "generate", **{f"prb{n}": c for n, c in counts.items()}}
        return await self._page(site, "/test", params)

    async def _page(self, site: Site, path: str, params: Params = None) -> Page:
        """GET a page of `site`; raises SdamgiaUnavailable / SdamgiaBlocked / SdamgiaBadPage."""
        reply = await self._http.get(
            f"{site_base_url(site)}{path}", params, deadline=self._deadline
        )
        return _page_from(reply)


def _page_from(reply: Reply) -> Page:
    status, url = reply.status, reply.url
    if status == 403:
        raise SdamgiaBlocked(f"blocked by the site: СДАМ ГИА answered 403 ({url})")
    if status == 404:
        raise ProblemNotFound(f"СДАМ ГИА has no such page (404: {url})")
    if status in RETRY_STATUSES:
        raise _unavailable(f"HTTP {status}", reply.request_url, reply.attempts)
    if status != 200:
        raise SdamgiaBadPage(f"СДАМ ГИА answered HTTP {status} ({url})")
    text = reply.content.decode("utf-8", errors="replace")
    if looks_like_challenge(text):
        raise SdamgiaBlocked(f"blocked by the site: СДАМ ГИА answered a bot check ({url})")
    return Page(url=url, text=text)


def _unavailable(cause: str, url: str, attempts: int) -> SdamgiaUnavailable:
    return SdamgiaUnavailable(
        f"СДАМ ГИА is unavailable: {cause} ({url}, {attempts} attempts)", extra={"url": url}
    )


def _failure_error(failure: Failure) -> Exception:
    """The app's errors for the HTTP layer's failures (the texts the tests and models read)."""
    url, kind = failure.url, failure.kind
    if kind is FailureKind.TOO_LARGE:
        cap = failure.upstream.max_body_bytes
        return SdamgiaBadPage(f"СДАМ ГИА answered more than {cap} bytes; response dropped ({url})")
    if kind is FailureKind.OTHER_HOST:
        return SdamgiaBadPage(
            f"СДАМ ГИА redirected to another host ({failure.target}); not followed",
            extra={"url": url},
        )
    if kind is FailureKind.REDIRECTS:
        return SdamgiaBadPage(f"СДАМ ГИА redirected more than {MAX_REDIRECTS} times ({url})")
    if kind is FailureKind.TIMEOUT:
        return _unavailable("timed out", url, failure.attempts)
    if kind is FailureKind.STATUS and failure.reply is not None:
        return _unavailable(f"HTTP {failure.reply.status}", url, failure.attempts)
    name = type(failure.exception).__name__ if failure.exception else "no details"
    return _unavailable(f"connection failed ({name})", url, failure.attempts)


_copy_at_hand: ContextVar[Callable[[], bool] | None] = ContextVar(
    "sdamgia_copy_at_hand", default=None
)


@contextlib.contextmanager
def first_attempt_only(copy_at_hand: Callable[[], bool]) -> Iterator[None]:
    """Within the block, when `copy_at_hand()` (asked once the site is about to be asked,
    not before: a fresh read asks nothing) says a stored copy can answer, each page gets
    one attempt's time: SDAMGIA_TIMEOUT, at most SDAMGIA_DEADLINE."""
    token = _copy_at_hand.set(copy_at_hand)
    try:
        yield
    finally:
        _copy_at_hand.reset(token)


def _page_deadline() -> float | None:
    """Seconds per page for the work about to start (None: the whole SDAMGIA_DEADLINE)."""
    copy_at_hand = _copy_at_hand.get()
    if copy_at_hand is None or not copy_at_hand():
        return None
    return min(float(settings.SDAMGIA_TIMEOUT), float(settings.SDAMGIA_DEADLINE))


def run_with_client(work: Callable[[SdamgiaClient], Awaitable[T]]) -> T:
    """Run async `work` with a fresh client from sync code (a tool thread, a task)."""
    deadline = _page_deadline()

    async def runner() -> T:
        client = SdamgiaClient(deadline=deadline)
        try:
            return await work(client)
        finally:
            await client.aclose()

    return async_to_sync(runner)()


async def gather_settled(
    jobs: Sequence[Awaitable[T]],
) -> list[T | BaseException]:
    """Run `jobs` concurrently; each result or its exception, in order (none is lost)."""
    return list(await asyncio.gather(*jobs, return_exceptions=True))
