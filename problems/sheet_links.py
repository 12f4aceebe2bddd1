"""Links to printed sheets. A sheet holds the answer key, so its link must not be
guessable: `/media/sheets/?t=…`, a token signed with the project's SECRET_KEY that names the
file and expires after `SDAMGIA_SHEET_LINK_HOURS`. Any web process answers it: the token is
checked with the shared key, the file streamed from the shared storage (the filesystem, or
a private S3 bucket whose own addresses need not be reachable by the reader).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.core import signing

from core.links import link_path

SALT = "problems.sheet"


def sheet_link(name: str) -> str:
    """The path on this site of the stored sheet `name`."""
    token = signing.TimestampSigner(salt=SALT).sign(name)
    return f"{link_path('problems-sheet')}?{urlencode({'t': token})}"


def sheet_name(token: str) -> str | None:
    """The sheet a link's token names, or None when it is forged, altered or expired."""
    max_age = settings.SDAMGIA_SHEET_LINK_HOURS * 3600
    try:
        name = signing.TimestampSigner(salt=SALT).unsign(token, max_age=max_age)
    except signing.BadSignature:  # SignatureExpired is one
        return None
    return name if name.startswith("sheets/") and ".." not in name else None
