"""MCP overhead: the hub beside a minimal server on the same SDK doing the same work.

    .venv/bin/python bench/mcp_overhead.py [--calls 1000] [--profile DIR]

Both servers are spawned over stdio in the same run, each with one SDK client session:
`manage.py runmcp` (every app) and `bench/minimal_server.py` (two plain SDK tools, no
Django). Each gets `--calls` sequential `greet` calls and as many `get_problem` calls
against the same local HTTP/1.1 keep-alive stub of the online-judge API (the LeetCode
"Two Sum" body): GET, validate, upsert into SQLite, render Markdown. Both answers are
checked to be the same text. Calls go in blocks of 100 that alternate between the two
servers, so a change of machine load touches both alike. Prints p50/p95 per tool and
server and the ratio hub / minimal. Targets (issue 10): greet ≤ 1.15×, get_problem ≤ 1.3×.

The hub uses DATABASE_URL when it is set, else a scratch SQLite file (migrated first).
`--profile DIR` runs both servers under cProfile (all threads; `bench/profiled.py`),
writes DIR/hub.prof and DIR/minimal.prof and prints the hub's costliest functions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.common import MANAGE, PYTHON, ROOT, percentile, print_table
from bench.ojclient import Handler

TARGETS = {"greet": 1.15, "get_problem": 1.3}
CALLS: dict[str, Callable[[int], dict[str, Any]]] = {
    "greet": lambda i: {"name": f"Алиса {i}"},
    "get_problem": lambda i: {"source": "leetcode", "id": "1"},
}
BLOCK = 100
WARM_UP = 20
SERVERS = ("minimal", "hub")
LABELS = {"minimal": "minimal (same SDK, same work)", "hub": "tool hub (manage.py runmcp)"}


def server_params(
    name: str, base_url: str, scratch: Path, env: dict[str, str], profile: Path | None
) -> StdioServerParameters:
    if name == "hub":
        script = [MANAGE, "runmcp", "--oj-base-url", base_url, "--oj-token", "bench"]
    else:
        script = [str(ROOT / "bench" / "minimal_server.py"), base_url, str(scratch / "min.db")]
    if profile is not None:
        script = [str(ROOT / "bench" / "profiled.py"), str(profile / f"{name}.prof"), *script]
    return StdioServerParameters(command=PYTHON, args=script, cwd=str(ROOT), env=env)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result
    return "".join(getattr(block, "text", "") for block in result.content)


async def warm_up(clients: dict[str, Client]) -> None:
    """Imports, connections and caches warm on both sides; the two answers must agree."""
    for tool, arguments in CALLS.items():
        answers = {}
        for name, client in clients.items():
            for i in range(WARM_UP):
                answers[name] = await call(client, tool, arguments(i))
        if answers["hub"] != answers["minimal"]:
            raise SystemExit(f"{tool}: the two servers answer differently; not the same work")


async def measure(clients: dict[str, Client], calls: int) -> dict[tuple[str, str], list[float]]:
    samples: dict[tuple[str, str], list[float]] = {
        (tool, name): [] for tool in CALLS for name in clients
    }
    for tool, arguments in CALLS.items():
        for block, start in enumerate(range(0, calls, BLOCK)):
            order = SERVERS if block % 2 == 0 else SERVERS[::-1]
            for name in order:
                times = samples[(tool, name)]
                for i in range(start, min(start + BLOCK, calls)):
                    t0 = time.perf_counter()
                    await call(clients[name], tool, arguments(i))
                    times.append(time.perf_counter() - t0)
    return samples


async def run(
    calls: int, base_url: str, scratch: Path, env: dict[str, str], profile: Path | None
) -> dict[tuple[str, str], list[float]]:
    async with AsyncExitStack() as stack:
        clients = {}
        for name in SERVERS:
            params = server_params(name, base_url, scratch, env, profile)
            clients[name] = await stack.enter_async_context(Client(params, read_timeout_seconds=60))
        await warm_up(clients)
        return await measure(clients, calls)


def rows(samples: dict[tuple[str, str], list[float]]) -> list[list[str]]:
    table = []
    for tool in CALLS:
        floor = percentile(samples[(tool, "minimal")], 50)
        for name in SERVERS:
            times = samples[(tool, name)]
            p50 = percentile(times, 50)
            hub = name == "hub"
            table.append(
                [
                    tool,
                    LABELS[name],
                    str(len(times)),
                    f"{p50 * 1000:.2f}",
                    f"{percentile(times, 95) * 1000:.2f}",
                    f"{len(times) / sum(times):.0f}",
                    f"{p50 / floor:.2f}×" if hub else "",
                    f"≤ {TARGETS[tool]}×" if hub else "",
                ]
            )
    return table


def profile_summary(path: Path) -> None:
    print(f"\nHub profile ({path}), by own time:")
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per tool and server")
    parser.add_argument("--profile", type=Path, help="run the servers under cProfile into DIR")
    options = parser.parse_args()
    if options.profile is not None:
        options.profile.mkdir(parents=True, exist_ok=True)
    backend = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{backend.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as directory:
        scratch = Path(directory)
        env = {**os.environ, "DJANGO_LOG_LEVEL": "WARNING"}
        env.setdefault("DATABASE_URL", f"sqlite:///{scratch / 'hub.db'}")
        migrate = [PYTHON, MANAGE, "migrate", "--noinput", "--verbosity", "0"]
        subprocess.run(migrate, cwd=ROOT, env=env, check=True)
        samples = asyncio.run(run(options.calls, base_url, scratch, env, options.profile))
    backend.shutdown()
    database = "PostgreSQL" if "postgres" in env["DATABASE_URL"] else "SQLite"
    print(
        f"MCP overhead over stdio: {options.calls} sequential calls per tool and server, "
        f"in alternating blocks of {BLOCK}; hub database: {database}"
        + (" (under cProfile: times inflated)" if options.profile else "")
        + "\n"
    )
    header = ["tool", "server", "calls", "p50 ms", "p95 ms", "calls/s", "ratio p50", "target"]
    print_table(header, rows(samples))
    if options.profile is not None:
        profile_summary(options.profile / "hub.prof")


if __name__ == "__main__":
    main()
