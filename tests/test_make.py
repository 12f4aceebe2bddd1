"""Makefile targets a user types, run as a script or a CI job runs them: no terminal."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, subprocess_env


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
