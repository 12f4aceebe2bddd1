"""Scaling out (issue 15): MCP over HTTP across processes, and the crawl across workers.

    .venv/bin/python bench/scale.py [--only mcp|crawl] [--calls 1000] [--sessions 4]

mcp: uvicorn processes of the project's ASGI app (`MCP_HTTP_STATELESS=1`, one database)
behind `tests/rr_proxy.py`, the round-robin proxy that sends each request to the next
process. `--sessions` SDK clients at once (streamable HTTP, the `initialize` handshake:
the clients that need the stateless mode) share `--calls` `greet` calls; each first warms
up. Rows, measured in the same run: one process addressed directly (the baseline, no
proxy), then through the proxy to one process and to two. Columns: latency per call,
calls per second, and the CPU time per call of the web processes, the proxy and the
clients, which all share this machine's CPUs: "CPU ceiling" is the rate at which they
would all be busy (CPUs / all CPU ms per call). A rate near it says the machine, not the
deployment, is the limit.

crawl: `bench/scale_crawl.py` (needs REDIS_URL).

Uses a temporary SQLite database unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TMP = Path(tempfile.mkdtemp(prefix="bench-scale-"))
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/bench.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
import httpx2  # noqa: E402
from django.core.management import call_command  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from bench.common import LATENCY_HEADER, PYTHON, free_port, latency_row, print_table  # noqa: E402
from bench.scale_crawl import crawl_bench  # noqa: E402
from tests.rr_proxy import STATS_PATH  # noqa: E402

WARM_UP = 10  # calls per session before the clock starts


@contextmanager
def started(args: list[str], url: str, **env: str) -> Iterator[int]:
    """A process of this project, running until the block ends (which gets its pid); `url`
    answers first."""
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(url, proc)
        yield proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User and system CPU time `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"the process for {url} did not answer (exit code {proc.poll()})")


def web_process(port: int) -> AbstractContextManager[int]:
    args = [PYTHON, "-m", "uvicorn", "config.asgi:application", "--port", str(port),
            "--log-level", "warning", "--no-access-log"]  # fmt: skip
    return started(args, f"http://127.0.0.1:{port}/healthz", MCP_HTTP_STATELESS="1")


def proxy(port: int, backends: list[int]) -> AbstractContextManager[int]:
    targets = [arg for backend in backends for arg in ("--backend", f"http://127.0.0.1:{backend}")]
    args = [PYTHON, "-m", "tests.rr_proxy", "--port", str(port), *targets]
    return started(args, f"http://127.0.0.1:{port}{STATS_PATH}")


async def greet(client: Client, i: int) -> None:
    result = await client.call_tool("greet", {"name": f"Алиса {i}"})
    if result.is_error:
        raise SystemExit(f"greet failed: {result.content}")


@dataclass
class Measured:
    samples: list[float]
    wall: float
    cpu: dict[str, float]  # CPU seconds spent by role: "web", "proxy", "clients"

    def row(self, name: str) -> list[str]:
        calls = len(self.samples)
        per_call = {role: seconds * 1000 / calls for role, seconds in self.cpu.items()}
        ceiling = (os.cpu_count() or 1) * 1000 / sum(per_call.values())
        return [
            *latency_row(name, self.samples, self.wall),
            *(f"{per_call[r]:.2f}" if r in per_call else "-" for r in ("web", "proxy", "clients")),
            f"{ceiling:.0f}",
        ]


async def load(url: str, calls: int, sessions: int, roles: dict[str, list[int]]) -> Measured:
    """`calls` greet calls shared by `sessions` clients at once, after a warm-up: latencies,
    wall time, and the CPU time each role's processes (`roles`: pids) spent meanwhile."""
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(sessions):
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
            transport = streamable_http_client(url, http_client=http)
            client = Client(transport, read_timeout_seconds=60, mode="legacy")
            clients.append(await stack.enter_async_context(client))
        samples: list[float] = []

        async def run(client: Client, share: range) -> None:
            for i in share:
                t0 = time.perf_counter()
                await greet(client, i)
                samples.append(time.perf_counter() - t0)

        await asyncio.gather(*(run(c, range(WARM_UP)) for c in clients))
        samples.clear()
        before = cpu_by_role(roles)
        started_at = time.perf_counter()
        await asyncio.gather(*(run(c, range(n, calls, sessions)) for n, c in enumerate(clients)))
        wall = time.perf_counter() - started_at
        after = cpu_by_role(roles)
        return Measured(samples, wall, {role: after[role] - before[role] for role in after})


def cpu_by_role(roles: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds used so far by each role's processes, and by this one ("clients")."""
    used = {role: sum(map(cpu_seconds, pids)) for role, pids in roles.items()}
    return {**used, "clients": time.process_time()}


def mcp_bench(calls: int, sessions: int) -> None:
    """Print the table of calls per second: direct, and through the proxy to 1 and 2."""
    call_command("migrate", verbosity=0)
    ports = [free_port(), free_port()]
    rows = []
    with web_process(ports[0]) as first, web_process(ports[1]) as second:
        web = [first, second]
        direct = asyncio.run(
            load(f"http://127.0.0.1:{ports[0]}/mcp", calls, sessions, {"web": web})
        )
        rows.append(direct.row("1 process, direct"))
        for count in (1, 2):
            port = free_port()
            with proxy(port, ports[:count]) as proxy_pid:
                roles = {"web": web, "proxy": [proxy_pid]}
                measured = asyncio.run(load(f"http://127.0.0.1:{port}/mcp", calls, sessions, roles))
                served = httpx.get(f"http://127.0.0.1:{port}{STATS_PATH}").json()
            if 0 in served.values():
                raise SystemExit(f"a process got no request: {served}")
            rows.append(
                measured.row(f"{count} process{'es' if count > 1 else ''}, round-robin proxy")
            )
    database = "PostgreSQL" if "postgres" in os.environ["DATABASE_URL"] else "SQLite"
    print(
        f"MCP over streamable HTTP across processes (MCP_HTTP_STATELESS=1): {calls} greet "
        f"calls from {sessions} handshake-era client sessions at once; database: {database}.\n"
        f"CPU ms per call, summed over each role's processes, which share {os.cpu_count()} CPUs; "
        "CPU ceiling: the rate at which all of them would be busy\n"
    )
    header = [
        "deployment", *LATENCY_HEADER[1:], "web CPU ms", "proxy CPU ms", "client CPU ms",
        "CPU ceiling calls/s",
    ]  # fmt: skip
    print_table(header, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", choices=["mcp", "crawl"], help="one of the measurements")
    parser.add_argument("--calls", type=int, default=1000, help="MCP calls per deployment")
    parser.add_argument("--sessions", type=int, default=4, help="MCP client sessions at once")
    options = parser.parse_args()
    if options.only in (None, "mcp"):
        mcp_bench(options.calls, options.sessions)
    if options.only in (None, "crawl"):
        crawl_bench()


if __name__ == "__main__":
    main()
