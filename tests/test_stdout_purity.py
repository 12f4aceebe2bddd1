"""Under stdio nothing but JSON-RPC reaches stdout, even from a tool that makes noise."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import (
    MANAGE,
    PYTHON,
    ROOT,
    STARTUP_DEADLINE,
    postgres_server,
    raw_initialize,
    subprocess_env,
)

MESSAGES = [
    raw_initialize("raw-test"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "noisy", "arguments": {}},
    },
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
]


def test_stdout_carries_only_json_rpc_while_a_tool_prints_logs_and_warns() -> None:
    proc = subprocess.Popen(
        [PYTHON, MANAGE, "runmcp", "--settings", "tests.settings_noisy"],
        cwd=ROOT,
        env=subprocess_env(
            PYTHONWARNINGS="always", PYTHONUNBUFFERED=None
        ),  # buffered, as clients run it
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        responses = {}
        for message in MESSAGES:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                line = proc.stdout.readline()
                reply = json.loads(line)  # a stray line would fail here
                responses[reply["id"]] = reply
        rest, err = proc.communicate(timeout=STARTUP_DEADLINE)  # closes stdin: the server ends
    finally:
        proc.kill()

    for line in rest.decode().splitlines():
        json.loads(line)  # anything after the last answer must be JSON-RPC too
    assert responses[2]["result"]["content"][0]["text"] == "done"
    assert responses[2]["result"]["isError"] is False
    assert "noisy" in {tool["name"] for tool in responses[3]["result"]["tools"]}
    stderr = err.decode()
    for noise in (
        "stray print 2",
        "direct stdout write",
        "log line 2",
        "a warning 2",
        "partial line",
    ):
        assert noise in stderr


def test_a_fresh_embedded_database_is_migrated_on_start_and_stdout_stays_json(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    """A desktop client's first start on a fresh clone: no database yet. runmcp migrates
    it (quietly, on stderr) and the norms search answers instead of 'Internal error'."""
    messages = [
        raw_initialize("fresh-clone"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "normagpt_search_norms",
                "arguments": {"keywords": ["защитный слой бетона"]},
            },
        },
    ]
    database = tmp_path / "fresh.sqlite3"
    proc = subprocess.Popen(
        [PYTHON, MANAGE, "runmcp"],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=f"sqlite:///{database}", REDIS_URL=None),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    replies = {}
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                reply = json.loads(proc.stdout.readline())  # a stray line would fail here
                replies[reply["id"]] = reply
        rest, err = proc.communicate(timeout=STARTUP_DEADLINE)
    finally:
        proc.kill()
    for line in rest.decode().splitlines():
        json.loads(line)
    assert replies[1]["result"]["serverInfo"]
    result = replies[2]["result"]
    assert result["isError"] is False, result
    assert "Internal error" not in result["content"][0]["text"]
    assert database.exists()
    assert "no such table" not in err.decode()


def test_an_unmigrated_postgresql_database_is_refused_naming_the_command() -> None:
    """A server database is its owner's to migrate: runmcp exits at once, saying how."""
    import psycopg

    host, port, user = postgres_server()
    name = f"runmcp_unmigrated_{os.getpid()}"
    admin = f"host={host} port={port} user={user} dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        done = subprocess.run(
            [PYTHON, MANAGE, "runmcp"],
            cwd=ROOT,
            env=subprocess_env(DATABASE_URL=f"postgres://{user}@{host}:{port}/{name}"),
            input=json.dumps(raw_initialize("unmigrated")).encode() + b"\n",
            capture_output=True,
            timeout=STARTUP_DEADLINE,
        )
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert done.returncode == 1
    # Nothing but JSON-RPC on stdout: the `initialize` answered while it started.
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1]
    stderr = done.stderr.decode()
    assert "unapplied migration" in stderr
    assert "manage.py migrate" in stderr
    assert name in stderr
    assert "Traceback" not in stderr
