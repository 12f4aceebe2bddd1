"""System check: a set but malformed OJ_API_BASE_URL stops start-up, naming the setting."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register

from ojclient.conf import base_url_normalize


@register(Tags.compatibility, "ojclient")
def base_url_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    raw = settings.OJ_API_BASE_URL.strip()
    if not raw:
        return []
    try:
        base_url_normalize(raw)
    except ValueError as exc:
        return [
            Error(
                f"OJ_API_BASE_URL is invalid: {exc}",
                hint="Use an http(s) origin such as https://oj.example.com (no path).",
                id="ojclient.E001",
            )
        ]
    return []
