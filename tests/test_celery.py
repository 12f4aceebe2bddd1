"""Celery end to end: a real worker on a real Redis broker, and in-process without one."""

from __future__ import annotations

import os
import subprocess

import pytest

from bench.common import celery_worker_command
from tests.conftest import PYTHON, ROOT, subprocess_env


@pytest.fixture
def worker(spawn, redis_url: str):  # type: ignore[no-untyped-def]
    """A Celery worker process against REDIS_URL, on a queue of its own; tasks go to it."""
    from core import background

    queue = f"test-{os.getpid()}"
    proc = spawn(
        celery_worker_command("t", "-Q", queue, "--loglevel", "INFO"),
        REDIS_URL=redis_url,
    )
    with background.using_broker(True):
        yield queue, proc


def test_task_runs_on_a_real_worker_through_redis(worker) -> None:  # type: ignore[no-untyped-def]
    from config.tasks import ping_task

    queue, proc = worker
    answer = ping_task.apply_async(args=["через Redis"], queue=queue).get(timeout=60)
    assert answer["echo"] == "через Redis"
    assert answer["pid"] == proc.pid  # a --pool solo worker runs tasks in its own process
    assert proc.poll() is None


def test_without_redis_url_the_same_task_runs_in_process() -> None:
    code = (
        "import os, django; django.setup();"
        "from config.tasks import ping_task;"
        "from core import background;"
        "r = ping_task.delay('локально');"
        "v = r.get(timeout=5);"
        "assert not background.broker_available();"
        "assert v['pid'] == os.getpid(), v;"
        "print(v['echo'])"
    )
    out = subprocess.run(
        [PYTHON, "-c", code],
        cwd=ROOT,
        env=subprocess_env(REDIS_URL=None, DJANGO_SETTINGS_MODULE="config.settings"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().strip() == "локально"


def test_every_periodic_task_is_a_registered_task() -> None:
    from config.celery import app

    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert scheduled == {
        "normagpt.runs_recover",
        "anki_bridge.flush",
        "problems.sheets_expire",
        "anki_bridge.packages_expire",
    }
    assert scheduled <= set(app.tasks)


WORKER_START = """
import sys
from celery.fixups.django import DjangoWorkerFixup
from config.celery import app
DjangoWorkerFixup(app).validate_models()  # what a worker does as it starts
print(sorted(m for m in ("config.urls", "mcp") if m in sys.modules))
"""


@pytest.mark.parametrize(("skip", "imported"), [(None, "[]"), ("", "['config.urls', 'mcp']")])
def test_a_worker_starts_without_importing_the_urls_unless_asked(skip, imported) -> None:  # type: ignore[no-untyped-def]
    """A worker skips Django's system checks (config/celery.py): no URLconf, views or MCP
    SDK imported as it starts; CELERY_SKIP_CHECKS= (empty) runs them."""
    done = subprocess.run(
        [PYTHON, "-c", WORKER_START],
        cwd=ROOT,
        env=subprocess_env(CELERY_SKIP_CHECKS=skip, REDIS_URL=None),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == imported
