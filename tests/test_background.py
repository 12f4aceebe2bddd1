"""`core.background`: after commit or not at all, a bounded in-process pool, real workers."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery import shared_task
from django.contrib.auth import get_user_model
from django.db import transaction

from bench.common import celery_worker_command
from core import background
from core.exceptions import InvalidInput

pytestmark = pytest.mark.django_db(transaction=True)

ran: list[tuple[Any, ...]] = []
gate = threading.Event()
running = {"now": 0, "most": 0}
running_lock = threading.Lock()


@shared_task(name="tests.background.record")
def record_task(label: str) -> None:
    """Remember what ran, on which thread, and how many users it saw committed."""
    ran.append((label, threading.current_thread().name, get_user_model().objects.count()))


@shared_task(name="tests.background.fail")
def fail_task() -> None:
    raise RuntimeError("boom")


@shared_task(name="tests.background.hold")
def hold_task(label: str) -> None:
    """Wait at the gate, counting how many wait at once."""
    with running_lock:
        running["now"] += 1
        running["most"] = max(running["most"], running["now"])
    gate.wait(10)
    with running_lock:
        running["now"] -= 1
    ran.append((label,))


@shared_task(name="tests.background.square")
def square_task(x: int) -> int:
    if x < 0:
        raise InvalidInput(f"{x} is negative")
    report = background.task_progress()
    if report is not None:
        report(1, 2)
    return x * x


class Boom(Exception):
    pass


def start_then_roll_back(label: str) -> None:
    with transaction.atomic():
        background.start("tests.background.record", label)
        raise Boom


@pytest.fixture(autouse=True)
def fresh_pool() -> Iterator[None]:
    """A pool of new threads per test, and nothing left running after it."""
    background.shutdown(timeout=10)
    ran.clear()
    gate.clear()
    running.update(now=0, most=0)
    yield
    gate.set()
    background.shutdown(timeout=10)


def test_a_start_runs_on_the_pool_once_the_transaction_commits() -> None:
    with transaction.atomic():
        get_user_model().objects.create_user("writer")
        background.start("tests.background.record", "committed")
        time.sleep(0.1)
        assert ran == []  # not before the commit
    assert background.drain(timeout=10)
    [(label, thread, users)] = ran
    assert label == "committed"
    assert thread.startswith("background-")  # not the caller's thread
    assert users == 1  # it sees what the transaction wrote


def test_nothing_runs_when_the_transaction_rolls_back() -> None:
    with pytest.raises(Boom):
        start_then_roll_back("rolled back")
    assert background.drain(timeout=10)
    assert ran == []


def test_a_failure_on_the_pool_is_logged_and_the_pool_goes_on(caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.ERROR, logger="core.background"):
        background.start("tests.background.fail")
        background.start("tests.background.record", "after the failure")
        assert background.drain(timeout=10)
    assert "background task tests.background.fail() failed" in caplog.text
    assert "RuntimeError: boom" in caplog.text  # with its traceback
    assert [r[0] for r in ran] == ["after the failure"]


def test_the_pool_runs_at_most_background_max_workers_at_once(settings) -> None:  # type: ignore[no-untyped-def]
    settings.BACKGROUND_MAX_WORKERS = 2
    for n in range(6):
        background.start("tests.background.hold", str(n))
    deadline = time.monotonic() + 10
    while running["now"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # room for a third to start, were the pool unbounded
    assert running["most"] == 2
    assert sum(t.name.startswith("background-") for t in threading.enumerate()) == 2
    gate.set()
    assert background.drain(timeout=10)
    assert sorted(r[0] for r in ran) == [str(n) for n in range(6)]


def test_a_delayed_start_without_a_broker_is_dropped_and_said(caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.INFO, logger="core.background"):
        background.start("tests.background.record", "later", countdown=5)
    assert background.drain(timeout=10)
    assert ran == []
    assert "no broker: tests.background.record is not scheduled" in caplog.text


def test_an_unknown_task_name_fails_in_the_caller() -> None:
    with pytest.raises(LookupError, match=r"no Celery task is registered as 'tests\.nope'"):
        background.start("tests.nope")


def test_with_a_broker_the_task_is_sent_by_name_after_commit(monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    from config.celery import app

    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append((name, kw)))
    with background.using_broker(True):
        assert background.broker_available()
        with pytest.raises(Boom):
            start_then_roll_back("rolled back")
        with transaction.atomic():
            background.start("tests.background.record", "sent", countdown=3)
            assert sent == []
    assert not background.broker_available()
    assert sent == [
        (
            "tests.background.record",
            {"args": ("sent",), "kwargs": {}, "countdown": 3},
        )
    ]
    assert ran == []  # not in this process

    def down(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(app, "send_task", down)
    with background.using_broker(True), caplog.at_level(logging.ERROR):
        background.start("tests.background.record", "lost?")  # the caller does not fail
    assert "could not enqueue tests.background.record('lost?',)" in caplog.text


def test_gather_without_workers_runs_each_call_here_in_order() -> None:
    progress: list[tuple[int, int]] = []
    caller = threading.current_thread().name
    answers = background.gather(
        "tests.background.square",
        [(3,), (-1,), (4,)],
        sizes=[2, 2, 4],
        timeout=5,
        progress=lambda done, total: progress.append((done, total)),
    )
    assert answers == [
        background.Gathered(value=9),
        background.Gathered(error="-1 is negative"),
        background.Gathered(value=16),
    ]
    # each call reports half its own work, then the call is done
    assert progress == [(1, 8), (2, 8), (4, 8), (6, 8), (8, 8)]
    assert threading.current_thread().name == caller
    assert background.chunks([1, 2, 3, 4, 5], 2) == [[1, 2, 3, 4, 5]]  # one call does it all
    assert background.gather("tests.background.square", [], timeout=1) == []


@pytest.mark.long
def test_start_and_gather_on_a_real_worker_through_redis(
    spawn, redis_url, subprocess_db_env
) -> None:  # type: ignore[no-untyped-def]
    import redis

    worker = spawn(
        celery_worker_command("bg", "--loglevel", "INFO"), REDIS_URL=redis_url, **subprocess_db_env
    )
    with background.using_broker(True):
        assert background.workers_wait(60), "the worker did not answer"
        assert background.chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
        progress: list[tuple[int, int]] = []
        answers = background.gather(
            "project.ping",
            [("один",), ("два",)],
            timeout=60,
            progress=lambda done, total: progress.append((done, total)),
        )
        assert [a.value["echo"] for a in answers] == ["один", "два"]
        assert {a.value["pid"] for a in answers} == {worker.pid}
        assert progress[-1] == (2, 2)

        token = f"started-{os.getpid()}-{time.monotonic()}"
        with transaction.atomic():
            background.start("project.ping", token)
        store = redis.Redis.from_url(redis_url)
        deadline = time.monotonic() + 60
        answer = None
        while answer is None and time.monotonic() < deadline:
            for key in store.scan_iter("celery-task-meta-*"):
                meta = json.loads(store.get(key) or b"{}")
                result = meta.get("result")
                if isinstance(result, dict) and result.get("echo") == token:
                    answer = result
            time.sleep(0.2)
    assert answer is not None, "the started task did not run on the worker"
    assert answer["pid"] == worker.pid
