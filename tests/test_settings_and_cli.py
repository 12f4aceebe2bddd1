"""Settings from the environment, production checks, and the runmcp command line."""

from __future__ import annotations

import subprocess

from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env

PRODUCTION = {
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "k3y-" + "x9Qv7!pL2#" * 6,
    "DJANGO_ALLOWED_HOSTS": "hub.example.com",
}


def manage(*args: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, MANAGE, *args],
        cwd=ROOT,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_reports_no_issue_with_production_settings() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_debug_off_with_the_development_secret_key_refuses_to_start() -> None:
    result = manage("check", DJANGO_DEBUG="0", DJANGO_SECRET_KEY=None)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_a_malformed_boolean_names_the_variable() -> None:
    result = manage("check", DJANGO_DEBUG="maybe")
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be a boolean" in result.stderr


def test_runmcp_list_prints_the_tool_table() -> None:
    result = manage("runmcp", "--list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["tool", "app", "hints"]
    greet = next(line for line in lines if line.startswith("greet "))
    assert "anki_bridge" in greet
    assert "read-only" in greet


def test_runmcp_unknown_app_is_a_clear_error() -> None:
    result = manage("runmcp", "--apps", "problems,nosuch", "--list")
    assert result.returncode == 1
    assert "unknown app(s) nosuch" in result.stderr
    assert "Traceback" not in result.stderr
