"""MCP overhead: 1,000 `greet` calls over stdio and over streamable HTTP.

    .venv/bin/python bench/mcp_overhead.py [--calls 1000]

Prints p50/p95/p99 latency and calls per second, one row per transport. Each transport
gets one client session; calls are sequential (latency, not throughput under load).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.common import (
    LATENCY_HEADER,
    MANAGE,
    PYTHON,
    ROOT,
    free_port,
    latency_row,
    print_table,
    start_http_server,
)


async def measure(client: Client, calls: int) -> tuple[list[float], float]:
    await client.call_tool("greet", {"name": "warm-up"})
    samples = []
    started = time.perf_counter()
    for i in range(calls):
        t0 = time.perf_counter()
        result = await client.call_tool("greet", {"name": f"Алиса {i}"})
        samples.append(time.perf_counter() - t0)
        assert not result.is_error
    return samples, time.perf_counter() - started


async def bench_stdio(calls: int) -> list[str]:
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp"], cwd=str(ROOT), env=dict(os.environ)
    )
    async with Client(params, read_timeout_seconds=60) as client:
        samples, wall = await measure(client, calls)
    return latency_row("stdio", samples, wall)


async def bench_http(calls: int) -> list[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [PYTHON, MANAGE, "runmcp", "--transport", "http", "--port", str(port)]
    server = start_http_server(args, url)
    try:
        transport = streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=30))
        async with Client(transport, read_timeout_seconds=60) as client:
            samples, wall = await measure(client, calls)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return latency_row("streamable HTTP", samples, wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    calls = parser.parse_args().calls
    rows = [asyncio.run(bench_stdio(calls)), asyncio.run(bench_http(calls))]
    print(f"MCP overhead: {calls} sequential greet calls per transport, one session each\n")
    print_table(LATENCY_HEADER, rows)


if __name__ == "__main__":
    main()
