"""A new MCP process's first search, for `bench/problems.py --start`: `manage.py runmcp`
spawned over stdio and driven by a raw JSON-RPC client at a number of stored problems,
beside the floor (the candidates' SQL and score alone) and a naive client's baseline.
Imported once Django is set up (`bench/problems.py` sets it up)."""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

from bench.common import ROOT, print_table
from bench.damage import damage_kept, holds_every
from bench.problems_site import MATH, populate
from problems import matching
from problems.models import Problem
from tests.problems.fake_site import FakeSite, serve


def process_start(
    blocks: dict[str, str], conditions: dict[str, str], size: int, calls: int
) -> list[str]:
    """A new `manage.py runmcp` process over stdio, driven by a raw JSON-RPC client, at
    `size` stored problems: its start (spawn → `initialize` answered), its first search and
    the next ones (damaged queries of stored problems; the stand-in site answers in 100 ms
    when asked), its resident memory after them. The baseline: a fresh connection reading
    every stored row and scoring them with rapidfuzz, as a naive client would."""
    fake = FakeSite(latency=0.1, search_engine=True)
    server, template = serve(fake)
    populate(blocks, conditions, size, fake)
    fake.search("math-ege", "найдите площадь", 1)  # the stand-in reads its blocks' words once
    env = {
        **os.environ,
        "SDAMGIA_URL_TEMPLATE": template,
        "SDAMGIA_MIN_INTERVAL": "0",
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    rng = random.Random(size)
    queries = [damage_kept(conditions[rng.choice(sorted(conditions))], rng) for _ in range(calls)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "runmcp", "--apps", "problems"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = _RawStdio(proc)
    client.call("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    })  # fmt: skip
    start = time.perf_counter() - started
    client.notify("notifications/initialized")
    walls, hits, asked, first_asked = _searches(client, queries)
    rss_kb = _rss_kb(proc.pid)
    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait(timeout=30)
    server.shutdown()
    naive = _naive_first_search(queries[0][0])
    floor = _floor_first_search(queries[0][0])
    return [
        f"{size:,}",
        f"{start:.2f} s",
        f"{walls[0]:.2f} s" + (" (site asked)" if first_asked else ""),
        f"{statistics.median(walls[1:]) * 1000:.0f} ms" if len(walls) > 1 else "-",
        f"{asked}/{calls}",
        f"{hits}/{calls}",
        f"{rss_kb / 1024:.0f} MB",
        f"{floor * 1000:.0f} ms",
        f"{naive:.2f} s",
    ]


def _searches(
    client: _RawStdio, queries: list[tuple[str, list[str]]]
) -> tuple[list[float], int, int, bool]:
    """Each query one `sdamgia_search_by_text` call: the seconds of each, the calls whose
    first match holds the query's kept words, the calls that asked the site, and whether
    the first did."""
    walls, hits, asked, first_asked = [], 0, 0, False
    for query, kept in queries:
        t0 = time.perf_counter()
        reply = client.call("tools/call", {
            "name": "sdamgia_search_by_text",
            "arguments": {
                "condition_text": query[:1000], "subject": "math", "limit": 5,
                "response_format": "json",
            },
        })  # fmt: skip
        walls.append(time.perf_counter() - t0)
        if reply["result"].get("isError"):
            raise SystemExit(f"sdamgia_search_by_text failed: {reply['result']['content']}")
        answer = reply["result"].get("structuredContent") or {}
        matches = answer.get("matches") or []
        first = _condition(matches[0]["id"]) if matches else ""
        hits += holds_every(first, kept)
        asked += bool(answer.get("site_asked", True))
        first_asked = first_asked if len(walls) > 1 else bool(answer.get("site_asked", True))
    return walls, hits, asked, first_asked


class _RawStdio:
    """JSON-RPC over a process's stdin/stdout, one line each way, as any MCP client sends."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0

    def notify(self, method: str, params: dict | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit(f"the MCP server exited before answering {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def _send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]


def _condition(problem_id: str) -> str:
    row = Problem.objects.filter(subject=MATH.subject, exam=MATH.exam, problem_id=problem_id)
    return row.values_list("condition_text", flat=True).first() or ""


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _floor_first_search(query: str) -> float:
    """The floor: the candidates' SQL and their exact score alone, over a new connection."""
    from problems import index

    connection.close()
    started = time.perf_counter()
    index.search(MATH, matching.Query.from_text(query), threshold=0, limit=5)
    return time.perf_counter() - started


def _naive_first_search(query: str) -> float:
    """Every stored row read over a new connection and scored by rapidfuzz (top 5)."""
    from rapidfuzz import fuzz, process

    connection.close()
    started = time.perf_counter()
    texts = list(
        Problem.objects.filter(subject=MATH.subject, exam=MATH.exam).values_list(
            "search_text", flat=True
        )
    )
    process.extract(matching.normalize(query), texts, scorer=fuzz.token_set_ratio, limit=5)
    return time.perf_counter() - started


def print_start(blocks: dict[str, str], conditions: dict[str, str], quick: bool) -> None:
    print(
        "\n6. A new process: `manage.py runmcp` over stdio (a raw JSON-RPC client), its "
        "first sdamgia_search_by_text and the next ones; damaged queries of stored problems; "
        "the site answers in 100 ms when asked\n"
    )
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 50_000, 200_000]
    rows = [process_start(blocks, conditions, size, 5 if quick else 10) for size in sizes]
    print_table(
        ["stored", "start", "first search", "next (p50)", "site asked", "top-1",
         "memory (RSS)", "floor: candidates' SQL + score", "baseline: read all + rapidfuzz"],
        rows,
    )  # fmt: skip
    base = int(rows[0][6].split()[0])
    for row in rows[1:]:
        grown = (int(row[6].split()[0]) - base) * 1024 / (int(row[0].replace(",", "")) - 1_000)
        print(f"memory grown past 1,000 stored, per stored problem at {row[0]}: {grown:.2f} KB")
