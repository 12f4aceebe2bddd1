"""When a run gets a worker: in turn among users, and never taken for lost while it waits.

- **Each user's share.** At most NORMAGPT_RUNS_PER_USER runs of one user advance at once,
  over every process and host (counted in the database: the runs whose lease is alive). A
  run started beyond that waits its turn: the advancer that took it gives it back at once
  (`turn_wait`: `turn_since` set, an event says so), so one user's burst of runs holds no
  worker another user's run is waiting for. The count and the claim are made under one
  lock per user (`turn_lock`), so a burst taken by several workers in the same instant
  still gets its share only. When one of the user's runs stops advancing, the advancer
  starts their next one (`turn_next`); the sweeper does, should that start be lost
  (`turns_due`).
- **A queued run is not a lost one.** A run waiting on this process's own pool (no broker)
  is kept alive by this process's sweeper, which touches its heartbeat every half lease
  (`queued_keep_alive`); if the process stops, the heartbeat stops, and another process's
  sweeper starts the run after a lease. With a broker, the queue outlives any process: a
  run no worker took within NORMAGPT_QUEUED_RESEND_SECONDS is sent again (its message may
  have been lost), and a duplicate finds the run taken and ends.

Only `runs_stalled` (a lease held by a dead advancer) is a fault worth a warning; a run
waiting for a worker or for its turn is logged at info when started again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from core import background
from normagpt.models import AgentRun, RunEvent

logger = logging.getLogger(__name__)

RUN_TASK = "normagpt.run_advance"
GOING = (AgentRun.Status.QUEUED, AgentRun.Status.RUNNING)
LOCK_CLASS = 0x6E67  # the first key of PostgreSQL's advisory lock of a user's claims ("ng")

_queued_here: set[int] = set()
_queued_lock = threading.Lock()


def run_start(run_id: int) -> None:
    """Put the run to work once the caller's transaction commits (a worker with a broker,
    this process's pool without one, which then keeps it alive while it waits)."""
    if not background.broker_available():
        with _queued_lock:
            _queued_here.add(run_id)
    background.start(RUN_TASK, run_id)


def run_taken(run_id: int) -> None:
    """An advancer took the run from this process's pool: no longer kept alive here."""
    with _queued_lock:
        _queued_here.discard(run_id)


def queued_keep_alive() -> int:
    """Touch the heartbeat of every run still waiting on this process's pool (no advancer
    yet); how many. Runs gone from the queue (taken, finished, rolled back) are forgotten."""
    with _queued_lock:
        ids = list(_queued_here)
    if not ids:
        return 0
    waiting = AgentRun.objects.filter(pk__in=ids, owner="", status__in=GOING)
    alive = set(waiting.values_list("pk", flat=True))
    touched = waiting.filter(pk__in=alive).update(heartbeat_at=timezone.now())
    with _queued_lock:
        _queued_here.difference_update(set(ids) - alive)
    return touched


def _users_runs(user_id: int | None) -> QuerySet[AgentRun]:
    runs = AgentRun.objects.filter(status__in=GOING)
    return runs.filter(user__isnull=True) if user_id is None else runs.filter(user_id=user_id)


def advancing(user_id: int | None, *, besides: int | None = None) -> int:
    """How many of the user's runs an advancer holds now (a lease alive), `besides` left out."""
    stale = timezone.now() - timedelta(seconds=settings.NORMAGPT_RUN_LEASE_SECONDS)
    held = _users_runs(user_id).exclude(owner="").filter(heartbeat_at__gte=stale)
    if besides is not None:
        held = held.exclude(pk=besides)
    return held.count()


@contextlib.contextmanager
def turn_lock(run_id: int) -> Iterator[None]:
    """A transaction in which no other claim of a run of the same user is made, on any
    host: the count of their runs advancing (`turn_wait`) and the claim are one step.
    SQLite's transactions take its one write lock as they begin (IMMEDIATE); PostgreSQL
    takes a lock named after the user, released as the transaction ends."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            user_id = AgentRun.objects.filter(pk=run_id).values_list("user_id", flat=True).first()
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_CLASS, (user_id or 0) % 2**31]
                )
        yield


def turn_wait(run_id: int) -> bool:
    """Whether the run, not yet taken by an advancer, must wait its turn: its user has
    NORMAGPT_RUNS_PER_USER runs advancing. Marked so (`turn_since`, one event) when it must.
    Asked within `turn_lock`, with the claim that follows."""
    share = settings.NORMAGPT_RUNS_PER_USER
    if share <= 0:
        return False
    row = (
        AgentRun.objects.filter(pk=run_id, owner="", status__in=GOING)
        .values_list("user_id", "turn_since")
        .first()
    )
    if row is None:
        return False  # held by an advancer, or no longer in progress: the claim decides
    user_id, since = row
    ahead = advancing(user_id, besides=run_id)
    if ahead < share:
        return False
    if since is None:
        AgentRun.objects.filter(pk=run_id, turn_since=None).update(turn_since=timezone.now())
    if not RunEvent.objects.filter(run_id=run_id, kind=RunEvent.Kind.TURN).exists():
        RunEvent.objects.create(
            run_id=run_id,
            kind=RunEvent.Kind.TURN,
            message=f"waiting its turn: {ahead} runs of the same user are in progress "
            f"(at most {share} at once)",
        )
    return True


def turn_next(user_id: int | None) -> list[int]:
    """Start the user's runs waiting their turn, oldest first, as many as their share has
    room for now; their ids."""
    share = settings.NORMAGPT_RUNS_PER_USER
    waiting = (
        _users_runs(user_id)
        .filter(owner="")
        .exclude(turn_since=None)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)
    )
    if share > 0:
        room = share - advancing(user_id)
        if room <= 0:
            return []
        waiting = waiting[:room]
    started = []
    for run_id in list(waiting):
        # once: another process handing the same turn over finds it gone
        if (
            AgentRun.objects.filter(pk=run_id, owner="")
            .exclude(turn_since=None)
            .update(turn_since=None, heartbeat_at=timezone.now())
        ):
            run_start(run_id)
            started.append(run_id)
    return started


def turns_due() -> list[int]:
    """For the sweeper: start every user's runs waiting a turn their share has room for
    (the advancer that should have started them stopped first); their ids."""
    users = (
        AgentRun.objects.filter(status__in=GOING, owner="")
        .exclude(turn_since=None)
        .values_list("user_id", flat=True)
        .distinct()
    )
    started = []
    for user_id in list(users):
        started += turn_next(user_id)
    if started:
        logger.info("runs %s: their turn came; started", started)
    return started


def unstarted_requeue() -> list[int]:
    """Queue again the runs queued for a worker that none took in time (not those waiting
    their turn): without a broker, a lease since their process last kept them alive (it
    stopped); with one, NORMAGPT_QUEUED_RESEND_SECONDS since they were queued (the message
    may be lost). Each once: another sweeper finds it queued anew. Ids, oldest first."""
    seconds = (
        settings.NORMAGPT_QUEUED_RESEND_SECONDS
        if background.broker_available()
        else settings.NORMAGPT_RUN_LEASE_SECONDS
    )
    now = timezone.now()
    before = now - timedelta(seconds=seconds)
    lost = AgentRun.objects.filter(status__in=GOING, owner="", turn_since=None).filter(
        Q(heartbeat_at__lt=before) | Q(heartbeat_at=None, created_at__lt=before)
    )
    queued = []
    for run_id in lost.order_by("id").values_list("pk", flat=True):
        if lost.filter(pk=run_id).update(heartbeat_at=now):
            logger.info("run %s: no worker took it within %s s; queued again", run_id, seconds)
            run_start(run_id)
            queued.append(run_id)
    return queued
