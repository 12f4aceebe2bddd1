"""A newcomer's first launch: the installed package, spawned by a desktop client.

    .venv/bin/python bench/first_launch.py [--runs 5]

The wheel is built and installed in a fresh venv (bench/wheel.py: `python -m build`,
`pip install --no-deps`, dependencies lent by this environment, no checkout on the path).
Each run spawns `tool-hub mcp` from an unrelated directory on a fresh data directory
(XDG_DATA_HOME: the embedded database does not exist yet, so it is created, migrated and
given the sample norms before the first call) and times, from spawn, the answers a client
waits on: `initialize`, `tools/list` and a first tool call that reads the database
(`normagpt_search_norms`). Beside it, in the same run: the same package on its data
directory once made (a later session), and the bare SDK server (bench/minimal_server.py,
greet) as the floor. Target (issue 28): `initialize` ≤ 5 s after spawn on fresh data.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import PYTHON, ROOT, percentile, print_table
from bench.mcp_raw import START_UP_STEPS, start_up
from bench.wheel import wheel_install

SEARCH = ("normagpt_search_norms", {"keywords": ["защитный слой бетона"]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="launches of each kind")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="bench-first-launch-") as directory:
        base = Path(directory)
        tool_hub = wheel_install(base / "wheel") / "tool-hub"
        elsewhere = base / "elsewhere"
        elsewhere.mkdir()
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("DATABASE_URL", "REDIS_URL", "PYTHONPATH", "TOOL_HUB_DATA_DIR",
                              "TOOL_HUB_ENV_FILE", "DJANGO_SETTINGS_MODULE")}  # fmt: skip
        minimal = [PYTHON, str(ROOT / "bench" / "minimal_server.py"), "http://127.0.0.1:9",
                   str(base / "minimal.db")]  # fmt: skip
        later = {**clean, "XDG_DATA_HOME": str(base / "kept")}
        start_up([str(tool_hub), "mcp"], later, SEARCH, elsewhere)  # makes the kept data
        samples: dict[str, list[list[float]]] = {
            "bare SDK server (greet)": [],
            "tool-hub mcp, fresh data directory": [],
            "tool-hub mcp, data directory made": [],
        }
        for run in range(runs):
            samples["bare SDK server (greet)"].append(start_up(minimal, clean))
            fresh = {**clean, "XDG_DATA_HOME": str(base / f"fresh-{run}")}
            kinds = (("fresh data directory", fresh), ("data directory made", later))
            for name, env in kinds:
                times = start_up([str(tool_hub), "mcp"], env, SEARCH, elsewhere)
                samples[f"tool-hub mcp, {name}"].append(times)
            if not (base / f"fresh-{run}" / "tool-hub" / "db.sqlite3").is_file():
                raise SystemExit("the fresh launch made no database in its data directory")
    rows = []
    for name, launches in samples.items():
        medians = [percentile([launch[i] for launch in launches], 50) for i in range(3)]
        worst = max(launch[0] for launch in launches)
        rows.append([name, str(len(launches)), *(f"{m:.3f}" for m in medians), f"{worst:.3f}"])
    print(
        f"First launch of the installed package over stdio (raw JSON lines), seconds from "
        f"spawn, median of {runs}; each request sent when the one before is answered; the "
        "first call of tool-hub reads the database (normagpt_search_norms). Target: "
        "initialize ≤ 5 s on a fresh data directory.\n"
    )
    print_table(["launch", "runs", *(f"{s} s" for s in START_UP_STEPS), "worst initialize s"], rows)


if __name__ == "__main__":
    main()
