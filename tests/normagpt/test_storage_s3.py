"""Files in object storage, shared by processes that share no disk (issue 15, item 3).

A real S3-compatible server (moto's, from PyPI) holds the files. A PDF uploaded through
the admin of one web process is ingested by a Celery worker whose MEDIA_ROOT is another,
empty directory; the page images it renders are then served by the web process, streamed
from the bucket. Neither process writes a file to its own disk.
"""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model
from PIL import Image

from bench.common import celery_worker_command
from normagpt.models import NormDocument
from tests.conftest import PYTHON, STARTUP_DEADLINE, free_port, wait_for_http
from tests.normagpt.test_corpus import make_pdf
from tests.normagpt.test_web import INLINE

pytestmark = pytest.mark.django_db(transaction=True)

BUCKET = "toolhub-files"
_INPUT = re.compile(r"<input[^>]*>")
_ATTR = re.compile(r'(\w+)="([^"]*)"')


def form_inputs(html: str) -> dict[str, str]:
    """Hidden inputs of a page (the CSRF token, the inline's management form)."""
    fields = {}
    for tag in _INPUT.findall(html):
        attrs = dict(_ATTR.findall(tag))
        if attrs.get("type") == "hidden" and "name" in attrs:
            fields[attrs["name"]] = attrs.get("value", "")
    return fields


def test_an_admin_upload_is_ingested_by_a_worker_without_the_web_disk(
    spawn, redis_url, subprocess_db_env, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import boto3

    s3_port, web_port = free_port(), free_port()
    moto = spawn([PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3_port)])
    endpoint = f"http://127.0.0.1:{s3_port}"
    wait_for_http(endpoint, moto)
    storage = {
        "STORAGE_S3_BUCKET": BUCKET,
        "STORAGE_S3_ENDPOINT_URL": endpoint,
        "STORAGE_S3_REGION": "us-east-1",
        "STORAGE_S3_ACCESS_KEY": "test",
        "STORAGE_S3_SECRET_KEY": "test-secret",
    }
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test-secret",
    )
    s3.create_bucket(Bucket=BUCKET)
    web_disk, worker_disk = tmp_path / "web-media", tmp_path / "worker-media"
    web_disk.mkdir()
    worker_disk.mkdir()
    common = {
        **storage,
        **subprocess_db_env,
        "REDIS_URL": redis_url,
        "NORMAGPT_OCR": "0",
        "NORMAGPT_PAGE_DPI": "40",
    }
    web = spawn(
        [PYTHON, "-m", "uvicorn", "config.asgi:application", "--port", str(web_port)],
        DJANGO_MEDIA_ROOT=str(web_disk),
        **common,
    )
    spawn(
        celery_worker_command("files", "--loglevel", "WARNING"),
        DJANGO_MEDIA_ROOT=str(worker_disk),
        **common,
    )
    site = f"http://127.0.0.1:{web_port}"
    wait_for_http(f"{site}/healthz", web)
    get_user_model().objects.create_superuser("ops", "ops@example.org", "pw-ops-4821")

    with httpx.Client(base_url=site, timeout=30) as browser:
        login = browser.get("/admin/login/")
        browser.post(
            "/admin/login/",
            data={**form_inputs(login.text), "username": "ops", "password": "pw-ops-4821"},
        )
        add = browser.get("/admin/normagpt/normdocument/add/")
        assert add.status_code == 200, "not signed in"
        pdf = make_pdf(tmp_path / "upload.pdf", scanned_page=False).read_bytes()
        saved = browser.post(
            "/admin/normagpt/normdocument/add/",
            data={
                **form_inputs(add.text),
                **INLINE,
                "code": "СП 70.13330.2012",
                "title": "Несущие и ограждающие конструкции",
                "kind": "sp",
                "status": "in_force",
            },
            files={"file": ("upload.pdf", pdf, "application/pdf")},
        )
        assert saved.status_code == 302, saved.text[:2000]

        deadline = time.monotonic() + STARTUP_DEADLINE
        document = NormDocument.objects.get()
        while document.ingest_status != "done" and time.monotonic() < deadline:
            assert document.ingest_status != "failed", document.ingest_error
            time.sleep(0.3)
            document.refresh_from_db()
        assert (document.ingest_status, document.page_count) == ("done", 1)
        page = document.pages.get()
        image = browser.get(f"/normagpt/pages/{page.pk}/image/")
        assert image.status_code == 200
        assert image.headers["content-type"] == "image/jpeg"
        assert Image.open(io.BytesIO(image.content)).size[0] > 100
        shown = browser.get(f"/normagpt/pages/{page.pk}/").text
        assert f"/normagpt/pages/{page.pk}/image/" in shown

    keys = {obj["Key"] for obj in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
    assert document.file.name in keys
    assert page.image.name in keys
    assert list(web_disk.rglob("*")) == []
    assert list(worker_disk.rglob("*")) == []
