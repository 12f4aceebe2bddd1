"""The only module that fetches an image by URL for a caller (anki's `images[].image_url`,
the problem bank's photo search), on core.http.

A careful client: http(s) only; every address of the host checked (non-public addresses
refused — loopback only admitted when the caller allows it, by its own setting such as
ANKI_IMAGE_ALLOW_PRIVATE, see `address_refusal`); the connection pinned to the checked
address, so DNS cannot change its answer in between; each redirect checked the same way;
the body capped at the caller's byte cap; one deadline for the whole fetch, redirects
included. Failures raise ImageProblem naming the host.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from core.http import Failure, FailureKind, Reply, Upstream, UpstreamClient


class ImageProblem(Exception):
    """An image that could not be used; `code` prefixes the warning or error it becomes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def warning(self, where: str) -> str:
        return f"{self.code}: {where}: {self.message}"


MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})


CLOUD_METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
TEREDO = ipaddress.ip_network("2001::/32")
SITE_LOCAL = ipaddress.ip_network("fec0::/10")
UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


def address_refusal(ip: str, *, allow_loopback: bool = False) -> str | None:
    """Why an address may not be fetched from, or None when it is a public one.

    Only loopback can be allowed (the caller's setting, for images served on this
    machine); private, link-local, cloud-metadata, site- and unique-local addresses are
    refused always, also when an IPv6 address embeds them (IPv4-mapped or -compatible,
    6to4, NAT64) — and Teredo and local-use NAT64 addresses, whose targets cannot be told.
    """
    address = ipaddress.ip_address(ip)
    if address in CLOUD_METADATA:
        return f"{ip} is a cloud metadata address"
    if isinstance(address, ipaddress.IPv6Address):
        return _v6_refusal(address, allow_loopback)
    return _v4_refusal(address, allow_loopback)


def _v4_refusal(address: ipaddress.IPv4Address, allow_loopback: bool) -> str | None:
    if address.is_loopback:
        return None if allow_loopback else f"{address} is a loopback address"
    return _class_refusal(address)


def _class_refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why a non-loopback address of no special form is refused, or None when public."""
    for label, flag in (
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("shared (carrier-grade NAT)", address in SHARED_ADDRESS_SPACE),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
        ("not public", not address.is_global),
    ):
        if flag:
            return f"{address} is a {label} address"
    return None


def _v6_refusal(address: ipaddress.IPv6Address, allow_loopback: bool) -> str | None:
    embedded = _embedded_v4(address)
    if embedded is not None:
        form, v4 = embedded
        if v4 in CLOUD_METADATA:
            return f"{address} is {form} address embedding the cloud metadata address {v4}"
        reason = _v4_refusal(v4, allow_loopback)
        return f"{address} is {form} address embedding {reason}" if reason else None
    for label, network in (
        ("Teredo", TEREDO),
        ("local-use NAT64", NAT64_LOCAL),
        ("site-local", SITE_LOCAL),
        ("unique-local", UNIQUE_LOCAL),
    ):
        if address in network:
            return f"{address} is a {label} address"
    if address.is_loopback:
        return None if allow_loopback else f"{address} is a loopback address"
    return _class_refusal(address)


def _embedded_v4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 address stands for, with the form's name, or None."""
    if address.ipv4_mapped is not None:
        return "an IPv4-mapped", address.ipv4_mapped
    if address.sixtofour is not None:
        return "a 6to4", address.sixtofour
    if address in NAT64:
        return "a NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if int(address) >> 32 == 0 and int(address) > 1:  # IPv4-compatible ::a.b.c.d
        return "an IPv4-compatible", ipaddress.IPv4Address(int(address))
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


def image_fetch(
    url: str, *, allow_private: bool, private_setting: str, max_bytes: int, timeout: float
) -> bytes:
    """The body of an image URL, fetched under the rules in the module docstring.

    `private_setting` names the caller's setting behind `allow_private`, which a refusal
    of a loopback address tells the user to set.
    """
    deadline = time.monotonic() + timeout
    for _ in range(MAX_REDIRECTS + 1):
        target = _pinned(url, allow_private, private_setting)
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


def _pinned(url: str, allow_private: bool, private_setting: str) -> _Pinned:
    """The URL rewritten to a checked address of its host, with the Host header kept."""
    try:
        parts = urlsplit(url)
        given_port = parts.port  # raises for a port that is no number or out of range
    except ValueError as exc:  # "http://[::1": an unclosed IPv6 address, ...
        raise ImageProblem("image_refused", f"{url[:80]!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImageProblem("image_refused", f"only http(s) URLs are fetched, not {url[:80]!r}")
    host = parts.hostname
    port = given_port or (443 if parts.scheme == "https" else 80)
    addresses = _resolve(host, port)
    for ip in addresses:
        reason = address_refusal(ip, allow_loopback=allow_private)
        if reason:
            hint = (
                f"set {private_setting} to allow loopback"
                if reason.endswith("loopback address")
                else "never fetched"
            )
            raise ImageProblem("image_refused", f"{host} resolves to {reason} ({hint})")
    ip = addresses[0]
    netloc = f"[{ip}]" if ":" in ip else ip
    if parts.port:
        netloc += f":{parts.port}"
    pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    return _Pinned(pinned, host, host if not parts.port else f"{host}:{parts.port}")
