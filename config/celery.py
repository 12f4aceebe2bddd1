"""The Celery app.

With REDIS_URL set, Redis is broker and result backend and `make worker` runs the tasks.
Without it, tasks run in-process (CELERY_TASK_ALWAYS_EAGER): the embedded default needs no
broker. Long tasks survive a worker's death: they are acknowledged only when done and
re-queued when the worker is lost.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A worker does not run Django's system checks as it starts: they import every URL and view
# (the MCP SDK, the API docs) only to check them, a second of CPU and 0.7 s before it takes
# a task. The web processes, `migrate` and `check --deploy` run them on the same settings;
# CELERY_SKIP_CHECKS= (empty) runs them in the worker too.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("toolhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_track_started=True,
    task_eager_propagates=True,
    result_expires=24 * 3600,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    worker_redirect_stdouts=False,
)

# `make beat` (one process per deployment) runs these. Each is safe to run at any time:
# a run's lease and a note's claim keep a second runner from doing the work twice, and a
# sheet already deleted is skipped.
app.conf.beat_schedule = {
    # Runs whose worker died (lease expired) resume from their last checkpoint.
    "normagpt-runs-recover": {"task": "normagpt.runs_recover", "schedule": 60.0},
    # Notes queued while Anki was closed, once the task's own retries are spent.
    "anki-bridge-flush": {"task": "anki_bridge.flush", "schedule": 600.0},
    # Printed sheets past SDAMGIA_SHEET_TTL_DAYS (problems.sheet_store), once a day.
    "problems-sheets-expire": {"task": "problems.sheets_expire", "schedule": 24 * 3600.0},
    # Anki packages past ANKI_PACKAGE_TTL_HOURS (anki_bridge.packages), every hour.
    "anki-bridge-packages-expire": {"task": "anki_bridge.packages_expire", "schedule": 3600.0},
}

app.autodiscover_tasks()


@worker_init.connect
def sql_not_rendered(**_: object) -> None:
    """A worker never renders its SQL: DEBUG is for the development pages."""
    from django.conf import settings

    settings.DEBUG = False
