"""One way into the background: a service names a Celery task here, and nowhere else.

`start` runs a task once the caller's transaction commits: with a broker (REDIS_URL) it is
enqueued by its registered name; without one it runs on a small pool of threads of this
process. `gather` runs a task once per argument list and waits for every answer: as a
Celery group when a worker answers, else one call after another in the caller's thread.
`broker_available` is the one place that decides whether there is a broker.

Services never import Celery or their app's tasks; the tasks stay thin adapters that
import the services.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from celery import current_app, group
from django.conf import settings
from django.db import close_old_connections, connections, transaction

from core.exceptions import DomainError

logger = logging.getLogger(__name__)

T = TypeVar("T")
Progress = Callable[[int, int], None]

TIMED_OUT = "timed out waiting for a worker"
PING_TIMEOUT = 0.5  # seconds a worker has to answer; a ping costs this much when none does
WORKERS_SEEN_FOR = 30.0  # a worker that answered is trusted this long without a new ping
NO_WORKERS_FOR = 5.0  # after a ping nobody answered, work runs here this long without one


def broker_available() -> bool:
    """Whether tasks go through a broker to workers, or run in this process.

    Settings make tasks eager (`CELERY_TASK_ALWAYS_EAGER = not REDIS_URL`); nothing else
    in the project asks this question.
    """
    return not current_app.conf.task_always_eager


@contextlib.contextmanager
def using_broker(enabled: bool) -> Iterator[None]:
    """Within the block, behave as with (or without) a broker; for benchmarks and tests."""
    saved = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = not enabled
    _workers.forget()
    try:
        yield
    finally:
        current_app.conf.task_always_eager = saved
        _workers.forget()


def start(task_name: str, *args: Any, countdown: float | None = None, **kwargs: Any) -> None:
    """Run the task `task_name` with these JSON arguments once the current transaction commits.

    Nothing runs if it rolls back; outside a transaction the start is immediate. With a
    broker the task is enqueued (`countdown` seconds later, if given); a failure to enqueue
    is logged, not raised: the caller's rows are committed already. Without a broker it
    runs on this process's pool (`BACKGROUND_MAX_WORKERS` threads), once, without Celery's
    retries; a failure is logged with its traceback. A delayed start without a broker is
    dropped with a log line: a delay means "retry later", which only a broker outlives, so
    whoever asks for one must have another path (the Anki queue: the next call that reaches
    Anki, or `manage.py anki_flush`).
    """
    if broker_available():
        transaction.on_commit(lambda: _enqueue(task_name, args, kwargs, countdown))
    elif countdown is not None:
        logger.info("no broker: %s is not scheduled (a delayed start needs one)", task_name)
    else:
        task = _task(task_name)  # an unknown name fails here, in the caller
        transaction.on_commit(lambda: _pool.submit(lambda: _run_here(task, args, kwargs)))


@dataclass(frozen=True)
class Gathered:
    """What one call of a `gather` answered: its value, or why it has none."""

    value: Any = None
    error: str = ""


def gather(
    task_name: str,
    calls: Sequence[Sequence[Any]],
    *,
    timeout: float | None,
    sizes: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> list[Gathered]:
    """Run `task_name` once per argument list of `calls` and wait; an answer per call, in order.

    With a broker and a worker that answers, the calls run as a Celery group; after
    `timeout` seconds (None: no limit) an unfinished call answers `TIMED_OUT`. Otherwise
    they run here, one after another, in the caller's thread (its transaction included).
    A call that fails answers its error's message. `progress(done, total)` counts units of
    work, `sizes[i]` per call (1 by default); in-process, a task that reports through
    `task_progress()` moves it within its own call.
    """
    units = list(sizes) if sizes is not None else [1] * len(calls)
    if len(units) != len(calls):
        raise ValueError("gather: one size per call")
    if not calls:
        return []
    if broker_available() and _workers.available():
        return _gather_on_workers(task_name, calls, units, timeout, progress)
    return _gather_here(task_name, calls, units, progress)


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    """`items` cut for `gather`: in chunks of `size` when workers will share them, in one
    chunk when this process does the work (one call then runs at its own concurrency)."""
    if broker_available() and _workers.available():
        return [list(items[i : i + size]) for i in range(0, len(items), size)]
    return [list(items)] if items else []


_reporter: ContextVar[Progress | None] = ContextVar("background_progress", default=None)


def task_progress() -> Progress | None:
    """For a task that `gather` runs in this process: where to report its own progress.

    None on a worker, or when nobody waits for progress.
    """
    return _reporter.get()


def workers_available() -> bool:
    """Whether a Celery worker answers a ping (remembered a while: a ping costs up to 0.5 s)."""
    return _workers.available()


def workers_wait(timeout: float) -> bool:
    """Wait up to `timeout` seconds for a worker to answer (one just started); whether one did."""
    deadline = time.monotonic() + timeout
    while True:
        _workers.forget()
        if _workers.available(quiet=True):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.25)


def drain(timeout: float | None = None) -> bool:
    """Wait until the work this process's pool holds is done; whether it is.

    A command that started work without a broker waits here before its process ends.
    """
    return _pool.drain(timeout)


def shutdown(timeout: float | None = None) -> None:
    """Stop the pool's threads once the work they hold is done; the next start makes new ones."""
    _pool.shutdown(timeout)


# --- a task by its name ---------------------------------------------------------------------


def _task(name: str) -> Any:
    """The registered Celery task `name`, its module imported on first use.

    Tasks are named after their app (`problems.fetch_chunk` lives in `problems.tasks`);
    only for another name is every app's `tasks` module imported.
    """
    app = current_app
    if name not in app.tasks:
        with contextlib.suppress(ImportError):
            importlib.import_module(f"{name.partition('.')[0]}.tasks")
    if name not in app.tasks:
        app.loader.import_default_modules()
    try:
        return app.tasks[name]
    except KeyError:
        raise LookupError(f"no Celery task is registered as {name!r}") from None


def _reason(exc: BaseException) -> str:
    """A failed call's message: a DomainError's own, else the exception's text or type."""
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__


def _enqueue(
    task_name: str, args: tuple[Any, ...], kwargs: dict[str, Any], countdown: float | None
) -> None:
    try:
        current_app.send_task(task_name, args=args, kwargs=kwargs, countdown=countdown)
    except Exception:
        logger.exception("could not enqueue %s%r: is the broker up?", task_name, args)


def _run_here(task: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Run a task once on a pool thread, with database connections of its own."""
    close_old_connections()
    try:
        task(*args, **kwargs)
    except DomainError as exc:
        logger.warning("background task %s%r failed: %s", task.name, args, exc.message)
    except Exception:
        logger.exception("background task %s%r failed", task.name, args)
    finally:
        connections.close_all()


# --- gather ---------------------------------------------------------------------------------


def _gather_here(
    task_name: str,
    calls: Sequence[Sequence[Any]],
    units: list[int],
    progress: Progress | None,
) -> list[Gathered]:
    task = _task(task_name)
    total, done = sum(units), 0
    answers = []
    for call, size in zip(calls, units, strict=True):
        token = _reporter.set(_within(progress, done, size, total) if progress else None)
        try:
            answers.append(Gathered(value=task(*call)))
        except Exception as exc:
            if not isinstance(exc, DomainError):
                logger.exception("%s%r failed", task_name, tuple(call))
            answers.append(Gathered(error=_reason(exc)))
        finally:
            _reporter.reset(token)
        done += size
        if progress is not None:
            progress(done, total)
    return answers


def _within(progress: Progress, before: int, size: int, total: int) -> Progress:
    """A call's own (done, total) as a share of its `size` units of the whole."""

    def report(done: int, of: int) -> None:
        progress(before + (min(size, size * done // of) if of > 0 else 0), total)

    return report


def _gather_on_workers(
    task_name: str,
    calls: Sequence[Sequence[Any]],
    units: list[int],
    timeout: float | None,
    progress: Progress | None,
) -> list[Gathered]:
    result: Any = group(
        current_app.signature(task_name, args=list(call)) for call in calls
    ).apply_async()
    children = list(result.results or [])
    deadline = None if timeout is None else time.monotonic() + timeout
    pending, done, pause = set(range(len(children))), 0, 0.05
    while pending and (deadline is None or time.monotonic() < deadline):
        finished = {i for i in pending if children[i].ready()}
        if finished:
            pending -= finished
            done += sum(units[i] for i in finished)
            if progress is not None:
                progress(done, sum(units))
            pause = 0.05
        else:
            pause = min(pause * 1.5, 0.5)  # many slow calls: fewer polls of the backend
        if pending:
            time.sleep(pause)
    answers = []
    for i, child in enumerate(children):
        if i in pending:
            answers.append(Gathered(error=TIMED_OUT))
        elif child.successful():
            answers.append(Gathered(value=child.result))
        else:
            answers.append(Gathered(error=_reason(child.result)))
    with contextlib.suppress(Exception):  # results expire anyway; this only tidies up
        result.forget()
    if progress is not None and pending:
        progress(sum(units), sum(units))  # the wait is over
    return answers


class _Workers:
    """Whether a worker answers a ping, remembered for a while."""

    def __init__(self) -> None:
        self._checked_at = float("-inf")
        self._answered = False

    def available(self, *, quiet: bool = False) -> bool:
        """Whether a worker answered; `quiet`: a caller that waits for one says nothing yet."""
        now = time.monotonic()
        remembered = WORKERS_SEEN_FOR if self._answered else NO_WORKERS_FOR
        if now - self._checked_at < remembered:
            return self._answered
        answered = bool(current_app.control.ping(timeout=PING_TIMEOUT))
        if not answered and not quiet:
            logger.warning("no Celery worker answers: the work runs in this process")
        self._checked_at, self._answered = time.monotonic(), answered
        return answered

    def forget(self) -> None:
        self._checked_at = float("-inf")


_workers = _Workers()


# --- the in-process pool --------------------------------------------------------------------


class _Pool:
    """Up to BACKGROUND_MAX_WORKERS threads taking work from one queue, made on demand.

    Daemon threads, unlike a ThreadPoolExecutor's: a process that exits does not wait
    for them. Work cut short that way is picked up by the task's own recovery (an agent
    run resumes from its checkpoint once its lease expires).
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._state = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._pending = 0  # queued or running
        self._made = 0

    def submit(self, work: Callable[[], None]) -> None:
        with self._state:
            self._pending += 1
            limit = max(1, int(settings.BACKGROUND_MAX_WORKERS))
            if self._pending > len(self._threads) and len(self._threads) < limit:
                self._made += 1
                thread = threading.Thread(
                    target=self._serve, name=f"background-{self._made}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        self._queue.put(work)

    def _serve(self) -> None:
        while (work := self._queue.get()) is not None:
            try:
                work()
            except Exception:  # _run_here logs its own; this keeps the thread alive
                logger.exception("background work failed")
            finally:
                with self._state:
                    self._pending -= 1
                    self._state.notify_all()
        with self._state:
            self._threads.remove(threading.current_thread())
            self._state.notify_all()

    def drain(self, timeout: float | None) -> bool:
        with self._state:
            return self._state.wait_for(lambda: self._pending == 0, timeout)

    def shutdown(self, timeout: float | None) -> None:
        with self._state:
            threads = list(self._threads)
        for _ in threads:
            self._queue.put(None)
        for thread in threads:
            thread.join(timeout)


_pool = _Pool()
