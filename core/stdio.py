"""Keep stdout clean for the MCP stdio protocol.

From the moment `manage.py runmcp` starts, file descriptor 1 points at stderr, so that a
print or warning while Django and the apps load cannot reach the client. Just before the
SDK takes over stdio, the wire is given back; the SDK then diverts descriptor 1 again for
as long as it serves, and `stdout_to_stderr` keeps Python's own `sys.stdout` off the wire.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

_wire_fd: int | None = None


def runmcp_transport(argv: list[str]) -> str | None:
    """The transport `argv` serves MCP on ("stdio", "http"); None for anything else."""
    if len(argv) < 2 or argv[1] != "runmcp":
        return None
    args = argv[2:]
    if {"--list", "--write-catalog", "--help", "-h"} & set(args):
        return None
    transports = [a.split("=", 1)[1] for a in args if a.startswith("--transport=")]
    transports += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--transport"]
    return transports[-1] if transports else "stdio"


def wants_stdio(argv: list[str]) -> bool:
    """True when `argv` runs `runmcp` on the stdio transport (not `--list`, not HTTP)."""
    return runmcp_transport(argv) == "stdio"


def use_system_allocator(argv: list[str]) -> None:
    """Re-execute a long-lived HTTP server on the C allocator (`PYTHONMALLOC=malloc`).

    Python's own allocator keeps the memory of freed objects in arenas that one surviving
    object pins; after a wave of abandoned MCP sessions expires, the resident size would
    stay at the wave's peak. On the C allocator the periodic trim in `core.mcp_http`
    gives it back. An explicit PYTHONMALLOC is left alone.
    """
    if runmcp_transport(argv) == "http" and "PYTHONMALLOC" not in os.environ:
        os.environ["PYTHONMALLOC"] = "malloc"
        os.execv(sys.executable, [sys.executable, *argv])  # noqa: S606 (same program)


def divert_stdout() -> None:
    """Point descriptor 1 at stderr, keeping a private duplicate of the real stdout."""
    global _wire_fd
    if _wire_fd is not None:
        return
    sys.stdout.flush()
    _wire_fd = os.dup(1)
    os.dup2(2, 1)


def restore_stdout() -> None:
    """Give descriptor 1 back to the wire (no-op when it was never diverted)."""
    global _wire_fd
    if _wire_fd is None:
        return
    sys.stdout.flush()  # what was printed so far goes to stderr, where fd 1 still points
    os.dup2(_wire_fd, 1)
    os.close(_wire_fd)
    _wire_fd = None


@asynccontextmanager
async def stdout_to_stderr(_: Any) -> AsyncIterator[None]:
    """Server lifespan: Python-level writes to stdout go to stderr while serving.

    The SDK points descriptor 1 at stderr while it serves; this also keeps text buffered
    in `sys.stdout` from being flushed onto the wire when the process exits.
    """
    sys.stdout.flush()
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        yield
    finally:
        sys.stdout = saved


def take_wire() -> BinaryIO:
    """The protocol's stdout: the private duplicate of descriptor 1 kept by `divert_stdout`.

    Descriptor 1 itself keeps pointing at stderr for the whole life of the server, so that
    nothing but protocol lines can reach the client (a print, a C library, a child process).
    Without a diversion (a caller that did not go through manage.py) a duplicate is taken.
    """
    global _wire_fd
    divert_stdout()  # no-op when manage.py already diverted descriptor 1
    fd, _wire_fd = _wire_fd, None
    if fd is None:
        raise RuntimeError("the stdout wire was already taken")
    return os.fdopen(fd, "wb", buffering=0)


def write_all(wire: BinaryIO, data: bytes) -> None:
    """Write every byte of `data` to the unbuffered `wire` (a raw write may take only part
    of a long line: a pipe's writer can be interrupted)."""
    view = memoryview(data)
    while view:
        view = view[wire.write(view) or 0 :]
