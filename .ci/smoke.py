"""Smoke run of the embedded default: fresh SQLite, no REDIS_URL.

Migrates, serves the ASGI app, expects /healthz 200, and calls `greet` over stdio.
Exits non-zero, saying what failed, on any failure.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def main() -> int:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    with tempfile.TemporaryDirectory() as tmp:
        if (ROOT / "db.sqlite3").exists():  # keep a developer's database untouched
            env["DATABASE_URL"] = f"sqlite:///{tmp}/db.sqlite3"
        try:
            run(["manage.py", "migrate", "--noinput"], env)
            check_healthz(env)
            asyncio.run(check_greet(env))
        finally:
            if "DATABASE_URL" not in env:
                for leftover in ROOT.glob("db.sqlite3*"):
                    leftover.unlink()
    print("smoke: 2 passed, 0 failed")
    return 0


def run(args: list[str], env: dict[str, str]) -> None:
    subprocess.run([PY, *args], cwd=ROOT, env=env, check=True, timeout=300)


def check_healthz(env: dict[str, str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [PY, "-m", "uvicorn", "config.asgi:application", "--port", str(port)]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
                    assert r.status == 200, f"/healthz answered {r.status}"
                    print(f"smoke: /healthz {r.status} {r.read().decode()}")
                    return
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=10)


async def check_greet(env: dict[str, str]) -> None:
    params = StdioServerParameters(command=PY, args=["manage.py", "runmcp"], cwd=str(ROOT), env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        result = await client.call_tool("greet", {"name": "Алиса"})
    text = "".join(block.text for block in result.content)  # type: ignore[union-attr]
    assert text == "Привет, Алиса! Я твой MCP-сервер.", text
    print(f"smoke: greet over stdio -> {text}")


if __name__ == "__main__":
    sys.exit(main())
