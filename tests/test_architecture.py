"""The direction of imports: core ← apps ← config, and apps meet only through services.

Read with `ast` (nothing is imported), function-level imports included:
- `core` imports no app and nothing of `config` (settings come from `django.conf`);
- an app imports nothing of `config` (settings from `django.conf`, Celery from `celery`);
- an app imports another app only through that app's `services`;
- `config` imports no app: it names them only in settings lists and URL include strings.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

APPS = ("problems", "anki_bridge", "ojclient", "normagpt")
PACKAGES = ("core", "config", *APPS)


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted module) for every import in `path`; `from a import b` gives `a.b` too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def violation(owner: str, module: str) -> str | None:
    """Why `owner` (a top-level package) may not import `module`, or None."""
    top, _, rest = module.partition(".")
    if top not in PACKAGES or top == owner:
        return None
    if owner == "core":
        return "core imports no app and nothing of config"
    if owner == "config":
        return (
            "config names apps only in settings lists and URL include strings"
            if top in APPS
            else None
        )
    if top == "config":
        return "an app imports nothing of config (use django.conf.settings, celery)"
    if top in APPS and rest.split(".")[0] not in ("", "services"):
        return f"an app uses {top} only through {top}.services"
    return None


def violations() -> list[str]:
    found = []
    for owner in PACKAGES:
        for path in sorted((ROOT / owner).rglob("*.py")):
            for line, module in imported_modules(path):
                reason = violation(owner, module)
                if reason:
                    found.append(f"{path.relative_to(ROOT)}:{line} imports {module}: {reason}")
    return sorted(set(found))


def test_imports_point_one_way() -> None:
    found = violations()
    assert not found, "imports against the layering:\n" + "\n".join(found)


def test_the_check_sees_each_kind_of_violation() -> None:
    assert violation("core", "problems.models")
    assert violation("core", "config.settings")
    assert violation("problems", "config.celery")
    assert violation("anki_bridge", "problems.formatting")
    assert violation("config", "normagpt.views")
    assert violation("anki_bridge", "problems.services") is None
    assert violation("anki_bridge", "core.exceptions") is None
    assert violation("problems", "problems.models") is None
