"""The suite's environment, set before anything starts (loaded with `-p tests.xdist_env`,
before Django reads its settings and before pytest-xdist starts its workers).

Parallel runs (pytest-xdist): each worker gets a Redis database of its own: a test may
flush its Redis database, and a Celery worker a test starts must take only that worker's
tasks. Each worker already has its own test database (pytest-django names it after the
worker), and ports are picked free at random.

Bytecode is cached (`__pycache__`, ignored by git) even where the environment says
PYTHONDONTWRITEBYTECODE: the suite spawns a few hundred servers and workers, and each would
compile the project's modules again (some 0.3 s of CPU a start), which a user's installed
server does not.

Each process of the suite (the controller and every worker) collects without the cyclic
garbage collector, as the project's processes start (config/startup.py): importing the
apps and some two hundred test modules is half the CPU of a collection with it on. What
collection made is frozen when it ends, and the tests run with the collector on.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys

import pytest

from config.startup import collector_paused

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...
_redis = os.environ.get("REDIS_URL", "")
if _worker.startswith("gw") and _redis:
    _base = re.sub(r"/\d*$", "", _redis.rstrip("/"))
    os.environ["REDIS_URL"] = f"{_base}/{int(_worker[2:]) + 1}"

_collection = contextlib.ExitStack()
_collection.enter_context(collector_paused())


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Collection done (xdist's controller collects nothing; it too runs this): what it made
    frozen, the collector on for the tests."""
    _collection.close()
