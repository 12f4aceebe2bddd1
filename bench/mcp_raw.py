"""Raw MCP clients for the benches: a server spawned on stdio or streamable HTTP and driven
by JSON lines or POSTs, with no SDK client between the bench and it (an SDK client adds about
4 ms a call and hides the gap `bench/mcp_overhead.py` measures); and a session's start-up
timed as a desktop client waits on it (`bench/first_launch.py` times the same)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import ROOT, cpu_seconds

READY_WITHIN = 600.0  # seconds to initialize (minutes under valgrind on a busy machine)


class RawServer:
    """A server on stdio, driven by JSON lines: no SDK client between the bench and it."""

    def __init__(self, command: list[str], env: dict[str, str], *, under_valgrind: bool) -> None:
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.under_valgrind = under_valgrind
        self.next_id = 1
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
        self.request("initialize", hello)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        message_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params})
        while True:  # notifications (logs, progress) may come before the answer
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server {self.proc.args!r} closed its stdout")
            answer = json.loads(line)
            if answer.get("id") == message_id:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return answer["result"]

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"{tool}: {result}")
        return "".join(block.get("text", "") for block in result["content"])

    def instrument(self, on: bool) -> None:
        switch = "on" if on else "off"
        subprocess.run([valgrind_tool("callgrind_control"), "-i", switch, str(self.proc.pid)],
                       check=True, capture_output=True)  # fmt: skip

    def dump(self) -> None:
        subprocess.run([valgrind_tool("callgrind_control"), "-d", str(self.proc.pid)],
                       check=True, capture_output=True)  # fmt: skip

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def valgrind_tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"--instructions needs valgrind: {name} is not on the PATH")
    return found


class RawHttp:
    """A server on streamable HTTP, driven by raw POSTs (one session, one connection)."""

    HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}  # fmt: skip

    def __init__(self, command: list[str], env: dict[str, str], url: str) -> None:
        quiet = subprocess.DEVNULL
        self.proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=quiet, stdout=quiet, stderr=quiet
        )
        self.url = url
        self.http = httpx.Client(timeout=60)
        self.headers = dict(self.HEADERS)
        self.next_id = 1
        deadline = time.monotonic() + READY_WITHIN
        while True:
            try:
                hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
                response = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                       "params": hello})  # fmt: skip
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit(f"{command!r} did not serve {url}") from None
                time.sleep(0.2)
        session = response.headers.get("mcp-session-id")
        if session:
            self.headers["mcp-session-id"] = session
        self.headers["mcp-protocol-version"] = "2025-06-18"
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _post(self, message: dict[str, Any]) -> httpx.Response:
        return self.http.post(self.url, json=message, headers=self.headers)

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}  # fmt: skip
        response = self._post(message)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        result = json.loads(text)["result"]
        return "".join(block.get("text", "") for block in result["content"])

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    def close(self) -> None:
        self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


START_UP_STEPS = ("initialize", "tools/list", "first call")


GREET = ("greet", {"name": "Алиса"})


def start_up(
    command: list[str],
    env: dict[str, str],
    first: tuple[str, dict[str, Any]] = GREET,
    cwd: Path = ROOT,
) -> list[float]:
    """Seconds from spawn to the answers a desktop client waits on first: `initialize`,
    `tools/list`, and its first tool call (`first`: greet), each sent when the last is
    answered."""
    began = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "bench", "version": "1"}}  # fmt: skip
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": first[0], "arguments": first[1]}},
    ]  # fmt: skip
    times = []
    try:
        for request in asked:
            proc.stdin.write(json.dumps(request, ensure_ascii=False).encode() + b"\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit(f"{command!r} closed its stdout while starting")
                answer = json.loads(line)
                if answer.get("id") == request["id"]:
                    break
            if "error" in answer or answer["result"].get("isError"):
                raise SystemExit(f"{request['method']}: {answer}")
            times.append(time.perf_counter() - began)
            if request["id"] == 1:
                initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                proc.stdin.write(json.dumps(initialized).encode() + b"\n")
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)
    return times
