"""The project as a user installs it: a wheel (`python -m build`) in a fresh venv.

Built from a copy of the sources without build isolation (the backend comes from the
calling environment: no download). Installed with `--no-deps`; the calling environment
lends the venv its dependencies through a .pth file, as the index would have installed
them — the code that runs is the wheel's alone, away from any checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["pyproject.toml", "README.md", "templates", "config", "core", "problems",
           "anki_bridge", "ojclient", "normagpt"]  # fmt: skip
PACKAGES = ["config", "core", "problems", "anki_bridge", "ojclient", "normagpt"]


def wheel_build(base: Path) -> Path:
    """The wheel, built under `base` from a copy of the sources."""
    source = base / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = base / "dist"
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist),
             str(source)]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True, timeout=600)
    (wheel,) = dist.glob("tool_hub-*.whl")
    return wheel


def wheel_install(base: Path) -> Path:
    """A fresh venv under `base` with the wheel installed; its `bin` directory."""
    wheel = wheel_build(base)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
               "--no-index", "--no-deps", str(wheel)]  # fmt: skip
    subprocess.run(install, check=True, capture_output=True, timeout=600)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    lent = sysconfig.get_paths()["purelib"]
    Path(purelib, "tool_hub_dependencies.pth").write_text(lent + "\n", encoding="utf-8")
    return venv / "bin"
