"""Configuration: the base URL rule, runmcp's overrides, the token kept secret, stdio end to end."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import anyio
import pytest
from django.core.management import CommandError, call_command
from mcp import StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from ojclient.conf import base_url_normalize
from tests.conftest import ROOT, subprocess_env, text_of
from tests.ojclient.conftest import TOKEN, Backend, fixture


@pytest.mark.parametrize(
    ("value", "normalized"),
    [
        ("https://oj.example.com", "https://oj.example.com"),
        ("HTTPS://OJ.Example.COM/", "https://oj.example.com"),
        ("https://oj.example.com:443", "https://oj.example.com"),
        ("http://oj.example.com:80/", "http://oj.example.com"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("https://oj.example.com:8443", "https://oj.example.com:8443"),
        ("http://[::1]:9000/", "http://[::1]:9000"),
        ("  https://oj.example.com  ", "https://oj.example.com"),
    ],
)
def test_base_url_is_normalized(value: str, normalized: str) -> None:
    assert base_url_normalize(value) == normalized


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("ftp://oj.example.com", "http:// or https://"),
        ("oj.example.com", "http:// or https://"),
        ("https://user:pw@oj.example.com", "credentials"),
        ("https://oj.example.com/api", "without a path"),
        ("https://oj.example.com/?x=1", "query"),
        ("https://oj.example.com/#top", "fragment"),
        ("https://", "no host"),
        ("https://oj.example.com:99999", "not a valid URL"),
    ],
)
def test_bad_base_urls_are_refused_with_the_rule(value: str, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        base_url_normalize(value)


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_runmcp_refuses_a_bad_base_url_naming_the_setting(settings: Any) -> None:
    """In-process: a CommandError is what `manage.py` turns into exit code 1 with its message
    on stderr (a spawned runmcp refusing to start: tests/test_settings_and_cli.py)."""
    settings.OJ_API_BASE_URL = ""  # the flag's value lands in this test's settings override
    with pytest.raises(CommandError, match="OJ_API_BASE_URL") as refused:
        call_command("runmcp", "--list", "--oj-base-url", "https://oj.example.com/api")
    assert "without a path" in str(refused.value)
    settings.OJ_API_BASE_URL = "ftp://x"  # as the environment variable sets it
    with pytest.raises(CommandError, match="OJ_API_BASE_URL"):
        call_command("runmcp", "--list")
    logging.captureWarnings(False)  # runmcp routes warnings to logging for its process


def test_the_flag_overrides_a_bad_environment_value() -> None:
    done = run_manage(
        "runmcp", "--list", "--oj-base-url", "https://oj.example.com", OJ_API_BASE_URL="ftp://x"
    )
    assert done.returncode == 0, done.stderr
    assert "get_platform_status" in done.stdout


@pytest.mark.django_db(transaction=True)
def test_stdio_end_to_end_with_flags_and_the_token_never_logged(
    backend: Backend, subprocess_db_env: dict[str, str], tmp_path: Any
) -> None:
    backend.reply("/api/v1/problems/leetcode/1", fixture("problem_leetcode_1.json"))
    backend.reply("/status", fixture("status_200.json"))
    secret = "tok-" + TOKEN[::-1]
    errlog = tmp_path / "stderr.log"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "manage.py",
            "runmcp",
            "--apps",
            "ojclient",
            "--oj-base-url",
            backend.base_url.upper().replace("HTTP://", "http://") + "/",
            "--oj-token",
            secret,
        ],
        cwd=str(ROOT),
        env=subprocess_env(
            LOG_LEVEL="DEBUG", OJ_API_BASE_URL="", OJ_API_TOKEN="", **subprocess_db_env
        ),
    )

    async def session() -> tuple[str, str]:
        with errlog.open("w") as stderr:
            async with (
                stdio_client(params, errlog=stderr) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                problem = await client.call_tool("get_problem", {"source": "leetcode", "id": "1"})
                status = await client.call_tool("get_platform_status", {})
        return text_of(problem), text_of(status)

    problem, status = anyio.run(session)
    assert problem.startswith("# Two Sum\n")
    assert status.startswith("# OJ Platform Status (v0.2.1)")
    assert all(seen.headers["authorization"] == f"Bearer {secret}" for seen in backend.requests)
    log = errlog.read_text()
    assert "token: configured" in log
    assert secret not in log


def test_unconfigured_tools_answer_not_configured_in_process(settings: Any) -> None:
    settings.OJ_API_BASE_URL = ""
    from tests.ojclient.conftest import call

    for tool, arguments in [
        ("get_daily_challenge", {}),
        ("find_similar_problems", {"query": "two sum"}),
        ("resolve_problem", {"query": "two-sum"}),
    ]:
        is_error, text = call(tool, arguments)
        assert is_error, tool
        assert "OJ_API_BASE_URL" in text, tool
