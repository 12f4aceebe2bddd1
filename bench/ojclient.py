"""Online-judge tools: 1,000 `get_problem` calls over stdio against a local backend.

    .venv/bin/python bench/ojclient.py [--calls 1000]

`manage.py runmcp --apps ojclient` is spawned with `--oj-base-url` pointing at a local
HTTP/1.1 keep-alive backend that answers the LeetCode "Two Sum" body. Each call goes
client → stdio → tool → HTTP → store in the database → Markdown. For scale, the same
session also times `get_problem` served as a stored copy (the backend answers 503) and a call
that fails validation (no HTTP, no database). Uses DATABASE_URL (default: the SQLite file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.common import LATENCY_HEADER, MANAGE, PYTHON, ROOT, latency_row, print_table

BODY = (ROOT / "tests" / "ojclient" / "fixtures" / "problem_leetcode_1.json").read_bytes()


DOWN = b'{"type": "about:blank", "title": "Service Unavailable", "status": 503}'


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms ACK delay
    down = False

    def do_GET(self) -> None:
        body = DOWN if self.down else BODY
        self.send_response(503 if self.down else 200)
        self.send_header(
            "Content-Type", "application/problem+json" if self.down else "application/json"
        )
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


async def measure(
    client: Client, calls: int, arguments: dict[str, str], *, error: bool
) -> tuple[list[float], float]:
    await client.call_tool("get_problem", arguments)
    samples = []
    started = time.perf_counter()
    for _ in range(calls):
        t0 = time.perf_counter()
        result = await client.call_tool("get_problem", arguments)
        samples.append(time.perf_counter() - t0)
        assert bool(result.is_error) is error, result
    return samples, time.perf_counter() - started


async def run(calls: int) -> list[list[str]]:
    backend = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{backend.server_address[1]}"
    env = {**os.environ, "LOG_LEVEL": "WARNING"}
    params = StdioServerParameters(
        command=PYTHON,
        args=[
            MANAGE,
            "runmcp",
            "--apps",
            "ojclient",
            "--oj-base-url",
            base_url,
            "--oj-token",
            "bench",
        ],
        cwd=str(ROOT),
        env=env,
    )
    rows = []
    async with Client(params, read_timeout_seconds=60) as client:
        samples, wall = await measure(client, calls, {"source": "leetcode", "id": "1"}, error=False)
        rows.append(latency_row("get_problem: HTTP, store, Markdown", samples, wall))
        samples, wall = await measure(client, calls, {"source": " ", "id": "1"}, error=True)
        rows.append(latency_row("validation error (no HTTP)", samples, wall))
        Handler.down = True
        samples, wall = await measure(client, calls, {"source": "leetcode", "id": "1"}, error=False)
        rows.append(latency_row("stored copy (API answers 503)", samples, wall))
    backend.shutdown()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    calls = parser.parse_args().calls
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    database = json.dumps(os.environ.get("DATABASE_URL", "sqlite (default)"))
    rows = asyncio.run(run(calls))
    print(f"ojclient: {calls} sequential get_problem calls over stdio; database {database}\n")
    print_table(LATENCY_HEADER, rows)


if __name__ == "__main__":
    main()
