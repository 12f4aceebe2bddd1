"""Runs take turns among users, and a run waiting for a worker is no stalled one
(`normagpt.turns`): one user's burst of runs holds no worker another user's run waits for,
and the sweeper neither starts a waiting run twice nor warns of it."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from core import background
from core.holders import holder_token
from normagpt import services, turns
from normagpt.agent.runner import run_claim
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
    # two workers took alice's first two runs at once: the first runs, the others wait
    # their turn in order
    runs = AgentRun.objects.filter(pk__in=alices)
    assert list(runs.order_by("id").values_list("status", flat=True)) == [
        "running", "queued", "queued", "queued"
    ]  # fmt: skip
    waiting = runs.filter(status="queued")
    assert all(waiting.values_list("turn_since", flat=True))
    event = RunEvent.objects.filter(run_id=alices[1], kind="turn").get()
    assert event.message == (
        "waiting its turn: 1 runs of the same user are in progress or queued before it "
        "(at most 1 at once)"
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
    third.refresh_from_db()
    assert third.status == "queued"
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


LONG_AGO = timezone.now() - timedelta(hours=1)


def claim(run_id: int) -> bool:
    """The claim of `runner.run_advance`: the turn asked, then the lease taken."""
    with turns.turn_lock(turns.user_of(run_id)):
        return not turns.turn_wait(run_id) and run_claim(run_id=run_id, owner=holder_token())


def waiting_runs(user, n: int) -> list[int]:  # type: ignore[no-untyped-def]
    return [
        AgentRun.objects.create(question=QUESTION, user=user, turn_since=LONG_AGO).pk
        for _ in range(n)
    ]


@pytest.mark.django_db
def test_a_sweep_starts_only_the_runs_the_share_has_room_for(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    alice, _ = two_users
    settings.NORMAGPT_RUNS_PER_USER = 1
    waiting = waiting_runs(alice, 4)
    assert services.runs_recover() == waiting[:1]  # the oldest: its turn came
    assert services.runs_recover() == []  # handed its turn, not yet taken: it holds it
    assert AgentRun.objects.exclude(turn_since=None).count() == 3


@pytest.mark.django_db
def test_a_users_runs_take_their_turns_in_order(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    alice, _ = two_users
    settings.NORMAGPT_RUNS_PER_USER = 2
    held = [
        AgentRun.objects.create(
            question=QUESTION, user=alice, status="running", owner=holder_token(),
            heartbeat_at=timezone.now(),
        )
        for _ in range(2)
    ]  # fmt: skip
    waiting = [AgentRun.objects.create(question=QUESTION, user=alice).pk for _ in range(6)]
    assert not any(claim(pk) for pk in waiting)
    AgentRun.objects.filter(pk=held[0].pk).update(status="completed", owner="")
    assert turns.turn_next(alice.pk) == waiting[:1]
    assert services.runs_recover() == []  # the queue is not flooded
    # a newer run's message reaching a worker first does not overtake the older one
    assert not claim(waiting[5])
    assert claim(waiting[0])


@pytest.mark.django_db
def test_a_stalled_run_holds_its_users_share_until_it_is_recovered(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    alice, _ = two_users
    settings.NORMAGPT_RUNS_PER_USER = 1
    stalled = AgentRun.objects.create(
        question=QUESTION, user=alice, status="running", owner="otherhost:1:1:abc",
        heartbeat_at=LONG_AGO, next_node="executor",
    )  # fmt: skip
    (waiting,) = waiting_runs(alice, 1)
    assert services.runs_recover() == [stalled.pk]  # not the waiting one too
    stalled.refresh_from_db()
    assert stalled.owner == ""  # let go, queued again: kept alive like any queued run
    (event,) = stalled.events.filter(kind="takeover")
    assert event.message == (
        "the advancer otherhost:1:1:abc did not renew its lease of 30 s (stopped or crashed); "
        "queued again, the run goes on from the node executor"
    )
    assert turns.queued_keep_alive() >= 1
    assert not claim(waiting)
    assert claim(stalled.pk)


@pytest.mark.django_db
def test_a_stalled_run_is_warned_of_once(settings, two_users, caplog) -> None:  # type: ignore[no-untyped-def]
    alice, _ = two_users
    stalled = AgentRun.objects.create(
        question=QUESTION, user=alice, status="running", owner="otherhost:1:1:abc",
        heartbeat_at=LONG_AGO,
    )  # fmt: skip
    with caplog.at_level(logging.INFO, logger="normagpt"):
        assert services.runs_recover() == [stalled.pk]
        turns.queued_keep_alive()  # its process's sweeper: it waits in that process's queue
        assert services.runs_recover() == []
    warned = [r for r in caplog.records if "advancer stopped" in r.getMessage()]
    assert len(warned) == 1


@pytest.mark.django_db(transaction=True)
def test_a_hand_off_waits_for_a_claim_being_counted(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    """A run counting the runs ahead of it while the run ahead ends: the hand-off waits for
    the count's transaction, then starts the run (no sweeper needed)."""
    alice, _ = two_users
    settings.NORMAGPT_RUNS_PER_USER = 1
    owner = holder_token()
    first = AgentRun.objects.create(
        question=QUESTION, user=alice, status="running", owner=owner, heartbeat_at=timezone.now()
    )
    second = AgentRun.objects.create(question=QUESTION, user=alice)
    counted, go = threading.Event(), threading.Event()

    def count() -> None:
        try:
            with turns.turn_lock(alice.pk):
                assert turns.turn_wait(second.pk)
                counted.set()
                go.wait(30)
        finally:
            connection.close()

    def end_first() -> None:
        try:
            release = AgentRun.objects.filter(pk=first.pk, owner=owner)
            turns.turn_handed(first.pk, lambda: release.update(owner="", status="completed"))
        finally:
            connection.close()

    counting = threading.Thread(target=count)
    counting.start()
    assert counted.wait(30)
    ending = threading.Thread(target=end_first)
    ending.start()
    go.set()
    counting.join(30)
    ending.join(30)
    second.refresh_from_db()
    assert second.turn_since is None  # handed its turn: on its way to a worker
    assert background.drain(timeout=30)


@pytest.mark.django_db
def test_a_failed_hand_off_fails_no_run(monkeypatch, two_users) -> None:  # type: ignore[no-untyped-def]
    from django.db import DatabaseError

    from normagpt import tasks
    from normagpt.agent import runner

    alice, _ = two_users
    run = AgentRun.objects.create(question=QUESTION, user=alice)

    def to_review(run_id: int, owner: str, client: object) -> bool:
        AgentRun.objects.filter(pk=run_id).update(status="needs_review")
        return False

    def hiccup(user_id: int) -> list[int]:
        raise DatabaseError("database is locked")

    monkeypatch.setattr(runner, "_advance_one", to_review)
    monkeypatch.setattr(runner.LlmClient, "from_settings", classmethod(lambda cls: None))
    monkeypatch.setattr(turns, "turn_next", hiccup)
    assert tasks.run_advance_task(run.pk) == "needs_review"
    run.refresh_from_db()
    assert (run.status, run.owner) == ("needs_review", "")


@pytest.mark.django_db
def test_a_run_going_on_waits_its_turn_again_queued_and_said(settings, two_users) -> None:  # type: ignore[no-untyped-def]
    alice, _ = two_users
    settings.NORMAGPT_RUNS_PER_USER = 1
    AgentRun.objects.create(
        question=QUESTION, user=alice, status="running", owner=holder_token(),
        heartbeat_at=timezone.now(),
    )  # fmt: skip
    run = AgentRun.objects.create(question=QUESTION, user=alice)
    assert not claim(run.pk)
    # it ran later, asked its asker, and the reply sends it back to work (runner's state)
    AgentRun.objects.filter(pk=run.pk).update(status="running", turn_since=None, owner="")
    assert not claim(run.pk)
    run.refresh_from_db()
    assert run.status == "queued"
    assert run.turn_since is not None
    assert run.events.filter(kind="turn").count() == 2  # each wait said
