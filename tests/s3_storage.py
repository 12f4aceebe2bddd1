"""Django's default storage on a real S3-compatible server: moto's, in this process, spoken
to over HTTP by django-storages, with the storage options `config/settings.py` builds from
`STORAGE_S3_*` (production's, `file_overwrite` and all)."""

from __future__ import annotations

import logging
import runpy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import ROOT

ACCESS = {"aws_access_key_id": "test", "aws_secret_access_key": "test-secret"}


@dataclass
class Bucket:
    """The bucket the storage writes to, read behind its back with boto3."""

    name: str
    client: Any

    def keys(self, prefix: str = "") -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.name, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))


@contextmanager
def s3_default_storage(settings: Any, bucket: str = "toolhub-files") -> Iterator[Bucket]:
    """`settings.STORAGES["default"]` on a fresh bucket of a moto S3 server started here."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **ACCESS)
        client.create_bucket(Bucket=bucket)
        settings.STORAGES = {**settings.STORAGES, "default": _settings_storage(endpoint, bucket)}
        yield Bucket(bucket, client)
    finally:
        server.stop()


def _settings_storage(endpoint: str, bucket: str) -> dict[str, Any]:
    """The default storage `config/settings.py` makes of STORAGE_S3_* for this server."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "STORAGE_S3_BUCKET": bucket,
            "STORAGE_S3_ENDPOINT_URL": endpoint,
            "STORAGE_S3_REGION": "us-east-1",
            "STORAGE_S3_ACCESS_KEY": ACCESS["aws_access_key_id"],
            "STORAGE_S3_SECRET_KEY": ACCESS["aws_secret_access_key"],
        }.items():
            patch.setenv(name, value)
        storage: dict[str, Any] = runpy.run_path(str(ROOT / "config" / "settings.py"))["STORAGES"][
            "default"
        ]
    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"
    return storage
