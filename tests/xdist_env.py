"""Parallel runs (pytest-xdist): each worker gets a Redis database of its own.

Loaded with `-p tests.xdist_env` before Django reads its settings: a test may flush its
Redis database, and a Celery worker a test starts must take only that worker's tasks.
Each worker already has its own test database (pytest-django names it after the worker),
and ports are picked free at random.
"""

from __future__ import annotations

import os
import re

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...
_redis = os.environ.get("REDIS_URL", "")
if _worker.startswith("gw") and _redis:
    _base = re.sub(r"/\d*$", "", _redis.rstrip("/"))
    os.environ["REDIS_URL"] = f"{_base}/{int(_worker[2:]) + 1}"
