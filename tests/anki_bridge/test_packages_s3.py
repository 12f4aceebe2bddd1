"""Anki packages on S3-compatible storage (issue 53, as production stores them): Django's
default storage on a moto S3 server through django-storages, with the options
`config/settings.py` makes of STORAGE_S3_*. A package is stored, read back, expired and
bounded per user in the bucket itself."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from datetime import timedelta
from io import BytesIO

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from anki_bridge import packages
from anki_bridge.models import AnkiPackage
from core.exceptions import NotFound
from tests.s3_storage import Bucket, s3_default_storage

pytestmark = pytest.mark.django_db

ITEMS = [{"Front": "2 + 2", "Back": "4"}, {"Front": "3 + 3", "Back": "6"}]


@pytest.fixture
def bucket(settings) -> Iterator[Bucket]:  # type: ignore[no-untyped-def]
    with s3_default_storage(settings) as bucket:
        yield bucket


@pytest.fixture
def owner_id() -> int:
    return int(get_user_model().objects.create_user("teacher").pk)


def test_a_package_is_stored_read_back_and_expired_in_the_bucket(
    bucket: Bucket, owner_id: int
) -> None:
    built = packages.package_build(items=ITEMS, deck="Счёт::Устно", model="Basic")
    package = packages.package_store(built=built, owner_id=owner_id)
    assert bucket.keys(packages.PACKAGES_DIR) == [package.file]
    data = packages.package_bytes(package)
    assert data == built.data
    assert "collection.anki2" in zipfile.ZipFile(BytesIO(data)).namelist()

    assert packages.packages_expire(now=package.expires_at - timedelta(minutes=1)) == 0
    assert packages.packages_expire(now=package.expires_at + timedelta(minutes=1)) == 1
    assert bucket.keys(packages.PACKAGES_DIR) == []
    assert not AnkiPackage.objects.exists()


def test_a_users_oldest_packages_leave_the_bucket(bucket: Bucket, owner_id: int, settings) -> None:  # type: ignore[no-untyped-def]
    settings.ANKI_PACKAGE_MAX_PER_USER = 2
    built = packages.package_build(items=ITEMS, deck="Счёт", model="Basic")
    stored = [packages.package_store(built=built, owner_id=owner_id) for _ in range(3)]
    assert bucket.keys(packages.PACKAGES_DIR) == sorted(p.file for p in stored[1:])
    assert stored[0].public_id != stored[1].public_id


def test_a_package_whose_object_is_gone_is_not_found(bucket: Bucket, owner_id: int) -> None:
    built = packages.package_build(items=ITEMS, deck="Счёт", model="Basic")
    package = packages.package_store(built=built, owner_id=owner_id)
    bucket.client.delete_object(Bucket=bucket.name, Key=package.file)
    with pytest.raises(NotFound, match="is gone"):
        packages.package_bytes(package)
    assert package.expires_at > timezone.now()
