"""The official MCP conformance suite against `runmcp --transport http`, stateful and
stateless (`make conformance`).

The suite (an npm package, pinned) needs Node.js 22 or later: when the `node` on the PATH
is older, Node 22 comes from the npm registry as the `node` package, beside the suite in
.venv/conformance (npm must be installed). Scenarios that need the reference server's own
tools are listed in .ci/conformance-baseline.yaml; the suite fails on any other failure
and on a baseline entry that passes. Exits non-zero, saying what failed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SUITE = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node@22"
PREFIX = ROOT / ".venv" / "conformance"
BASELINE = ROOT / ".ci" / "conformance-baseline.yaml"
START_SECONDS = 120


def main() -> int:
    bin_dir = installed()
    failed = [mode for mode in ("stateful", "stateless") if not passes(bin_dir, mode)]
    if failed:
        print(f"conformance: unexpected results over {' and '.join(failed)} HTTP", file=sys.stderr)
        return 1
    print("conformance: stateful and stateless HTTP as the baseline expects")
    return 0


def installed() -> Path:
    """The directory holding the suite's `conformance` (and Node 22's `node` when the
    system's is older), installed once."""
    bin_dir = PREFIX / "node_modules" / ".bin"
    if (bin_dir / "conformance").exists():
        return bin_dir
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("conformance: npm is not installed (Node.js 22+ and npm run the suite)")
    packages = [SUITE] if node_major() >= 22 else [SUITE, NODE]
    print(f"conformance: installing {' '.join(packages)} into {PREFIX}", file=sys.stderr)
    PREFIX.mkdir(parents=True, exist_ok=True)
    install = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(PREFIX), *packages]
    subprocess.run(install, check=True, timeout=600, stdout=sys.stderr)
    return bin_dir


def node_major() -> int:
    node = shutil.which("node")
    if node is None:
        return 0
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    return int(version.stdout.strip().lstrip("v").split(".")[0] or 0)


def passes(bin_dir: Path, mode: str) -> bool:
    """Whether the suite's results over `mode` HTTP are the baseline's."""
    port = free_port()
    env = {**os.environ, "MCP_HTTP_TOKEN": "", "MCP_HTTP_STATELESS": str(int(mode == "stateless"))}
    command = [PY, "manage.py", "runmcp", "--transport", "http", "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"http://127.0.0.1:{port}/", server)
        path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
        with tempfile.TemporaryDirectory() as tmp:
            expected = baseline(mode, Path(tmp) / "baseline.yaml")
            url = f"http://127.0.0.1:{port}/mcp"
            suite = [str(bin_dir / "conformance"), "server", "--url", url,
                     "--expected-failures", str(expected)]  # fmt: skip
            print(f"conformance: {mode} HTTP", file=sys.stderr)
            env = {**os.environ, "PATH": path}
            done = subprocess.run(suite, env=env, timeout=600, check=False)
        return done.returncode == 0
    finally:
        server.terminate()
        server.wait(timeout=30)


def baseline(mode: str, path: Path) -> Path:
    """The baseline for `mode`, written at `path`: stateless HTTP gives no session id by
    design, which the multiple-streams scenario reports as a warning (a failure here)."""
    expected = yaml.safe_load(BASELINE.read_text(encoding="utf-8"))
    if mode == "stateless":
        expected["server"].append("server-sse-multiple-streams")
    path.write_text(yaml.safe_dump(expected), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(url: str, server: subprocess.Popen[bytes]) -> None:
    """Until `url` answers (a 404 will do: a stateless GET of /mcp would wait)."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"conformance: runmcp exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"conformance: runmcp did not answer at {url} within {START_SECONDS} s")


if __name__ == "__main__":
    sys.exit(main())
