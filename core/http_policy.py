"""What a call to an outside service is asked and what it answers: an `Upstream` (one
service's policy: deadline, size and redirect caps, retries, pacing), a `Failure` (what went
wrong, its message naming the service) and a `Reply` (a complete, capped answer).

Plain values: `core.http`'s clients apply them (`core.http_call` holds one call's
retries, redirects and body cap; `core.http_deadline` the sync deadline). Import them
from `core.http`, the layer's one face.
"""

from __future__ import annotations

import email.utils
import enum
import json as jsonlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from core.exceptions import UpstreamError

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
Params = Mapping[str, str | int] | Sequence[tuple[str, str | int]] | None


class FailureKind(enum.StrEnum):
    TIMEOUT = "timeout"  # the deadline (or an attempt's timeout) passed
    CONNECT = "connect"  # no connection: refused, DNS, TLS handshake, bad URL
    DROPPED = "dropped"  # the connection broke before a complete answer
    TOO_LARGE = "too_large"  # the body is over `max_body_bytes`
    REDIRECTS = "redirects"  # more than `max_redirects` hops
    OTHER_HOST = "other_host"  # a redirect off the host with `same_host_redirects`
    STATUS = "status"  # a status the app does not accept (`Upstream.status_error`)


@dataclass(frozen=True)
class Failure:
    """What went wrong in one call; `message` is a default text naming the service."""

    kind: FailureKind
    upstream: Upstream
    url: str  # the URL the call asked for (before redirects)
    detail: str = ""  # e.g. the httpx exception `ConnectError: [Errno 111] ...`
    attempts: int = 1
    target: str = ""  # the redirect target for OTHER_HOST
    reply: Reply | None = None  # for STATUS
    exception: BaseException | None = None

    @property
    def service(self) -> str:
        return self.upstream.service

    @property
    def message(self) -> str:
        up, kind = self.upstream, self.kind
        if kind is FailureKind.TIMEOUT:
            limit = min(up.deadline, up.attempt_timeout or up.deadline)
            text = f"{up.service} did not answer within {limit:g} s"
        elif kind is FailureKind.CONNECT:
            text = f"could not reach {up.service} ({self.detail or 'no details'})"
        elif kind is FailureKind.DROPPED:
            text = f"{up.service} dropped the connection ({self.detail or 'no details'})"
        elif kind is FailureKind.TOO_LARGE:
            text = f"{up.service} answered more than {up.max_body_bytes:,} bytes"
        elif kind is FailureKind.REDIRECTS:
            text = f"{up.service} redirected more than {up.max_redirects} times"
        elif kind is FailureKind.OTHER_HOST:
            text = f"{up.service} redirected to another host ({self.target}); not followed"
        else:
            status = self.reply.status if self.reply else 0
            text = f"{up.service} answered HTTP {status}"
        tries = f", {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{text} ({self.url}{tries})"


def upstream_error(failure: Failure) -> Exception:
    """The default `Upstream.error`: an `UpstreamError` naming the service."""
    return UpstreamError(
        failure.message,
        service=failure.service,
        extra={"url": failure.url, "kind": str(failure.kind)},
    )


@dataclass(frozen=True)
class Upstream:
    """One outside service's policy; build it from settings in the app's `client.py`."""

    service: str  # the name errors use: "СДАМ ГИА", "OJ API", "AnkiConnect"
    base_url: str = ""  # relative paths are joined to it
    deadline: float = 30.0  # seconds for a whole call, retries included
    attempt_timeout: float | None = None  # seconds per attempt (None: the deadline)
    max_body_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5  # 0: a redirect is returned as the reply, not followed
    same_host_redirects: bool = False
    keep_alive: bool = True
    retries: int = 0
    backoff: float = 0.5  # first back-off in seconds; doubles per retry, ±20 % jitter
    max_backoff: float = 10.0  # cap on computed back-off (a Retry-After is honoured as is)
    retry_statuses: frozenset[int] = RETRY_STATUSES
    retry_unsafe_methods: bool = False
    min_interval: float = 0.0  # seconds between request starts to one host (per process)
    max_concurrency_per_host: int = 0  # 0: no cap (beyond `max_connections`)
    max_connections: int = 10
    headers: Mapping[str, str] | tuple[tuple[str, str], ...] = ()
    error: Callable[[Failure], Exception] = upstream_error

    def __post_init__(self) -> None:
        items = self.headers.items() if isinstance(self.headers, Mapping) else self.headers
        object.__setattr__(self, "headers", tuple(sorted(items)))

    def url_for(self, path: str, params: Params = None) -> str:
        """`path` joined to `base_url` (an absolute URL is kept), with `params` encoded."""
        if path.startswith(("http://", "https://")):
            url = path
        else:
            url = f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"
        return str(httpx.URL(url, params=params)) if params else url

    def status_error(self, reply: Reply) -> Exception:
        """The exception for a status the app does not accept (kind STATUS)."""
        failure = Failure(
            FailureKind.STATUS, self, reply.request_url, attempts=reply.attempts, reply=reply
        )
        return self.error(failure)


@dataclass(frozen=True)
class Reply:
    """A complete answer: status, headers and the whole (capped) body."""

    status: int
    headers: httpx.Headers
    content: bytes
    url: str  # the final URL, after redirects
    request_url: str  # the URL the call asked for
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        charset = _charset(self.headers.get("content-type", "")) or "utf-8"
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.content)


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset":
            return value.strip('"').strip()
    return ""


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), if any."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
