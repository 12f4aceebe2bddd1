"""Random public ids: for URLs, resource URIs and command lines."""

from __future__ import annotations

import secrets


def random_id(nbytes: int) -> str:
    """`nbytes` random bytes as URL-safe text that never starts with «-»: a command line
    (`manage.py normagpt_resume <id>`) would read such an id as an option."""
    while True:
        token = secrets.token_urlsafe(nbytes)
        if not token.startswith("-"):
            return token
