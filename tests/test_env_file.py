"""`.env` is read (issue 28, item 3): the variables the environment leaves unset come from
the checkout's `.env` (or the file TOOL_HUB_ENV_FILE names); the environment wins."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env

READ = (
    "import json; from django.conf import settings as s; "
    "print(json.dumps([s.SITE_URL, s.MCP_HTTP_TOKEN_USER, s.ANKI_DEFAULT_DECK]))"
)


def settings_seen(env_file: Path, **env: str | None) -> list[str]:
    done = subprocess.run(
        [PYTHON, MANAGE, "shell", "-c", READ],
        cwd=ROOT,
        env=subprocess_env(TOOL_HUB_ENV_FILE=str(env_file), **env),
        capture_output=True,
        check=True,
    )
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def test_the_env_file_fills_in_what_the_environment_leaves_unset(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# a desktop client's MCP server reads the same settings as the web server\n"
        "SITE_URL=http://hub.example.org:9000\n"
        "MCP_HTTP_TOKEN_USER=desk\n"
        'ANKI_DEFAULT_DECK="Русский язык::ЕГЭ"\n',
        encoding="utf-8",
    )
    seen = settings_seen(
        env_file, SITE_URL=None, ANKI_DEFAULT_DECK=None, MCP_HTTP_TOKEN_USER="from-the-env"
    )
    assert seen == ["http://hub.example.org:9000", "from-the-env", "Русский язык::ЕГЭ"]


def test_no_env_file_changes_nothing(tmp_path: Path) -> None:
    seen = settings_seen(tmp_path / "missing.env", SITE_URL=None, MCP_HTTP_TOKEN_USER=None)
    assert seen[0] == "http://127.0.0.1:8000"
