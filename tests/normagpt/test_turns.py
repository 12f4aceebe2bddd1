"""Runs take turns among users, and a run waiting for a worker is no stalled one
(`normagpt.turns`): one user's burst of runs holds no worker another user's run waits for,
and the sweeper neither starts a waiting run twice nor warns of it."""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from core import background
from core.holders import holder_token
from normagpt import services, turns
from normagpt.models import AgentRun, RunEvent
from tests.normagpt.scripted_llm import Call, straight_script

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"


def until(condition: Callable[[], bool], seconds: float = 60) -> bool:
    """Whether `condition` holds within `seconds` (a busy machine's deadline)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def two_users(db):  # type: ignore[no-untyped-def]
    users = get_user_model().objects
    return users.create_user("alice", password="pw-123456"), users.create_user("bob")


@pytest.fixture
def small_pool(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """A pool of two threads, fresh: the threads earlier tests made are let go."""
    assert background.drain(timeout=30)
    background.shutdown(timeout=10)
    settings.BACKGROUND_MAX_WORKERS = 2
    yield
    background.shutdown(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_one_users_burst_holds_no_worker_another_users_run_waits_for(  # type: ignore[no-untyped-def]
    corpus, llm, settings, two_users, small_pool
) -> None:
    alice, bob = two_users
    settings.NORMAGPT_RUNS_PER_USER = 1
    settings.NORMAGPT_LLM_TIMEOUT = 60  # alice's first run waits on the model, not its timeout
    script = straight_script()
    alices: list[int] = []
    released = llm._release.is_set

    def planner(call: Call) -> str | dict[str, bool]:
        # alice's runs hang on the model until released: every worker they hold is busy
        if call.run in alices and not released():
            return {"hang": True}
        return script["planner"][0]  # type: ignore[return-value]

    llm.play(**{**script, "planner": [planner]})
    with transaction.atomic():  # each starts once all four are known
        alices += [services.run_create(question=QUESTION, user=alice).pk for _ in range(4)]
    assert until(llm.hanging.is_set)
    bobs = services.run_create(question=QUESTION, user=bob)
    assert until(lambda: AgentRun.objects.get(pk=bobs.pk).status == "completed"), (
        "bob's run waited behind alice's burst"
    )
    # two workers took alice's first two runs at once: one runs, every other waits its turn
    runs = AgentRun.objects.filter(pk__in=alices)
    assert sorted(runs.values_list("status", flat=True)) == ["queued"] * 3 + ["running"]
    waiting = runs.filter(status="queued")
    assert all(waiting.values_list("turn_since", flat=True))
    event = RunEvent.objects.filter(run=waiting.first(), kind="turn").get()
    assert event.message == (
        "waiting its turn: 1 runs of the same user are in progress (at most 1 at once)"
    )
    llm.release()
    runs = runs.order_by("started_at")
    assert until(lambda: set(runs.values_list("status", flat=True)) == {"completed"})
    spans = list(runs.values_list("started_at", "finished_at"))
    # each started when the one before it finished: the user's share was one at a time
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))
    assert not runs.exclude(turn_since=None).exists()


@pytest.mark.django_db
def test_a_run_waiting_in_this_process_s_queue_is_no_stalled_one(settings, caplog, llm) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_RUN_LEASE_SECONDS = 2
    long_ago = timezone.now() - timedelta(seconds=30)
    # queued here, its start waiting for a commit that a test never makes: as a run
    # waiting behind a busy pool
    run = services.run_create(question=QUESTION)
    AgentRun.objects.filter(pk=run.pk).update(created_at=long_ago)
    with caplog.at_level(logging.INFO, logger="normagpt"):
        assert turns.queued_keep_alive() == 1  # the sweeper of the process that holds it
        assert services.runs_recover() == []
    assert "advancer stopped" not in caplog.text
    # the process that held it stops: its heartbeat does too, and another sweeper starts it
    turns._queued_here.clear()
    AgentRun.objects.filter(pk=run.pk).update(heartbeat_at=long_ago)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="normagpt"):
        assert services.runs_recover() == [run.pk]
        assert services.runs_recover() == []  # once: queued again now
    (record,) = [r for r in caplog.records if f"run {run.pk}" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert "no worker took it within 2 s; queued again" in record.getMessage()


@pytest.mark.django_db
def test_with_a_broker_a_queued_run_is_sent_again_only_when_long_untaken(settings, llm) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_QUEUED_RESEND_SECONDS = 300
    run = services.run_create(question=QUESTION)
    with background.using_broker(True):
        AgentRun.objects.filter(pk=run.pk).update(
            created_at=timezone.now() - timedelta(seconds=60)  # four leases: a long queue
        )
        assert services.runs_recover() == []
        AgentRun.objects.filter(pk=run.pk).update(
            created_at=timezone.now() - timedelta(seconds=400)
        )
        assert services.runs_recover() == [run.pk]
        assert services.runs_recover() == []


@pytest.mark.django_db
def test_a_run_waits_its_turn_until_the_users_share_has_room(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    alice, bob = two_users
    settings.NORMAGPT_RUNS_PER_USER = 2
    now = timezone.now()
    held = [
        AgentRun.objects.create(
            question=QUESTION, user=alice, status="running", owner=holder_token(), heartbeat_at=now
        )
        for _ in range(2)
    ]
    third = AgentRun.objects.create(question=QUESTION, user=alice)
    bobs = AgentRun.objects.create(question=QUESTION, user=bob)
    assert turns.turn_wait(third.pk)
    assert turns.turn_wait(third.pk)  # still: one event said it
    assert not turns.turn_wait(bobs.pk)  # another user's share
    assert RunEvent.objects.filter(run=third, kind="turn").count() == 1
    third.refresh_from_db()
    assert third.turn_since is not None
    AgentRun.objects.filter(pk=third.pk).update(turn_since=now - timedelta(hours=1))
    assert services.runs_recover() == []  # an hour waiting its turn: not lost, not started
    # one of alice's runs ends without handing its turn on (its advancer killed after it)
    AgentRun.objects.filter(pk=held[0].pk).update(status="completed", owner="")
    assert services.runs_recover() == [third.pk]
    third.refresh_from_db()
    assert third.turn_since is None
    assert services.runs_recover() == []  # started once


@pytest.mark.django_db
def test_no_share_set_is_no_limit(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    alice, _ = two_users
    settings.NORMAGPT_RUNS_PER_USER = 0
    for _ in range(5):
        AgentRun.objects.create(
            question=QUESTION,
            user=alice,
            status="running",
            owner=holder_token(),
            heartbeat_at=timezone.now(),
        )
    assert not turns.turn_wait(AgentRun.objects.create(question=QUESTION, user=alice).pk)
