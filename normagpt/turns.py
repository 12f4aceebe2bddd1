"""When a run gets a worker: in turn among users, and never taken for lost while it waits.

- **Each user's share.** At most NORMAGPT_RUNS_PER_USER runs of one user advance at once,
  over every process and host, and they take their turns in the order they were asked. A
  run's place is counted in the database (`ahead`): the user's runs an advancer holds (a
  stalled one until it is recovered) and their runs queued before it that none holds yet.
  A run with its user's share ahead of it waits its turn: the worker that picked it gives
  it back at once (`turn_wait`: queued, `turn_since` set, an event says so), so one user's
  burst of runs holds no worker another user's run is waiting for. The count and the
  claim, and a run's release and the hand-off, are made under one lock per user
  (`turn_lock`), so neither a burst picked by several workers in the same instant nor a
  run ending while another counts gets past the share or loses a turn. When one of the
  user's runs stops advancing, its advancer starts the runs whose turn came
  (`turn_handed`); a sweeper does, should that advancer die first (`turns_due`).
- **A queued run is not a lost one.** A run waiting on this process's own pool (no broker)
  is kept alive by this process's sweeper, which touches its heartbeat every half lease
  (`queued_keep_alive`); if the process stops, the heartbeat stops, and another process's
  sweeper starts the run after a lease (while the process lives, its runs wait for its
  own pool). With a broker, the queue outlives any process: a run no worker took within
  NORMAGPT_QUEUED_RESEND_SECONDS is sent again, and again each such period while none
  takes it (its message may have been lost); a duplicate finds the run taken and ends
  within a heartbeat.

Only a stalled run (`selectors.runs_stalled`: a lease held by a dead advancer) is a fault
worth a warning, once: it is let go, queued again like any other. A run waiting for a
worker or for its turn is logged at info when started again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

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


def _before(run_id: int, created_at: datetime) -> Q:
    """The runs queued before this one (ids break a tie of one instant)."""
    return Q(created_at__lt=created_at) | Q(created_at=created_at, pk__lt=run_id)


def ahead(run_id: int) -> int:
    """How many of the user's runs come before this one: every run an advancer holds (a
    stalled one until it is recovered), and every run in progress queued before it that no
    advancer holds yet (waiting its turn, or handed it and on its way to a worker)."""
    row = AgentRun.objects.filter(pk=run_id).values_list("user_id", "created_at").first()
    if row is None:
        return 0
    user_id, created_at = row
    before = ~Q(owner="") | _before(run_id, created_at)
    return _users_runs(user_id).filter(before).exclude(pk=run_id).count()


@contextlib.contextmanager
def turn_lock(user_id: int | None) -> Iterator[None]:
    """A transaction in which no other claim or hand-off of the user's runs is made, on
    any host: the count of the runs ahead and the claim, or a run's release and the
    hand-off, are one step. SQLite's transactions take its one write lock as they begin
    (IMMEDIATE); PostgreSQL takes a lock named after the user, released as the
    transaction ends."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_CLASS, (user_id or 0) % 2**31]
                )
        yield


def user_of(run_id: int) -> int | None:
    return AgentRun.objects.filter(pk=run_id).values_list("user_id", flat=True).first()


def turn_wait(run_id: int) -> bool:
    """Whether the run, no advancer's yet, must wait its turn: NORMAGPT_RUNS_PER_USER of its
    user's runs come before it (`ahead`). It then waits queued (`turn_since`), said by an
    event as it starts waiting. Asked within `turn_lock`, with the claim that follows."""
    share = settings.NORMAGPT_RUNS_PER_USER
    if share <= 0:
        return False
    free = AgentRun.objects.filter(pk=run_id, owner="", status__in=GOING)
    if not free.exists():
        return False  # held by an advancer, or no longer in progress: the claim decides
    before = ahead(run_id)
    if before < share:
        return False
    status = AgentRun.Status.QUEUED
    if free.filter(turn_since=None).update(turn_since=timezone.now(), status=status):
        RunEvent.objects.create(
            run_id=run_id,
            kind=RunEvent.Kind.TURN,
            message=f"waiting its turn: {before} runs of the same user are in progress "
            f"or queued before it (at most {share} at once)",
        )
    return True


def turn_next(user_id: int | None) -> list[int]:
    """Start the user's runs waiting their turn whose turn came (fewer than their share
    ahead of them), oldest first; their ids. Called within `turn_lock`."""
    share = settings.NORMAGPT_RUNS_PER_USER
    runs = _users_runs(user_id)
    queue = runs.filter(owner="").order_by("created_at", "id").values_list("pk", "turn_since")
    if share > 0:
        queue = queue[: max(0, share - runs.exclude(owner="").count())]
    started = []
    for run_id, since in list(queue):
        if since is None:
            continue  # on its way to a worker already
        # once: a hand-off made elsewhere meanwhile finds it gone
        if (
            runs.filter(pk=run_id, owner="")
            .exclude(turn_since=None)
            .update(turn_since=None, heartbeat_at=timezone.now())
        ):
            run_start(run_id)
            started.append(run_id)
    return started


def turn_handed(run_id: int, release: Callable[[], object]) -> None:
    """An advancer lets the run go (`release`) and hands its user's turn on, as one step.
    A failure of the hand-off is logged, not raised: the run is let go all the same, and a
    sweeper hands the turn on."""
    user_id = user_of(run_id)
    try:
        with turn_lock(user_id):
            release()
            turn_next(user_id)
    except Exception:
        logger.exception("run %s: handing its user's turn on failed; a sweeper will", run_id)
        release()


def turns_due() -> list[int]:
    """For the sweeper: start every user's runs whose turn came (the advancer that should
    have started them stopped first); their ids."""
    users = (
        AgentRun.objects.filter(status__in=GOING, owner="")
        .exclude(turn_since=None)
        .order_by()
        .values_list("user_id", flat=True)
        .distinct()
    )
    started = []
    for user_id in list(users):
        with turn_lock(user_id):
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
