"""Printed sheets on S3-compatible storage (issue 51, item 5, as production stores them):
Django's default storage on a moto S3 server through django-storages, with the options
`config/settings.py` makes of STORAGE_S3_* (`file_overwrite` off)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from django.core.files.storage import default_storage

from problems.sheet_store import SHEETS_DIR, StoredSheet, sheet_lifetime, sheet_store, sheets_expire
from tests.s3_storage import Bucket, s3_default_storage


def render(when: str) -> bytes:
    """A sheet as two renders of it differ: only in reportlab's times and file id."""
    return (
        b"%PDF-1.4\n1 0 obj << /Title (variant 7) /CreationDate (D:" + when.encode() + b") "
        b"/ModDate (D:" + when.encode() + b") >>\ntrailer << /ID [<" + when.encode().hex().encode()
        + b"><00ff>] >>\n%%EOF\n"
    )  # fmt: skip


@pytest.fixture
def bucket(settings) -> Iterator[Bucket]:  # type: ignore[no-untyped-def]
    settings.SDAMGIA_SHEET_TTL_DAYS, settings.SDAMGIA_SHEET_LINK_HOURS = 7, 24
    with s3_default_storage(settings) as bucket:
        yield bucket


def test_two_prints_at_once_store_one_object_read_back_whole(bucket: Bucket) -> None:
    renders = [render("20261129150000+00'00'"), render("20261129150001+00'00'")]
    start = threading.Barrier(len(renders))
    stored: list[StoredSheet] = []

    def print_sheet(pdf: bytes) -> None:
        start.wait(timeout=30)
        stored.append(sheet_store(pdf, stem="variant-7"))

    threads = [threading.Thread(target=print_sheet, args=(pdf,)) for pdf in renders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(stored) == 2
    assert stored[0].name == stored[1].name
    assert bucket.keys(SHEETS_DIR) == [stored[0].name]
    with default_storage.open(stored[0].name, "rb") as handle:
        assert handle.read() in renders


def test_a_sheet_expires_by_its_time_on_s3(bucket: Bucket) -> None:
    stored = sheet_store(render("20261129150000+00'00'"), stem="variant-7")
    modified = default_storage.get_modified_time(stored.name)
    assert abs(modified - datetime.now().astimezone()) < timedelta(minutes=5)
    lifetime = sheet_lifetime()
    assert lifetime is not None
    assert sheets_expire(now=modified + lifetime - timedelta(minutes=1)) == 0
    assert bucket.keys(SHEETS_DIR) == [stored.name]
    assert sheets_expire(now=modified + lifetime + timedelta(minutes=1)) == 1
    assert bucket.keys(SHEETS_DIR) == []


def test_a_reprint_of_an_ageing_sheet_gives_the_object_a_new_time(bucket: Bucket, settings) -> None:  # type: ignore[no-untyped-def]
    """A sheet that would expire before a link made now is written again, under its own
    name (the link names it): on S3 with `file_overwrite` off the storage would pick
    another name instead, leaving the old object's time to expire under the new link."""
    settings.SDAMGIA_SHEET_TTL_DAYS, settings.SDAMGIA_SHEET_LINK_HOURS = 1, 24  # every print
    pdf = render("20261129150000+00'00'")
    name = sheet_store(pdf, stem="variant-7").name
    first = default_storage.get_modified_time(name)
    deadline = time.monotonic() + 30
    while datetime.now().astimezone() < first + timedelta(seconds=1.1):  # S3 times: seconds
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert sheet_store(pdf, stem="variant-7").name == name
    assert default_storage.get_modified_time(name) > first
    assert bucket.keys(SHEETS_DIR) == [name]
