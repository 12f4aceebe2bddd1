"""What `python -m build` and `pip install .` leave behind does not break `make test`, the
build prints no setuptools banners, and `make mcp` gives links to the site `make run` serves."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.wheel import SOURCES
from tests.conftest import ROOT

BUILD_OUTPUTS = ["build/lib/anki_bridge/__init__.py", "dist/tool_hub/__init__.py",
                 "tool_hub.egg-info/bad.py"]  # fmt: skip
UNUSED_IMPORT = "import os\n"


@pytest.fixture
def checkout_with_build_outputs(tmp_path: Path) -> Path:
    """A directory with the project's pyproject.toml, one module of its own and copies
    of a module where the build tools leave them (each with a lint error)."""
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "anki_bridge").mkdir()
    (tmp_path / "anki_bridge" / "__init__.py").write_text(UNUSED_IMPORT)
    for name in BUILD_OUTPUTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(UNUSED_IMPORT)
    return tmp_path


def test_ruff_leaves_build_outputs_alone(checkout_with_build_outputs: Path) -> None:
    listed = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "ruff"), "check", "--show-files", "."],
        cwd=checkout_with_build_outputs, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "anki_bridge/__init__.py" in listed
    for name in BUILD_OUTPUTS:
        assert name not in listed


def test_mypy_leaves_build_outputs_alone(
    checkout_with_build_outputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sources mypy collects from `.` (what `mypy .` checks), under the project's own
    configuration: a copy under build/ would stop it with "Duplicate module named"."""
    from mypy.find_sources import create_source_list
    from mypy.options import Options

    monkeypatch.chdir(checkout_with_build_outputs)
    options = Options()
    # The [tool.mypy] exclude list as mypy's config parser reads it (plugins left out).
    from mypy.config_parser import parse_config_file

    parse_config_file(options, lambda: None, str(checkout_with_build_outputs / "pyproject.toml"),
                      stdout=sys.stdout, stderr=sys.stderr)  # fmt: skip
    sources = {os.path.relpath(source.path or "") for source in create_source_list(["."], options)}
    assert sources == {"anki_bridge/__init__.py"}


def test_the_wheel_builds_without_setuptools_banners(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
         str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    output = built.stdout + built.stderr
    assert "would be ignored" not in output
    assert "not found (or not a regular file)" not in output


def test_make_mcp_links_to_the_port_make_run_serves() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    for target in ("mcp", "mcp-http"):
        recipe = subprocess.run(
            [make, "--no-print-directory", "-n", target, "PORT=8123", "HOST=127.0.0.2"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert "SITE_URL=${SITE_URL:-http://127.0.0.2:8123} " in recipe, recipe
