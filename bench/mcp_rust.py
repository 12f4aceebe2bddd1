"""The Rust original of the online-judge tools (oj-mcp-rs, the server document 003
describes) for `bench/mcp_overhead.py --rust-original`: a given binary, or release
RUST_RELEASE's published build taken from the npm registry; Unavailable says why not."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

RUST_RELEASE = "0.1.4"


class Unavailable(Exception):
    """The Rust original cannot be had here; its row says why instead of a figure."""


def rust_original(path: Path | None, scratch: Path) -> tuple[Path, str]:
    """The Rust original's binary: `path`, or release RUST_RELEASE's published build for
    this machine, taken from the npm registry into `scratch` (it builds nothing). Raises
    Unavailable, naming the reason, when neither runs (no npm, offline, no such file)."""
    if path is None:
        path = _rust_from_npm(scratch)
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                              timeout=30)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"{path}: {error}") from None
    if done.returncode != 0:
        raise Unavailable(f"{path} --version exited {done.returncode}")
    return path, done.stdout.strip()


def _rust_from_npm(scratch: Path) -> Path:
    os_name = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower()
    )
    npm = shutil.which("npm")
    if os_name is None or cpu is None or npm is None:
        raise Unavailable("no PATH given and no npm on linux or macOS (x64, arm64)")
    package = f"oj-mcp-rs-{os_name}-{cpu}@{RUST_RELEASE}"
    try:
        packed = subprocess.run([npm, "pack", package, "--silent"], cwd=scratch,
                                check=True, capture_output=True, text=True,
                                timeout=300)  # fmt: skip
        with tarfile.open(scratch / packed.stdout.strip().splitlines()[-1]) as archive:
            archive.extractall(scratch / "rust", filter="data")
    except (OSError, IndexError, tarfile.TarError, subprocess.SubprocessError) as error:
        raise Unavailable(f"npm pack {package} failed: {error}") from None
    path = scratch / "rust" / "package" / "bin" / "oj-mcp-rs"
    path.chmod(0o755)
    return path
