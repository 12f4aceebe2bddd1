"""`runmcp` starts without the heavy libraries: they load when a tool needs them; on the
embedded default (SQLite, no broker) it loads nothing of PostgreSQL, Redis, the REST API
or the HTTP transport either."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import PYTHON, ROOT, subprocess_env

HEAVY = ("openai", "PIL", "pypdfium2", "reportlab", "playwright")
UNUSED_ON_STDIO = (
    "psycopg",
    "redis",
    "rest_framework.serializers",
    "drf_spectacular.views",
    "requests",
    "jinja2",
    "bs4",
    "markdownify",
    "snowballstemmer",
)  # fmt: skip (their packages' apps are installed; their views and serializers never load)

PROBE = """
import io, json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
from django.core.management import call_command
from core.mcp_server import build_server
call_command("runmcp", "--list", stdout=io.StringIO())
build_server()
print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)))
"""


def test_runmcp_start_up_imports_no_heavy_library(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run(
        [PYTHON, "-c", PROBE.format(heavy=repr(HEAVY + UNUSED_ON_STDIO))],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", REDIS_URL=None),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [], f"imported at start-up: {loaded}"
