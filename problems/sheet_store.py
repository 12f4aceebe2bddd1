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
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

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
    return StoredSheet(name=name, data=pdf)


def _write(name: str, pdf: bytes) -> None:
    if isinstance(default_storage, FileSystemStorage):
        stem = name.rsplit("/", 1)[-1].removesuffix(".pdf")
        partial = default_storage.save(f"{SHEETS_DIR}/.{stem}.part", ContentFile(pdf))
        try:
            os.replace(default_storage.path(partial), default_storage.path(name))
        except OSError:
            default_storage.delete(partial)
            raise
        return
    saved = default_storage.save(name, ContentFile(pdf))
    if saved != name:  # another print stored the same sheet first
        default_storage.delete(saved)
