"""API throttles keyed on a client address that `X-Forwarded-For` cannot spoof.

DRF's `get_ident` believes `X-Forwarded-For` whenever it is present, so a client that
changes the header on every request gets a fresh allowance each time. Here the key is
the peer (`REMOTE_ADDR`); only when the peer is a trusted proxy (`TRUSTED_PROXIES`, from
`DJANGO_BEHIND_PROXY`) is the header walked from the right, past trusted proxies, to the
first address none of them is: the one the outermost trusted proxy saw. IPv6 clients are
keyed by their /64, which any one of them holds whole.

Views that make the server fetch from an outside service declare
`throttle_scope = UPSTREAM_ANON`: anonymous callers of those get a lower rate of their own
(`API_THROTTLE_UPSTREAM_ANON`) on top of the general one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework import throttling
from rest_framework.request import Request

UPSTREAM_ANON = "upstream_anon"
# In TRUSTED_PROXIES: the peer is a proxy whatever its address (DJANGO_BEHIND_PROXY=1).
ANY_PEER = "*"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(request: HttpRequest | Request) -> str:
    """The address a request is counted against (an IPv6 client: its /64)."""
    meta = request.META
    trusted = tuple(getattr(settings, "TRUSTED_PROXIES", ()))
    address = _client_ip(meta.get("REMOTE_ADDR", ""), meta.get("HTTP_X_FORWARDED_FOR", ""), trusted)
    if address is None:
        return meta.get("REMOTE_ADDR", "") or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _client_ip(peer: str, forwarded_for: str, trusted: Sequence[str]) -> IPAddress | None:
    address = _parse_ip(peer)
    any_peer, networks = ANY_PEER in trusted, _networks(tuple(trusted))
    if address is None or not (any_peer or _in(address, networks)):
        return address
    for hop in reversed(forwarded_for.split(",")):
        hop_address = _parse_ip(hop)
        if hop_address is None:
            break  # not an address a trusted proxy wrote: keep the last one vouched for
        address = hop_address
        if not _in(address, networks):
            break
    return address


def _parse_ip(text: str) -> IPAddress | None:
    """An address from `REMOTE_ADDR` or one `X-Forwarded-For` entry (a port is dropped)."""
    text = text.strip()
    if text.startswith("["):  # [2001:db8::1]:443
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # 203.0.113.5:443
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


@lru_cache(maxsize=8)
def _networks(trusted: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in trusted if item != ANY_PEER)


def _in(address: IPAddress, networks: Sequence[IPNetwork]) -> bool:
    return any(address in network for network in networks)


class ClientAddressMixin:
    """`get_ident` from `client_address`, not from a header any client can set."""

    def get_ident(self, request: Request) -> str:
        return client_address(request)


class AnonRateThrottle(ClientAddressMixin, throttling.AnonRateThrottle):
    """Anonymous requests per client address (`API_THROTTLE_ANON`)."""


class UserRateThrottle(ClientAddressMixin, throttling.UserRateThrottle):
    """Authenticated requests per user (`API_THROTTLE_USER`); anonymous ones per address."""


class UpstreamAnonRateThrottle(ClientAddressMixin, throttling.SimpleRateThrottle):
    """Anonymous requests to views with `throttle_scope = UPSTREAM_ANON`, per address."""

    scope = UPSTREAM_ANON

    def allow_request(self, request: Request, view: Any) -> bool:
        if getattr(view, "throttle_scope", None) != self.scope:
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None  # users are counted by UserRateThrottle
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
