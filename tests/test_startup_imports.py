"""`runmcp` starts without the heavy libraries: they load when a tool needs them."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import PYTHON, ROOT, subprocess_env

HEAVY = ("openai", "PIL", "pypdfium2", "reportlab", "playwright")

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


def test_runmcp_start_up_imports_no_heavy_library() -> None:
    result = subprocess.run(
        [PYTHON, "-c", PROBE.format(heavy=repr(HEAVY))],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == [], f"imported at start-up: {loaded}"
