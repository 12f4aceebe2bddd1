"""A process's start-up without the cyclic garbage collector.

Loading the SDK, Django and the apps builds a few hundred thousand objects that live as
long as the process (modules, classes, pydantic's schemas, the URL and model registries).
The collector walks them again and again while they are made, and finds nothing to free:
a tenth of the start-up's CPU, paid by every process a desktop client, a worker host or
the test suite starts (`bench/mcp_overhead.py --start-ups`). Paused during start-up, then
what start-up made is frozen (`gc.freeze`: no collection walks it again) and collection
resumes for the process's own work.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The block run without cyclic garbage collection; what it made frozen after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
