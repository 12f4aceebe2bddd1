"""`initialize` (or `server/discover`) and `tools/list` are answered while the server is
still starting, with the very answers the assembled server gives (core/stdio_early.py,
core/mcp_catalog.py)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

from core import mcp_catalog
from core.mcp_server import build_server
from core.stdio_early import CATALOG_PATH, Early, catalog_served
from tests.conftest import MANAGE, PYTHON, ROOT, STARTUP_DEADLINE, subprocess_env, text_of
from tests.test_mcp_stdio_robust import RawStdio

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
GREETING = "Привет, Алиса! Я твой MCP-сервер."


def initialize(version: str, message_id: int | str = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "early", "version": "1"},
        },
    }


def discover_with(meta: dict[str, Any]) -> dict[str, Any]:
    """A `server/discover` whose envelope has `meta` in place of the well-formed keys."""
    params = {"_meta": {**mcp_catalog.envelope(LATEST_MODERN_VERSION), **meta}}
    return {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": params}


def greet(message_id: int) -> dict[str, Any]:
    arguments = {"name": "Алиса"}
    params = {"name": "greet", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": params}


def early_of(apps: list[str] | None) -> Early:
    """An early reader answering for `apps` (None: all) from the catalog, writing to a
    `_Wire` that keeps its replies."""
    catalog = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    served = catalog_served(catalog, apps)
    assert served is not None
    return Early(None, _Wire(), catalog, *served)  # type: ignore[arg-type]


def test_the_catalog_is_what_the_server_answers() -> None:
    """The file the early reader answers from is what the code gives today."""
    recorded = mcp_catalog.catalog_record()
    on_disk = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    assert on_disk == recorded, "core/mcp_catalog.json is out of date: run `make catalog`"


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"])
def test_the_early_answers_are_the_servers_for_every_protocol_version(version: str) -> None:
    """Whatever version a client asks for, the early `initialize` and `tools/list` answers
    are the server's own for that request, field for field."""
    apps = ["problems", "ojclient"]
    answers = anyio.run(mcp_catalog._answers, build_server(apps, recorded=False), version)
    early = early_of(apps)
    early._answer(json.dumps(initialize(version, 1)).encode())
    early._answer(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode())
    initialized, listed = early.wire.replies  # type: ignore[attr-defined]
    assert initialized == {"jsonrpc": "2.0", "id": 1, "result": answers["initialize"]}
    expected = LATEST_HANDSHAKE_VERSION if version not in HANDSHAKE_PROTOCOL_VERSIONS else version
    assert initialized["result"]["protocolVersion"] == expected
    assert listed == {"jsonrpc": "2.0", "id": 2, "result": {"tools": answers["tools"]}}
    # Byte for byte as the server writes them (key order, no spaces): the same tokens.
    lines = early.wire.lines  # type: ignore[attr-defined]
    assert lines == [
        answers["lines"][method].encode() + b"\n" for method in ("initialize", "tools/list")
    ]


@pytest.mark.parametrize("version", [*MODERN_PROTOCOL_VERSIONS, "1999-01-01"])
def test_the_early_discover_answers_are_the_servers(version: str) -> None:
    """A client of the handshake-free protocol probes `server/discover` and lists the
    tools with the envelope on each request: the early answers are the server's own (the
    probe's byte for byte; the tools' schemas with their keys in the legacy listing's
    order, which this protocol's listing changes); a version the server does not speak is
    refused as the server refuses it, and opens nothing (the tool list then waits)."""
    apps = ["anki_bridge", "normagpt"]
    answers = anyio.run(mcp_catalog._modern_answers, build_server(apps, recorded=False), version)
    early = early_of(apps)
    params = {"_meta": mcp_catalog.envelope(version)}
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": params}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params}
    early._answer(json.dumps(discover).encode())
    early._answer(json.dumps(listing).encode())
    kept, _ = early.hand_over(None, None)
    if version in MODERN_PROTOCOL_VERSIONS:
        discovered, listed = early.wire.lines  # type: ignore[attr-defined]
        assert discovered == answers["lines"]["server/discover"].encode() + b"\n"
        assert json.loads(listed) == json.loads(answers["lines"]["tools/list"])
        assert [json.loads(line) for line in kept] == [{**discover, "id": early.replay_id}]
    else:
        assert answers["discover"]["code"] == -32022
        refused = answers["lines"]["server/discover"].encode() + b"\n"
        assert early.wire.lines == [refused]  # type: ignore[attr-defined]
        assert kept == [json.dumps(listing).encode()]


class _Wire:
    def __init__(self) -> None:
        self.replies: list[dict[str, Any]] = []
        self.lines: list[bytes] = []

    def write(self, data: bytes | memoryview) -> int:
        self.lines.append(bytes(data))
        self.replies.append(json.loads(bytes(data)))
        return len(data)


@pytest.fixture
def locked_database(tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """A fresh SQLite file that another connection holds an exclusive lock on: the server's
    start (its migrations) waits until the test lets go."""
    path = tmp_path / "fresh.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    yield path, holder
    holder.close()


def test_initialize_and_tools_list_are_answered_while_the_server_cannot_start_yet(
    locked_database: tuple[Path, sqlite3.Connection],
) -> None:
    """A fresh data directory migrates before serving. While the migrations wait on the
    database, the client's `initialize` and `tools/list` are answered; a tool call sent
    meanwhile is answered once the server is up, and the session is the one the client
    opened (the server saw its `initialize`)."""
    path, holder = locked_database
    proc = subprocess.Popen(
        [PYTHON, MANAGE, "runmcp"],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=f"sqlite:///{path}", REDIS_URL=None),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    raw = RawStdio(proc)
    try:
        raw.send(json.dumps(initialize("2025-06-18")))
        answer = raw.reply(timeout=STARTUP_DEADLINE)
        assert answer["result"]["serverInfo"]["name"] == "tool-hub"  # type: ignore[index]
        raw.send(json.dumps(INITIALIZED))
        raw.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        listed = raw.reply(timeout=STARTUP_DEADLINE)
        names = [tool["name"] for tool in listed["result"]["tools"]]  # type: ignore[index]
        assert "greet" in names
        assert "sdamgia_get_problem" in names
        raw.send(json.dumps(greet(3)))
        assert raw.no_reply(timeout=0.5), "a tool was called before the database was migrated"
        tables = holder.execute("SELECT name FROM sqlite_master").fetchall()
        assert tables == [], "the migrations ran through the lock"
        holder.execute("COMMIT")
        called = raw.reply(timeout=STARTUP_DEADLINE)
        assert called["id"] == 3
        assert called["result"]["content"][0]["text"] == GREETING  # type: ignore[index]
        raw.send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        assert raw.reply(timeout=STARTUP_DEADLINE) == {"jsonrpc": "2.0", "id": 4, "result": {}}
    finally:
        proc.kill()
        proc.wait(timeout=10)
    migrated = sqlite3.connect(path).execute("SELECT count(*) FROM django_migrations").fetchone()
    assert migrated[0] > 0


@pytest.mark.anyio
async def test_the_sdk_client_opens_its_session_while_the_server_cannot_start_yet(
    locked_database: tuple[Path, sqlite3.Connection],
) -> None:
    """The SDK's client probes `server/discover` and, without an answer in 10 s, falls
    back to `initialize`; a server that then takes the probe's protocol refuses that
    handshake, and every call after it fails (CI on a busy machine, first start on a fresh
    data directory). The probe is answered at once: the session is the 2026-07-28 one, the
    tools are listed while the migrations wait, and a call is answered once they ran."""
    path, holder = locked_database
    server = StdioServerParameters(
        command=PYTHON,
        args=[str(MANAGE), "runmcp"],
        cwd=str(ROOT),
        env=subprocess_env(DATABASE_URL=f"sqlite:///{path}", REDIS_URL=None),
    )
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        assert client.protocol_version == LATEST_MODERN_VERSION
        listed = await client.list_tools()
        assert "greet" in [tool.name for tool in listed.tools]
        tables = holder.execute("SELECT name FROM sqlite_master").fetchall()
        assert tables == [], "the migrations ran through the lock"
        holder.execute("COMMIT")
        called = await client.call_tool("greet", {"name": "Алиса"})
        assert not called.is_error, text_of(called)
        assert text_of(called) == GREETING


def test_a_server_that_cannot_start_answers_each_request_with_the_reason(tmp_path: Path) -> None:
    """A malformed setting stops start-up. The client already has its `initialize`
    answer, so each later request is answered with the reason (a tool call as a tool
    error the model reads), never left waiting; the exit code is still 1."""
    lines = [
        initialize("2025-11-25"),
        INITIALIZED,
        greet(2),
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]
    requests = tmp_path / "stdin.jsonl"
    requests.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [PYTHON, MANAGE, "runmcp"],
            cwd=ROOT,
            env=subprocess_env(SITE_URL="not a url"),
            stdin=stdin,
            capture_output=True,
            timeout=STARTUP_DEADLINE,
            check=False,
        )
    assert done.returncode == 1
    assert b"SITE_URL" in done.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert sorted(replies) == [1, 2, 3, 4]
    assert replies[1]["result"]["serverInfo"]["name"] == "tool-hub"
    tool = replies[2]["result"]
    assert tool["isError"] is True
    assert "could not start" in tool["content"][0]["text"]
    assert "SITE_URL" in tool["content"][0]["text"]
    assert "SITE_URL" in replies[3]["error"]["message"]
    assert any(t["name"] == "greet" for t in replies[4]["result"]["tools"])


@pytest.mark.anyio
async def test_the_sdk_client_reads_why_the_server_could_not_start() -> None:
    """The `mcp` client of a 2026-07-28 session reads a result only with its `resultType`:
    without it the reason was a ValidationError in the client, never shown to its user."""
    server = StdioServerParameters(
        command=PYTHON,
        args=[str(MANAGE), "runmcp"],
        cwd=str(ROOT),
        env=subprocess_env(SITE_URL="not a url"),
    )
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        assert client.protocol_version == LATEST_MODERN_VERSION
        called = await client.call_tool("greet", {"name": "Алиса"})
    assert called.is_error
    assert "The tool hub could not start" in text_of(called)
    assert "SITE_URL" in text_of(called)


@pytest.mark.parametrize(
    "line",
    [
        b"\xef\xbb\xbf" + json.dumps(initialize("2025-06-18")).encode(),
        json.dumps(
            {**initialize("2025-06-18"), "params": {"protocolVersion": "2025-06-18"}}
        ).encode(),
        json.dumps({**initialize("2025-06-18"), "id": True}).encode(),
        b"[" + json.dumps(initialize("2025-06-18")).encode() + b"]",
        b"{" + b" " * 70_000 + json.dumps(initialize("2025-06-18")).encode()[1:],
        json.dumps(discover_with({"io.modelcontextprotocol/clientCapabilities": []})).encode(),
        json.dumps(discover_with({"io.modelcontextprotocol/clientInfo": {"name": 1}})).encode(),
        json.dumps(discover_with({"io.modelcontextprotocol/protocolVersion": None})).encode(),
    ],
    ids=[
        "bom",
        "no client info",
        "boolean id",
        "batch",
        "70 KB line",
        "discover: capabilities",
        "discover: client info",
        "discover: no version",
    ],
)
def test_what_the_early_reader_does_not_answer_waits_for_the_server(line: bytes) -> None:
    """Only a well-formed `initialize` or `server/discover` is answered early (a byte-order mark is skipped, as
    the server skips it); a line the server would refuse or that is too long to read twice
    is kept, in order, for the server to answer."""
    early = early_of(None)
    early._answer(line)
    early._answer(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).encode())
    replies = early.wire.replies  # type: ignore[attr-defined]
    kept, ended = early.hand_over(None, None)
    assert not ended
    if line.startswith(b"\xef\xbb\xbf"):
        assert [reply["id"] for reply in replies] == [1, 9]
        assert json.loads(kept[0])["id"] == early.replay_id
    else:
        assert replies == []
        assert kept == [
            line,
            json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).encode(),
        ]
