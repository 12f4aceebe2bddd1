"""Printed sheets in the storage, safe under concurrent prints (issue 51, item 5).

A sheet is stored under a name of its own content: `sheets/{stem}-{key}.pdf`, the key a
hash of the PDF without its creation time and file id, so prints of the same variant
and options give one file, and a file once stored never changes under a link to it.
Nothing is deleted before it is written again. The write is atomic wherever the sheet
is stored:
- on the filesystem (`FileSystemStorage`), the bytes go to a temporary file of the
  storage, which is then renamed onto the name (a rename in one directory is atomic);
- on an object store (S3-compatible), one PUT: an object appears whole or not at all.
  A name another print took in the meantime (the storage then picks another) is kept,
  and this print's copy removed, which nobody else knows the name of.

Old sheets are deleted (`sheets_expire`, daily from `make beat`, or `manage.py
sheets_expire`): a file not printed for `SDAMGIA_SHEET_TTL_DAYS`, on any storage that
lists a directory and tells a file's modification time (the filesystem, S3 through
django-storages). A link made by a print stays good for its whole life: a print that
finds its file so old that it would expire before the link does writes it again onto
the same name, which gives it a new time (a rename on the filesystem; on an object store
an upload opened on that name: `save` would pick another name there, as the settings'
S3 storage keeps `file_overwrite` off, and leave the old object's time to expire under
the new link).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage

SHEETS_DIR = "sheets"
# What differs between two renders of the same sheet: reportlab's creation and
# modification times and the file id derived from them.
VOLATILE = re.compile(rb"/(?:CreationDate|ModDate) \(D:[^)]*\)|\[<[0-9a-fA-F]+><[0-9a-fA-F]+>\]")


@dataclass(frozen=True)
class StoredSheet:
    name: str  # the storage name (for `problems.sheet_links.sheet_link`)
    data: bytes  # the PDF, as stored


def content_key(pdf: bytes) -> str:
    """The same for two renders of the same sheet, whenever they were made."""
    return hashlib.sha256(VOLATILE.sub(b"", pdf)).hexdigest()[:24]


def sheet_store(pdf: bytes, *, stem: str) -> StoredSheet:
    """`pdf` stored as `sheets/{stem}-{key}.pdf`, unless that file is there already."""
    name = f"{SHEETS_DIR}/{stem}-{content_key(pdf)}.pdf"
    if not default_storage.exists(name):
        _write(name, pdf)
    elif _outlived_by_a_link(name):
        _write(name, pdf, again=True)
    return StoredSheet(name=name, data=pdf)


def sheet_lifetime() -> timedelta | None:
    """How long a sheet's file is kept after its last write (None: for ever); never less
    than a link's lifetime, so no live link names a deleted file."""
    days = settings.SDAMGIA_SHEET_TTL_DAYS
    if not days:
        return None
    return max(timedelta(days=days), timedelta(hours=settings.SDAMGIA_SHEET_LINK_HOURS))


def sheets_expire(*, now: datetime | None = None) -> int:
    """Delete the sheets (and any write's leftovers) last written more than
    `sheet_lifetime()` ago; the number deleted. A storage that cannot tell a file's time
    keeps it."""
    lifetime = sheet_lifetime()
    if lifetime is None:
        return 0
    cutoff = (now or datetime.now().astimezone()) - lifetime
    try:
        files = default_storage.listdir(SHEETS_DIR)[1]
    except FileNotFoundError:  # nothing printed yet
        return 0
    deleted = 0
    for file in files:
        name = f"{SHEETS_DIR}/{file}"
        modified = _modified(name)
        if modified is not None and modified < cutoff:
            default_storage.delete(name)
            deleted += 1
    return deleted


def _outlived_by_a_link(name: str) -> bool:
    """True when the file `name` would expire before a link made now does."""
    lifetime, modified = sheet_lifetime(), _modified(name)
    if lifetime is None or modified is None:
        return False
    link = timedelta(hours=settings.SDAMGIA_SHEET_LINK_HOURS)
    return modified < datetime.now().astimezone() - (lifetime - link)


def _modified(name: str) -> datetime | None:
    try:
        modified = default_storage.get_modified_time(name)
    except (NotImplementedError, FileNotFoundError):
        return None
    return modified if modified.tzinfo else modified.astimezone()  # USE_TZ off: local


def _write(name: str, pdf: bytes, *, again: bool = False) -> None:
    """`pdf` stored as `name`, atomically; `again`: onto the file there (same bytes),
    for a new time."""
    if isinstance(default_storage, FileSystemStorage):
        stem = name.rsplit("/", 1)[-1].removesuffix(".pdf")
        partial = default_storage.save(f"{SHEETS_DIR}/.{stem}.part", ContentFile(pdf))
        try:
            os.replace(default_storage.path(partial), default_storage.path(name))
        except OSError:
            default_storage.delete(partial)
            raise
        return
    if again:  # one upload onto the name: the object is replaced whole when it completes
        with default_storage.open(name, "wb") as handle:
            handle.write(pdf)
        return
    saved = default_storage.save(name, ContentFile(pdf))
    if saved != name:  # another print stored the same sheet first
        default_storage.delete(saved)
