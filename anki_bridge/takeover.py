"""Any call of a new session takes over what a dead sender left (issue 52, item 4).

`runmcp` looks once as it starts (`ToolRegistry.on_serve`); a server that runs on (the web
process's /mcp, a server started before another died) looks again at its Anki calls, at
most once per ANKI_TAKEOVER_CHECK_SECONDS per process: a look costs two small queries, and
the delivery it starts runs in the background, so no call waits for Anki because of it.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings

from anki_bridge.journal import notes_takeover

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_looked = -float("inf")  # monotonic time of this process's last look
_lock = threading.Lock()


def notes_takeover_due() -> None:
    """`journal.notes_takeover`, unless this process looked in the last
    ANKI_TAKEOVER_CHECK_SECONDS; never raises (a call must not fail for it)."""
    global _looked
    now = time.monotonic()
    with _lock:
        if now - _looked < settings.ANKI_TAKEOVER_CHECK_SECONDS:
            return
        _looked = now
    try:
        notes_takeover()
    except Exception:
        logger.exception("the look for notes a dead sender left failed")


def taking_over(fn: F) -> F:
    """`fn` (a tool) preceded by `notes_takeover_due`."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        notes_takeover_due()
        return fn(*args, **kwargs)

    return call  # type: ignore[return-value]
