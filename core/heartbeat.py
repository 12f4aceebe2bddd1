"""A lease kept alive while a block of work runs: `renew` called every `interval` seconds on
a thread of its own (a daemon: it dies with its holder, and so does the lease), its
database connection closed when it stops."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.db import connection

logger = logging.getLogger(__name__)


class Heartbeat:
    """`with Heartbeat(renew, interval=…, name=…):` — `renew()` every `interval` seconds
    until the block ends; a failing renewal is logged and ends the beats (the lease lapses,
    as a dead holder's would)."""

    def __init__(self, renew: Callable[[], object], *, interval: float, name: str) -> None:
        self.renew, self.interval, self.name = renew, interval, name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=name, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                self.renew()
        except Exception:
            logger.exception("%s failed", self.name)
        finally:
            connection.close()
