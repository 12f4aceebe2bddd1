"""The direction of imports: core ← apps ← config, and apps meet only through services.

Read with `ast` (nothing is imported), function-level imports included:
- `core` imports no app and nothing of `config` (settings come from `django.conf`);
- an app imports nothing of `config` (settings from `django.conf`, Celery from `celery`);
- an app imports another app only through that app's `services`;
- `config` imports no app: it names them only in settings lists and URL include strings;
- an app imports only apps on a floor below its own (`FLOORS`: anki_bridge builds on
  problems, so problems imports nothing of anki_bridge);
- no circle: no module of core, config, the apps or bench reaches itself through imports
  (a circle means a type or a helper sits in the wrong room: move it down).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

APPS = ("problems", "anki_bridge", "ojclient", "normagpt")
PACKAGES = ("core", "config", *APPS)
# Which app stands on which: an app imports only apps of a lower floor. A new dependency
# between apps is a decision: raise the app that needs it here, in the same change.
FLOORS = {"problems": 1, "ojclient": 1, "normagpt": 1, "anki_bridge": 2}


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, dotted module, names taken from it) for every import in `path`, relative ones
    resolved; `import a.b` takes no names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            yield node.lineno, base, [alias.name for alias in node.names]


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted module) for every import in `path`; `from a import b` gives `a.b` too."""
    for line, base, names in imports(path):
        yield line, base
        for name in names:
            yield line, f"{base}.{name}"


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
    if top in APPS and FLOORS[top] >= FLOORS[owner]:
        return f"{owner} may not import {top}: it runs back up (FLOORS)"
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
    assert violation("problems", "anki_bridge.services")
    assert violation("normagpt", "ojclient.services")


# --- circles ----------------------------------------------------------------------------

GRAPHED = (*PACKAGES, "bench")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the project modules it imports (anywhere in it, a function's body too: an
    import deferred to dodge a circle is still one). `from a import b` is an arrow to the
    module `a.b` where there is one, else to `a`."""
    modules = {
        module_name(path): path for top in GRAPHED for path in sorted((ROOT / top).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for _, base, names in imports(path):
            submodules = {f"{base}.{n}" for n in names} & modules.keys()
            found |= submodules
            if len(submodules) < max(len(names), 1):  # a name of the module itself
                found.add(base)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_module_reaches_itself_through_imports() -> None:
    graph = import_graph()
    found = circles(graph)
    described = [
        " ↔ ".join(group)
        + ": "
        + "; ".join(f"{a} → {b}" for a in group for b in sorted(graph[a]) if b in group)
        for group in found
    ]
    assert not found, "import circles:\n" + "\n".join(described)


def test_the_circle_check_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


# --- rooms a reader can hold (issue 55, item 2) --------------------------------------------

MODULE_LINES = 600
FUNCTION_LINES = 60


def oversized() -> list[str]:
    """Production modules (apps, core, config, bench; migrations aside) over MODULE_LINES
    lines, and functions over FUNCTION_LINES."""
    found = []
    for top in GRAPHED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            where = path.relative_to(ROOT)
            if (lines := len(text.splitlines())) > MODULE_LINES:
                found.append(f"{where}: {lines} lines")
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    span = (node.end_lineno or node.lineno) - node.lineno + 1
                    if span > FUNCTION_LINES:
                        found.append(f"{where}:{node.lineno} {node.name}: {span} lines")
    return found


def test_every_module_and_function_is_a_size_a_reader_can_hold() -> None:
    assert not oversized(), "split where a part has a name of its own:\n" + "\n".join(oversized())
