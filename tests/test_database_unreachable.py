"""A PostgreSQL database that cannot be reached is told at once, in the server's words and
naming the database: no traceback, no wait for the pool's whole timeout (core/postgresql)."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import (
    MANAGE,
    PYTHON,
    ROOT,
    STARTUP_DEADLINE,
    free_port,
    postgres_server,
    raw_initialize,
    subprocess_env,
)

# The commands' pool waits this long for a connection (DATABASE_POOL_TIMEOUT, 30 s by
# default): a command that answers within STARTUP_DEADLINE (a start-up on a busy machine)
# did not wait it out.
POOL_TIMEOUT = "3600"


def manage(command: str, url: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`manage.py command` on the database `url`, its pool waiting POOL_TIMEOUT."""
    return subprocess.run(
        [PYTHON, MANAGE, command],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=url, DATABASE_POOL_TIMEOUT=POOL_TIMEOUT),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=STARTUP_DEADLINE,
    )


def test_migrate_with_no_server_listening_says_so_without_a_traceback() -> None:
    port = free_port()  # nothing listens there
    done = manage("migrate", f"postgres://postgres@127.0.0.1:{port}/nowhere")
    assert done.returncode == 1
    assert f"error: the database nowhere on 127.0.0.1:{port} cannot be reached" in done.stderr
    assert "Connection refused" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_missing_database_is_named_by_runmcp_and_migrate_in_the_servers_words() -> None:
    host, port, user = postgres_server()
    name = "tool_hub_no_such_database"
    url = f"postgres://{user}@{host}:{port}/{name}"
    said = f"the database {name} on {host}:{port} cannot be reached"
    migrate = manage("migrate", url)
    assert migrate.returncode == 1
    assert said in migrate.stderr
    assert f'database "{name}" does not exist' in migrate.stderr
    assert "Traceback" not in migrate.stderr
    runmcp = manage("runmcp", url, json.dumps(raw_initialize("missing")) + "\n")
    assert runmcp.returncode == 1
    # `initialize` is answered while the server starts; then it says why it cannot
    assert [json.loads(line)["id"] for line in runmcp.stdout.splitlines()] == [1]
    assert f"CommandError: {said}" in runmcp.stderr
    assert f'database "{name}" does not exist' in runmcp.stderr
