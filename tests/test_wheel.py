"""Installed as a package, away from any checkout: the wheel holds everything the hub
needs, and `tool-hub mcp` serves a client on a fresh data directory.

The wheel is built from a copy of the sources (`python -m build`, without isolation: the
build backend comes from the test's own environment, so no download) and goes into a fresh
venv with `--no-deps`; the project's environment lends that venv its dependencies through
a .pth file, as the index would have installed them (tests reach no network).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.wheel import PACKAGES, wheel_install
from tests.conftest import ROOT, STARTUP_DEADLINE, subprocess_env, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (bench/wheel.py); its `bin` directory."""
    return wheel_install(tmp_path_factory.mktemp("wheel"))


def installed_files(bin_dir: Path) -> set[str]:
    python = bin_dir / "python"
    listing = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; "
         "print('\\n'.join(str(f) for f in m.distribution('tool-hub').files))"],
        check=True, capture_output=True, text=True, cwd=bin_dir,
    ).stdout  # fmt: skip
    return set(listing.split())


def test_the_wheel_holds_every_module_template_locale_prompt_and_the_catalog(
    installed: Path,
) -> None:
    files = installed_files(installed)
    expected = {
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix in (".py", ".html", ".po", ".mo", ".yaml", ".json")
    }
    expected |= {
        f"config/site_templates/{path.relative_to(ROOT / 'templates')}"
        for path in (ROOT / "templates").rglob("*.html")
    }
    missing = sorted(expected - files)
    assert not missing, f"not in the wheel: {missing}"


async def test_tool_hub_mcp_answers_a_client_on_a_fresh_data_directory(
    installed: Path, tmp_path: Path
) -> None:
    """The official SDK client launches `tool-hub mcp` from an unrelated directory: it is
    initialized at once, and a tool that reads the embedded database (created and migrated
    in the user's data directory, with the sample norms) answers."""
    data = tmp_path / "xdg-data"
    env = subprocess_env(
        XDG_DATA_HOME=str(data),
        HOME=str(tmp_path / "home"),
        DATABASE_URL=None,
        REDIS_URL=None,
        PYTHONPATH=None,
        TOOL_HUB_DATA_DIR=None,
        TOOL_HUB_ENV_FILE=None,
        DJANGO_SETTINGS_MODULE=None,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server = StdioServerParameters(
        command=str(installed / "tool-hub"), args=["mcp"], cwd=str(elsewhere), env=env
    )
    async with Client(server, read_timeout_seconds=STARTUP_DEADLINE) as client:
        assert client.server_info is not None
        assert client.server_info.name == "tool-hub"
        found = await client.call_tool("normagpt_search_norms", {"keywords": ["защитный слой"]})
        assert not found.is_error, text_of(found)
        assert "СП 63.13330" in text_of(found)
    assert (data / "tool-hub" / "db.sqlite3").is_file()
    assert not (elsewhere / "db.sqlite3").exists()


def test_tool_hub_lists_its_commands_and_runs_any_manage_command(
    installed: Path, tmp_path: Path
) -> None:
    env = subprocess_env(XDG_DATA_HOME=str(tmp_path), DATABASE_URL=None, PYTHONPATH=None)
    usage = subprocess.run(
        [str(installed / "tool-hub")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout
    for command in ("serve", "mcp", "mcp-http", "worker", "beat", "migrate", "superuser", "crawl",
                    "ingest", "flush"):  # fmt: skip
        assert f"  {command} " in usage
    listed = subprocess.run(
        [str(installed / "tool-hub"), "runmcp", "--list"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=STARTUP_DEADLINE,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "44 tool(s)" in listed.stdout
    worker = subprocess.run(
        [str(installed / "tool-hub"), "worker"],
        capture_output=True, text=True, env={**env, "REDIS_URL": ""}, cwd=tmp_path,
        timeout=STARTUP_DEADLINE,
    )  # fmt: skip
    assert worker.returncode != 0
    assert "REDIS_URL is not set" in worker.stderr
