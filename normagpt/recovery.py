"""Runs whose advancer died are taken over within seconds, by whoever is alive.

A run's lease (NORMAGPT_RUN_LEASE_SECONDS) is renewed by its advancer's heartbeat; once it
lapses the advancer is taken for dead. Every process that can advance runs keeps a
sweeper thread (`sweeper_start`): each Celery worker (started when it is ready), and —
with no broker — each web or MCP process, which then advances runs itself, so a restarted
process resumes its runs. Every half lease the sweeper starts each stalled run again
(`services.runs_recover`); a start that finds the lease held waits for it to lapse
(`runner.run_advance`), and only one advancer can hold it. Beat's `runs_recover` stays a
safety net. Reading a run never starts it. The same sweep marks failed an ingestion whose
process stopped (`normagpt.ingest.lease`); starting it again is a person's decision. A
sweeper also keeps alive the runs waiting on its process's own pool, so no run waiting for
a worker or its turn is taken for a stalled one (`normagpt.turns`).
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

_started = threading.Lock()
_thread: threading.Thread | None = None


def sweep_interval() -> float:
    return max(0.5, settings.NORMAGPT_RUN_LEASE_SECONDS / 2)


def sweeper_start() -> bool:
    """Start this process's sweeper thread (once); whether this call started it."""
    global _thread
    with _started:
        if _thread is not None and _thread.is_alive():
            return False
        _thread = threading.Thread(target=_sweep_forever, name="normagpt-sweeper", daemon=True)
        _thread.start()
        return True


def serving_process_start() -> None:
    """In a web or MCP process: with no broker it advances runs itself, so it sweeps too
    (a restarted process resumes its runs); with one, the workers do."""
    from core import background

    if not background.broker_available():
        sweeper_start()


def _sweep_forever() -> None:
    from normagpt import services, turns

    stop = threading.Event()
    while not stop.wait(sweep_interval()):
        try:
            turns.queued_keep_alive()  # this process's queue is alive: no run in it is lost
            services.runs_recover()
        except Exception:  # a database hiccup: the next sweep tries again
            logger.exception("sweeping stalled runs failed")
        finally:
            connection.close()
