"""DEBUG is for the development pages: a tool server and a worker never render SQL."""

from __future__ import annotations

import json
import subprocess

from config.celery import sql_not_rendered
from tests.conftest import MANAGE, PYTHON, ROOT, raw_initialize, subprocess_env

SEARCH = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "normagpt_search_norms", "arguments": {"keywords": ["бетон"]}},
}


def test_runmcp_renders_no_sql_even_with_django_debug_on(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With DJANGO_DEBUG=1 and SQL logging asked for, a call that queries the database
    leaves no rendered statement: Django's debug cursor is off in the tool server."""
    lines = [
        json.dumps(raw_initialize("debug")),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        json.dumps(SEARCH),
    ]
    done = subprocess.run(
        [PYTHON, MANAGE, "runmcp", "--apps", "normagpt"],
        cwd=ROOT,
        env=subprocess_env(
            DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
            DJANGO_DEBUG="1",
            DJANGO_LOG_LEVEL="DEBUG",
        ),
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=120,
    )
    replies = {json.loads(line)["id"]: json.loads(line) for line in done.stdout.splitlines()}
    assert replies[2]["result"]["isError"] is False, done.stderr.decode()[-2000:]
    logged = done.stderr.decode()
    assert "DEBUG" in logged  # the level took: the absence below means something
    assert "django.db.backends.schema" in logged  # migrating is logged as it always is
    assert "django.db.backends:" not in logged  # no statement rendered


def test_a_worker_turns_sql_rendering_off(settings) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = True
    sql_not_rendered()
    from django.conf import settings as live

    assert live.DEBUG is False
