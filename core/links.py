"""Links that work wherever they are read.

A tool's answer is read by a model whose client may have no idea where this server lives
(stdio has no host at all), and an API reply is stored and followed later: both carry
absolute links, made from `settings.SITE_URL` — the address people and programs reach the
web server at (`make run` sets it from HOST and PORT).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import CheckMessage, Error, register
from django.urls import NoReverseMatch, get_urlconf, reverse


def absolute_url(path: str) -> str:
    """`path` on the site at `SITE_URL`; a URL that already has a scheme is left alone."""
    if urlsplit(path).scheme:
        return path
    return settings.SITE_URL.rstrip("/") + "/" + path.lstrip("/")


def links_urlconf() -> str | None:
    """The URLconf an answer's link is reversed in first: LINKS_URLCONF outside a request
    (an MCP call, a task), None inside one (Django sets the request's URLconf) or when a
    deployment's settings leave it unset."""
    return getattr(settings, "LINKS_URLCONF", None) if get_urlconf() is None else None


def link_path(name: str, *args: Any) -> str:
    """The path of the view `name` with `args`, for a link an answer carries: reversed in
    `links_urlconf()`, a part of ROOT_URLCONF light to load (`config/urls_pages.py`), where
    a process's first link would otherwise import the whole URLconf; else, or for a view it
    does not hold, in the request's URLconf or ROOT_URLCONF. NoReverseMatch when none
    holds it."""
    light = links_urlconf()
    if light:
        try:
            return reverse(name, urlconf=light, args=args)
        except NoReverseMatch:
            pass
    return reverse(name, urlconf=get_urlconf(), args=args)


@register("core")
def site_url_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    parts = urlsplit(settings.SITE_URL)
    if parts.scheme in ("http", "https") and parts.netloc and not parts.query:
        return []
    return [
        Error(
            f"SITE_URL is invalid: {settings.SITE_URL!r} is not an http(s) address",
            hint="Set SITE_URL to where the web server is reached, e.g. https://hub.example.org",
            id="core.E001",
        )
    ]
