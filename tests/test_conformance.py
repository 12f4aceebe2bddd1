"""The official MCP conformance suite passes its generic server scenarios over stateful and
stateless HTTP (`make conformance` installs the suite; this test runs it when installed,
since the suite and Node come from the npm registry and tests reach no network)."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import PYTHON, ROOT, subprocess_env

SUITE = ROOT / ".venv" / "conformance" / "node_modules" / ".bin" / "conformance"


@pytest.mark.skipif(not SUITE.exists(), reason="the suite is not installed: make conformance")
def test_the_conformance_suite_gives_the_baseline_over_both_http_modes() -> None:
    done = subprocess.run(
        [PYTHON, str(ROOT / ".ci" / "conformance.py")],
        cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
