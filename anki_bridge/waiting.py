"""Without a broker: a thread of this process delivers the queued notes once Anki is back.

With a broker the flush task does this (retried with backoff by Celery). Without one
(the embedded default: one machine, no worker) nothing else would: `queue_watch` starts,
at most once per process, a thread that runs the journal's flush (handed in by
`anki_bridge.journal`, which this module does not import: it stands below it), and while
Anki stays away runs it again every ANKI_WAIT_POLL seconds; it ends when nothing waits.
Leases in the journal keep two such threads (or a thread and a call) from delivering one
note twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import close_old_connections, connection

from anki_bridge import ledger
from anki_bridge.exceptions import AnkiUnavailable
from core.exceptions import DomainError

logger = logging.getLogger(__name__)

ERROR_PAUSE = 60.0  # Anki answers but refuses us (a wrong key): ask again less often

_lock = threading.Lock()
_thread: threading.Thread | None = None
_stop = threading.Event()
_wake = threading.Event()
_running = False  # set and cleared under _lock: a wake-up is never lost to a thread ending
_flush: Callable[[], object] = lambda: None  # noqa: E731 (set by the first queue_watch)


def queue_watch(flush: Callable[[], object]) -> None:
    """Have a thread of this process deliver the queue now with `flush` (the journal's,
    raising AnkiUnavailable while Anki is away): wake it, or start one."""
    global _thread, _running, _flush
    with _lock:
        _flush = flush
        _wake.set()
        if _running:
            return
        _running = True
        _stop.clear()
        _thread = threading.Thread(target=_watch, name="anki-queue", daemon=True)
        _thread.start()


def queue_watch_stop(timeout: float = 10) -> None:
    """Stop the thread (tests; a process that shuts down may simply exit)."""
    _stop.set()
    _wake.set()
    thread = _thread
    if thread is not None:
        thread.join(timeout)


def _finished() -> bool:
    """True (and the thread is over) unless a wake-up came in meanwhile."""
    global _running
    with _lock:
        if _wake.is_set() and not _stop.is_set():
            return False
        _running = False
        return True


def _watch() -> None:
    global _running
    try:
        while not _stop.is_set():
            _wake.clear()
            close_old_connections()
            if not ledger.notes_waiting():
                if _finished():
                    return
                continue
            pause = settings.ANKI_WAIT_POLL
            try:
                outcome = _flush()
                logger.info("delivered the queue: %s", outcome)
            except AnkiUnavailable:
                pass
            except DomainError as exc:
                logger.warning("the queue waits: %s", exc.message)
                pause = max(pause, ERROR_PAUSE)
            _wake.wait(pause)
    except Exception:
        logger.exception("the Anki queue thread stopped")
    finally:
        with _lock:
            _running = False
        connection.close()
