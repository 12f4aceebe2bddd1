"""Helpers shared by the benchmarks: latency statistics and a plain-text table."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
MANAGE = str(ROOT / "manage.py")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def latency_row(name: str, samples: list[float], wall: float) -> list[str]:
    """name, calls, p50/p95/p99 in ms, mean, calls per second."""
    ms = [s * 1000 for s in samples]
    return [
        name,
        str(len(samples)),
        f"{percentile(ms, 50):.2f}",
        f"{percentile(ms, 95):.2f}",
        f"{percentile(ms, 99):.2f}",
        f"{statistics.fmean(ms):.2f}",
        f"{len(samples) / wall:.0f}",
    ]


LATENCY_HEADER = ["transport", "calls", "p50 ms", "p95 ms", "p99 ms", "mean ms", "calls/s"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` and its threads so far, those ended too
    (/proc, in clock ticks: 10 ms steps, fine for many calls, not for one)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_threads(pid: int) -> dict[int, int]:
    """Nanoseconds each live thread of process `pid` has run (/proc …/schedstat): fine
    enough for one call. A thread that ends between two readings takes its time with it."""
    ran = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            ran[int(task.name)] = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended while read
    return ran


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))


def celery_worker_command(name: str, *extra: str) -> list[str]:
    """A lean solo-pool Celery worker of this project (one task at a time, its own process)."""
    return [
        PYTHON, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "-n", f"{name}@%h",
        "--without-heartbeat", "--without-gossip", "--without-mingle", *extra,
    ]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server(args: list[str], url: str) -> subprocess.Popen[bytes]:
    """Start a server process and wait until `url` answers."""
    proc = subprocess.Popen(args, cwd=ROOT, env=dict(os.environ), stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"server at {url} did not start")
