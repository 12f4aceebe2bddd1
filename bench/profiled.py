"""Run a Python script under cProfile, every thread included, and save the stats on exit.

    python bench/profiled.py OUT.prof SCRIPT [ARGS...]

`python -m cProfile` sees only the main thread, but the MCP SDK runs sync tools on worker
threads: here each new thread gets a profiler of its own (`threading.setprofile`), and at
exit the main thread's and every worker's statistics are merged into OUT.prof.
"""

from __future__ import annotations

import atexit
import cProfile
import pstats
import runpy
import sys
import threading
from types import FrameType
from typing import Any

profilers: list[cProfile.Profile] = []


def thread_start(frame: FrameType, event: str, arg: Any) -> None:
    """The first profile event of a new thread: hand the thread to a profiler of its own."""
    sys.setprofile(None)
    profiler = cProfile.Profile()
    profilers.append(profiler)
    profiler.enable()


def save(path: str) -> None:
    for profiler in profilers:
        profiler.disable()
    stats = pstats.Stats(profilers[0])
    for profiler in profilers[1:]:
        if profiler.getstats():
            stats.add(profiler)
    stats.dump_stats(path)


def main() -> None:
    out, script, *args = sys.argv[1:]
    sys.argv = [script, *args]
    sys.path.insert(0, str(__import__("pathlib").Path(script).resolve().parent))
    atexit.register(save, out)
    threading.setprofile(thread_start)
    main_profiler = cProfile.Profile()
    profilers.append(main_profiler)
    main_profiler.enable()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
