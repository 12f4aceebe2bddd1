"""One call's policy, shared by the sync and async clients of `core.http`: its attempts
and what is left of its deadline, when to retry and how long to wait (`Retry-After`
honoured, back-off with jitter), where a redirect leads, and the body cap.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from core.http_policy import (
    IDEMPOTENT_METHODS,
    REDIRECT_STATUSES,
    Failure,
    FailureKind,
    Reply,
    Upstream,
    retry_after,
)


class CallFailed(Exception):
    """A call's failure on its way out of the retry loop (`Upstream.error` maps it once)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.kind)
        self.failure = failure


@dataclass
class Call:
    """One call in flight: what it asks, its attempts so far and when its deadline ends."""

    up: Upstream
    method: str
    url: str
    headers: dict[str, str]
    content: bytes | None
    ends: float
    attempts: int = 0
    extensions: dict[str, Any] = field(default_factory=dict)  # e.g. sni_hostname (pinning)
    host: str = field(init=False)

    def __post_init__(self) -> None:
        self.host = urlsplit(self.url).netloc

    def left(self) -> float:
        return self.ends - time.monotonic()

    def attempt_limit(self) -> float:
        left = self.left()
        return min(left, self.up.attempt_timeout) if self.up.attempt_timeout else left

    def fail(self, kind: FailureKind, exc: BaseException | None = None, **kw: Any) -> CallFailed:
        detail = f"{type(exc).__name__}: {exc or 'no details'}" if exc else ""
        return CallFailed(
            Failure(kind, self.up, self.url, detail, self.attempts, exception=exc, **kw)
        )

    def transport_failure(self, exc: Exception) -> CallFailed:
        if isinstance(exc, TimeoutError | httpx.TimeoutException):
            return self.fail(FailureKind.TIMEOUT, exc)
        if isinstance(exc, httpx.ConnectError | httpx.UnsupportedProtocol | httpx.InvalidURL):
            return self.fail(FailureKind.CONNECT, exc)
        return self.fail(FailureKind.DROPPED, exc)

    def retry_delay(self, outcome: Reply | Failure) -> float | None:
        """Seconds to wait before the next attempt, or None to stop (the outcome stands)."""
        up = self.up
        if self.attempts > up.retries or self.left() <= 0 or not self._retryable(outcome):
            return None
        delay = retry_after(outcome.headers) if isinstance(outcome, Reply) else None
        if delay is None:
            jitter = 0.8 + 0.4 * random.random()  # noqa: S311 (jitter, not crypto)
            delay = min(up.backoff * 2 ** (self.attempts - 1), up.max_backoff) * jitter
        return delay if delay < self.left() else None

    def _retryable(self, outcome: Reply | Failure) -> bool:
        safe = self.up.retry_unsafe_methods or self.method in IDEMPOTENT_METHODS
        if isinstance(outcome, Reply):
            return safe and outcome.status in self.up.retry_statuses
        if outcome.kind is FailureKind.CONNECT:
            return True  # nothing was sent
        return safe and outcome.kind in (FailureKind.DROPPED, FailureKind.TIMEOUT)

    def redirect(self, response: httpx.Response, hops: int) -> tuple[str, str, bytes | None]:
        """The next (method, url, content) of a redirect, or a REDIRECTS/OTHER_HOST failure."""
        if hops >= self.up.max_redirects:
            raise self.fail(FailureKind.REDIRECTS)
        target = str(response.url.join(response.headers["location"]))
        if self.up.same_host_redirects and httpx.URL(target).netloc != response.url.netloc:
            raise self.fail(FailureKind.OTHER_HOST, target=target)
        method, content = response.request.method, self.content
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, content = "GET", None
        return method, target, content

    def check_declared(self, response: httpx.Response) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.up.max_body_bytes:
            raise self.fail(FailureKind.TOO_LARGE)

    def collect(self, chunks: list[bytes], size: int, chunk: bytes) -> int:
        size += len(chunk)
        if size > self.up.max_body_bytes:
            raise self.fail(FailureKind.TOO_LARGE)
        chunks.append(chunk)
        return size

    def reply(self, response: httpx.Response, chunks: list[bytes]) -> Reply:
        return Reply(
            status=response.status_code,
            headers=response.headers,
            content=b"".join(chunks),
            url=str(response.url),
            request_url=self.url,
            attempts=self.attempts,
        )


def is_redirect(response: httpx.Response, up: Upstream) -> bool:
    return (
        up.max_redirects > 0
        and response.status_code in REDIRECT_STATUSES
        and "location" in response.headers
    )
