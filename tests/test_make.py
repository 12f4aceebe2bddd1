"""Makefile targets a user types, run as a script or a CI job runs them: no terminal."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, raw_initialize, subprocess_env


@pytest.mark.long
def test_make_superuser_with_the_environment_and_no_terminal_creates_the_account(
    tmp_path: Path,
) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    database = tmp_path / "fresh.sqlite3"
    done = subprocess.run(
        [make, "--no-print-directory", "superuser"],
        cwd=ROOT,
        env=subprocess_env(
            DATABASE_URL=f"sqlite:///{database}",
            REDIS_URL=None,
            DJANGO_SUPERUSER_USERNAME="ops",
            DJANGO_SUPERUSER_PASSWORD="pw-ops-4821",
            DJANGO_SUPERUSER_EMAIL="ops@example.org",
        ),
        stdin=subprocess.DEVNULL,  # no terminal
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "superuser ops created" in done.stdout
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT username, email, is_superuser FROM auth_user").fetchall()
    assert rows == [("ops", "ops@example.org", 1)]


COPY_IGNORES = shutil.ignore_patterns(
    ".git", ".venv", "media", "staticfiles", "db.sqlite3*", "__pycache__", ".*_cache", ".hypothesis"
)


def readme_desktop_snippet() -> dict[str, object]:
    """The server entry of README's desktop-client snippet (the one for a fresh clone)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for block in re.findall(r"```json\n(.*?)```", readme, re.S):
        server = json.loads(block).get("mcpServers", {}).get("tool-hub", {})
        if server.get("command") == "make":
            return server  # type: ignore[no-any-return]
    raise AssertionError("README has no make-based desktop snippet")


@pytest.mark.long
def test_the_readme_desktop_snippet_serves_from_a_fresh_clone(tmp_path: Path) -> None:
    """No .venv, no database: the snippet's command sets up, migrates, loads the sample
    norms, answers initialize and the norms search, and stdout carries nothing but JSON-RPC
    throughout."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    clone = tmp_path / "checkout"
    shutil.copytree(ROOT, clone, ignore=COPY_IGNORES)
    # The Makefile installs with uv when it is on the PATH, as it is here (the project's
    # own, alone in a directory: not its python); `.ci/run`'s fresh checkout takes pip's way.
    path, uv = os.environ.get("PATH", ""), ROOT / ".venv" / "bin" / "uv"
    if uv.exists():
        (tmp_path / "tools").mkdir()
        (tmp_path / "tools" / "uv").symlink_to(uv)
        path = f"{tmp_path / 'tools'}{os.pathsep}{path}"
    server = readme_desktop_snippet()
    args = [str(arg).replace("/path/to/checkout", str(clone)) for arg in server["args"]]  # type: ignore[attr-defined]
    messages = [
        raw_initialize("desktop"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "normagpt_search_norms", "arguments": {"keywords": ["бетон"]}},
        },
    ]
    proc = subprocess.Popen(
        [make, *args],
        cwd=tmp_path,
        env=subprocess_env(
            DATABASE_URL=None,
            REDIS_URL=None,
            MAKEFLAGS=None,
            MFLAGS=None,
            PATH=path,
            COMPILE_BYTECODE="",  # what is imported compiles as it is (some 10 s of CPU less)
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    replies: dict[object, dict[str, object]] = {}
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 420  # the first start installs the virtualenv
        while 2 not in replies and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 5)
            if ready:
                line = proc.stdout.readline()
                if not line:
                    break
                message = json.loads(line)  # anything else on stdout fails here
                assert message["jsonrpc"] == "2.0"
                replies[message.get("id")] = message
        proc.stdin.close()
        proc.wait(timeout=30)
        rest, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.kill()
    for line in rest.decode().splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert 2 in replies, err.decode()[-3000:]
    assert replies[1]["result"]["serverInfo"]["name"] == "tool-hub"  # type: ignore[index]
    result = replies[2]["result"]
    assert result["isError"] is False, result  # type: ignore[index]
    # A new embedded database gets the sample norms on the first start: found at once.
    assert "СП 63.13330.2018" in result["content"][0]["text"]  # type: ignore[index]
    assert (clone / ".venv" / "bin" / "python").exists()
    assert (clone / "db.sqlite3").exists()
