"""Who holds a lease: a name for this process that another process on the same host can
check at once — the holder runs while its pid does with the same start time.

A lease held by a process that was killed (SIGKILL, a crash, a closed desktop client)
then never has to run out: whoever finds it takes the rows over. A holder on another host
cannot be checked from here; its lease is short and renewed while it works, so it lapses
soon after the holder stops.
"""

from __future__ import annotations

import os
import signal
import socket
import uuid
from pathlib import Path
from types import FrameType

HOST = socket.gethostname()[:30]
_PROC = Path("/proc")


def _started(pid: int) -> str | None:
    """The process's start time (clock ticks since boot): "" when no such process runs
    (or it is a zombie), None when this system cannot tell (no /proc)."""
    if not _PROC.is_dir():
        return None
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return "" if fields[0] in ("Z", "X") else fields[19]


def holder_token() -> str:
    """A new lease token naming this process: host:pid:start:unique."""
    pid = os.getpid()
    return f"{HOST}:{pid}:{_started(pid) or 0}:{uuid.uuid4().hex[:12]}"


def holder_gone(token: str) -> bool:
    """Whether the token's holder is a process of this host that no longer runs (False when
    it runs, runs elsewhere, or the token names no process)."""
    parts = token.split(":")
    if len(parts) != 4 or parts[0] != HOST or not parts[1].isdigit():
        return False
    pid, started = int(parts[1]), parts[2]
    now = _started(pid)
    if now is None:  # no /proc: whether the pid exists at all
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    return now == "" or (started != "0" and now != started)  # gone, or its pid reused


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP (a client stopping its server, a closed terminal) end this
    process as an exit does — `atexit` runs and leases are released — not as a kill.
    Call from the main thread."""

    def leave(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, leave)
