"""Without a broker: a thread of this process delivers the queued notes once Anki is back.

With a broker the flush task does this (retried with backoff by Celery). Without one
(the embedded default: one machine, no worker) nothing else would: `queue_watch` starts,
at most once per process, a thread that flushes the journal, and while Anki stays away
asks it again every ANKI_WAIT_POLL seconds; it ends when nothing waits. Leases in the
journal keep two such threads (or a thread and a call) from delivering one note twice.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection

from anki_bridge import journal
from anki_bridge.exceptions import AnkiUnavailable
from core.exceptions import DomainError

logger = logging.getLogger(__name__)

ERROR_PAUSE = 60.0  # Anki answers but refuses us (a wrong key): ask again less often

_lock = threading.Lock()
_thread: threading.Thread | None = None
_stop = threading.Event()


def queue_watch() -> None:
    """Make sure a thread of this process is delivering the queue (start one if none runs)."""
    global _thread
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        _stop.clear()
        _thread = threading.Thread(target=_watch, name="anki-queue", daemon=True)
        _thread.start()


def queue_watch_stop(timeout: float = 10) -> None:
    """Stop the thread (tests; a process that shuts down may simply exit)."""
    _stop.set()
    thread = _thread
    if thread is not None:
        thread.join(timeout)


def _watch() -> None:
    try:
        while not _stop.is_set():
            close_old_connections()
            if not journal.notes_waiting():
                return
            pause = settings.ANKI_WAIT_POLL
            try:
                outcome = journal.notes_flush()
                logger.info("delivered the queue: %s", outcome)
            except AnkiUnavailable:
                pass
            except DomainError as exc:
                logger.warning("the queue waits: %s", exc.message)
                pause = max(pause, ERROR_PAUSE)
            _stop.wait(pause)
    except Exception:
        logger.exception("the Anki queue thread stopped")
    finally:
        connection.close()
