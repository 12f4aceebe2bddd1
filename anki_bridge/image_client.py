"""The only module that fetches an `image_url` (seed 002 `images[]`), on core.http.

A careful client: http(s) only; every address of the host checked (loopback, private,
link-local and other non-public addresses refused unless ANKI_IMAGE_ALLOW_PRIVATE); the
connection pinned to the checked address, so DNS cannot change its answer in between;
each redirect checked the same way; the body capped at ANKI_IMAGE_MAX_BYTES; one deadline
for the whole fetch, redirects included. Failures raise ImageProblem naming the host.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from anki_bridge.images import ImageProblem
from core.http import Failure, FailureKind, Reply, Upstream, UpstreamClient

MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def address_refusal(ip: str) -> str | None:
    """Why an address may not be fetched from, or None when it is a public one."""
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    for label, flag in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
        ("not public", not address.is_global),
    ):
        if flag:
            return f"{ip} is a {label} address"
    return None


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ImageProblem("image_failed", f"cannot resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class _Pinned:
    url: str  # the URL with the host replaced by a checked address
    host: str
    host_header: str


def image_fetch(url: str, *, allow_private: bool, max_bytes: int, timeout: float) -> bytes:
    """The body of an image URL, fetched under the rules in the module docstring."""
    deadline = time.monotonic() + timeout
    for _ in range(MAX_REDIRECTS + 1):
        target = _pinned(url, allow_private)
        left = deadline - time.monotonic()
        if left <= 0:
            raise ImageProblem("image_failed", f"{target.host} timed out after {timeout:g} s")
        reply = _get(target, max_bytes=max_bytes, deadline=left, timeout=timeout)
        if reply.status in REDIRECTS and "location" in reply.headers:
            url = urljoin(url, reply.headers["location"])
            continue
        if reply.status != 200:
            raise ImageProblem("image_failed", f"{target.host} answered HTTP {reply.status}")
        return reply.content
    raise ImageProblem("image_refused", f"more than {MAX_REDIRECTS} redirects")


def _get(target: _Pinned, *, max_bytes: int, deadline: float, timeout: float) -> Reply:
    """One hop: a fresh connection to the pinned address (redirects come back as replies)."""
    upstream = Upstream(
        service=f"the image host {target.host}",
        deadline=deadline,
        max_body_bytes=max_bytes,
        max_redirects=0,
        keep_alive=False,
        error=_failure(target.host, timeout),
    )
    with UpstreamClient(upstream) as http:
        return http.get(
            target.url,
            headers={"Host": target.host_header},
            extensions={"sni_hostname": target.host},
        )


def _failure(host: str, timeout: float) -> Callable[[Failure], Exception]:
    def error(failure: Failure) -> Exception:
        if failure.kind is FailureKind.TIMEOUT:
            return ImageProblem("image_failed", f"{host} timed out after {timeout:g} s")
        if failure.kind is FailureKind.TOO_LARGE:
            cap = failure.upstream.max_body_bytes
            return ImageProblem("image_refused", f"{host}: the body is over the {cap}-byte cap")
        return ImageProblem("image_failed", f"{host}: {failure.detail or failure.kind.value}")

    return error


def _pinned(url: str, allow_private: bool) -> _Pinned:
    """The URL rewritten to a checked address of its host, with the Host header kept."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImageProblem("image_refused", f"only http(s) URLs are fetched, not {url[:80]!r}")
    host = parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = _resolve(host, port)
    if not allow_private:
        for ip in addresses:
            reason = address_refusal(ip)
            if reason:
                raise ImageProblem(
                    "image_refused",
                    f"{host} resolves to {reason} (set ANKI_IMAGE_ALLOW_PRIVATE to allow it)",
                )
    ip = addresses[0]
    netloc = f"[{ip}]" if ":" in ip else ip
    if parts.port:
        netloc += f":{parts.port}"
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    return _Pinned(pinned, host, host if not parts.port else f"{host}:{parts.port}")
