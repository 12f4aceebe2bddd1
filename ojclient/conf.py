"""The OJ API settings: the base URL rule and the per-process view of them."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from ojclient.exceptions import OjNotConfigured

DEFAULT_PORTS = {"http": 80, "https": 443}


def base_url_normalize(value: str) -> str:
    """An http(s) origin in canonical form: `HTTPS://Example.com:443/` → `https://example.com`.

    Raises ValueError saying what is wrong: no path, query, fragment or credentials are
    allowed (the tools append `/api/v1/...` and `/status` to it).
    """
    raw = value.strip()
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ValueError(f"{value!r} must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"{value!r} must not contain credentials (use the token setting)")
    host = (parts.hostname or "").lower()
    if not host:
        raise ValueError(f"{value!r} has no host")
    if parts.path not in ("", "/"):
        raise ValueError(f"{value!r} must be an origin without a path (got {parts.path!r})")
    if parts.query or raw.rstrip("/").endswith("?"):
        raise ValueError(f"{value!r} must not have a query string")
    if parts.fragment or "#" in raw:
        raise ValueError(f"{value!r} must not have a fragment")
    try:
        is_v6 = ipaddress.ip_address(host).version == 6
    except ValueError:
        is_v6 = False
    netloc = f"[{host}]" if is_v6 else host
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    return f"{scheme}://{netloc}"


@dataclass(frozen=True)
class OjSettings:
    base_url: str
    token: str
    timeout: float
    max_body_bytes: int

    @property
    def token_state(self) -> str:
        """For logs and listings: the token itself is never shown."""
        return "configured" if self.token else "not configured"


def oj_settings() -> OjSettings:
    """The current settings, validated; raises OjNotConfigured naming the setting."""
    raw = settings.OJ_API_BASE_URL.strip()
    if not raw:
        raise OjNotConfigured(
            "The OJ API is not configured: set OJ_API_BASE_URL "
            "(or start the server with runmcp --oj-base-url URL)."
        )
    try:
        base_url = base_url_normalize(raw)
    except ValueError as exc:
        raise OjNotConfigured(f"OJ_API_BASE_URL is invalid: {exc}") from None
    return OjSettings(
        base_url=base_url,
        token=settings.OJ_API_TOKEN.strip(),
        timeout=settings.OJ_API_TIMEOUT,
        max_body_bytes=settings.OJ_API_MAX_BODY_BYTES,
    )
