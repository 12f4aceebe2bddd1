"""The only module that talks to the СДАМ ГИА sites.

Async httpx with a browser-like User-Agent and `Accept-Language: ru`; per host a cap on
concurrent requests and a minimum interval between request starts; bounded retries with
backoff on connection errors, 429 and 5xx; a body cap; a 403 or a challenge page is
"blocked by the site" and never parsed. Only the configured site host is ever fetched:
a redirect elsewhere is refused, not followed.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlencode, urljoin, urlsplit

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings

from problems.exceptions import ProblemNotFound, SdamgiaBadPage, SdamgiaBlocked, SdamgiaUnavailable
from problems.parsing import looks_like_challenge
from problems.subjects import Site

logger = logging.getLogger(__name__)

USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0 Safari/537.36 tool-hub/0.1"
)
MAX_REDIRECTS = 5
T = TypeVar("T")


def site_base_url(site: Site) -> str:
    """The origin of a site from SDAMGIA_URL_TEMPLATE, without a trailing slash."""
    return settings.SDAMGIA_URL_TEMPLATE.format(subject=site.subject, exam=site.exam).rstrip("/")


@dataclass(frozen=True)
class Page:
    url: str
    text: str


class _HostPacer:
    """Minimum interval between request starts per host, shared by every thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, host: str, interval: float) -> float:
        """Seconds to wait before this request may start (the slot is taken now)."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(host, now))
            self._next[host] = start + interval
            return start - now


_pacer = _HostPacer()


class SdamgiaClient:
    """One client per batch of work (an event loop); close it with `aclose()`."""

    def __init__(self, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout = float(settings.SDAMGIA_TIMEOUT)
        self.retries = int(settings.SDAMGIA_RETRIES)
        self.interval = float(settings.SDAMGIA_MIN_INTERVAL)
        self.max_bytes = int(settings.SDAMGIA_MAX_BODY_BYTES)
        self._limits: dict[str, asyncio.Semaphore] = {}
        self.requests_made = 0
        self._http = httpx.AsyncClient(
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8",
                "Accept-Language": "ru-RU,ru;q=0.9",
            },
            timeout=httpx.Timeout(self.timeout),
            follow_redirects=False,
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get(self, site: Site, path: str, params: dict[str, str | int] | None = None) -> Page:
        """GET a page of `site`; raises SdamgiaUnavailable / SdamgiaBlocked / SdamgiaBadPage."""
        url = urljoin(site_base_url(site) + "/", path.lstrip("/"))
        if params:
            url = f"{url}?{urlencode(params)}"
        host = urlsplit(url).netloc
        semaphore = self._limits.setdefault(
            host, asyncio.Semaphore(int(settings.SDAMGIA_MAX_CONCURRENCY_PER_HOST))
        )
        async with semaphore:
            return await self._get_with_retries(url, host)

    async def _get_with_retries(self, url: str, host: str) -> Page:
        attempt = 0
        while True:
            await asyncio.sleep(_pacer.reserve(host, self.interval))
            try:
                return await asyncio.wait_for(self._get_following(url, host), self.timeout)
            except (TimeoutError, httpx.TransportError, _Retryable) as exc:
                cause = _describe(exc)
                if attempt >= self.retries:
                    raise SdamgiaUnavailable(
                        f"СДАМ ГИА is unavailable: {cause} ({url}, {attempt + 1} attempts)",
                        extra={"url": url},
                    ) from exc
                delay = getattr(exc, "retry_after", None) or 0.5 * 2**attempt
                delay = min(delay, 10.0) * (0.8 + 0.4 * random.random())  # noqa: S311 (jitter)
                logger.info("retrying %s in %.1f s after %s", url, delay, cause)
                attempt += 1
                await asyncio.sleep(delay)

    async def _get_following(self, url: str, host: str) -> Page:
        for _ in range(MAX_REDIRECTS + 1):
            self.requests_made += 1
            async with self._http.stream("GET", url) as response:
                if response.is_redirect:
                    url = self._redirect_target(response, host)
                    continue
                body = await self._read_capped(response, url)
                return self._page_from(response, url, body)
        raise SdamgiaBadPage(f"СДАМ ГИА redirected more than {MAX_REDIRECTS} times ({url})")

    @staticmethod
    def _redirect_target(response: httpx.Response, host: str) -> str:
        target = urljoin(str(response.url), response.headers.get("location", ""))
        if urlsplit(target).netloc != host:
            raise SdamgiaBadPage(
                f"СДАМ ГИА redirected to another host ({target}); not followed",
                extra={"url": str(response.url)},
            )
        return target

    async def _read_capped(self, response: httpx.Response, url: str) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise SdamgiaBadPage(f"СДАМ ГИА answered {declared} bytes, over the cap ({url})")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise SdamgiaBadPage(
                    f"СДАМ ГИА answered more than {self.max_bytes} bytes; response dropped ({url})"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def _page_from(response: httpx.Response, url: str, body: bytes) -> Page:
        status = response.status_code
        if status == 403:
            raise SdamgiaBlocked(f"blocked by the site: СДАМ ГИА answered 403 ({url})")
        if status == 404:
            raise ProblemNotFound(f"СДАМ ГИА has no such page (404: {url})")
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}", retry_after=_retry_after(response))
        if status != 200:
            raise SdamgiaBadPage(f"СДАМ ГИА answered HTTP {status} ({url})")
        text = body.decode("utf-8", errors="replace")
        if looks_like_challenge(text):
            raise SdamgiaBlocked(f"blocked by the site: СДАМ ГИА answered a bot check ({url})")
        return Page(url=url, text=text)


class _Retryable(Exception):
    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    return float(value) if value.replace(".", "", 1).isdigit() else None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.TransportError):
        return f"connection failed ({type(exc).__name__})"
    return str(exc)


def run_with_client(work: Callable[[SdamgiaClient], Awaitable[T]]) -> T:
    """Run async `work` with a fresh client from sync code (a tool thread, a task)."""

    async def runner() -> T:
        client = SdamgiaClient()
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
