"""Every command README and docs/ tell a user to type exists, with every option it shows;
README stays a first page: at most 300 lines, every page of docs/ it links to there.

The commands are read from the code spans and blocks of README and of every page of
docs/ (where the reference moved): `make <target>` must be a Makefile target;
`python manage.py <command> --option …` a management command whose parser knows each
option (and each `--apps` name an app with tools); `bench/<name>.py` a benchmark there is.
"""

from __future__ import annotations

import re

import pytest
from django.core.management import get_commands, load_command_class

from core.mcp_server import load_registries
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
TEXTS = [README, *DOCS.values()]
CODE = [
    code
    for text in TEXTS
    for code in re.findall(r"`([^`\n]+)`", text) + re.findall(r"```sh\n(.*?)```", text, re.S)
]
README_LINES = 300


def commands(prefix: str) -> list[str]:
    """Each command line of README and docs/ that starts with `prefix` (tables escape `|`
    as `\\|`)."""
    found = []
    for code in CODE:
        for line in code.replace("\\|", "|").splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith(prefix):
                found.append(line)
    return found


def test_readme_names_the_commands_at_all() -> None:
    assert len(commands("make ")) >= 8
    assert len(commands("python manage.py ")) >= 6


@pytest.mark.parametrize("line", commands("make "))
def test_every_make_command_in_the_readme_is_a_target(line: str) -> None:
    targets = set(re.findall(r"^([a-z][a-z-]*):", MAKEFILE, re.M))
    target = line.split()[1]
    assert target in targets, f"README says `{line}`; the Makefile has no target {target}"
    for variable in re.findall(r"\b([A-Z_]+)=", line):
        assert re.search(rf"\b{variable}\b", MAKEFILE), f"`{line}`: Makefile ignores {variable}"


@pytest.mark.parametrize("line", commands("python manage.py "))
def test_every_manage_command_in_the_readme_exists_with_its_options(line: str) -> None:
    name = line.split()[2]
    app = get_commands().get(name)
    assert app is not None, f"README says `{line}`; there is no command {name}"
    parser = load_command_class(app, name).create_parser("manage.py", name)
    known = {option for action in parser._actions for option in action.option_strings}
    for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", line):
        assert option in known, f"README says `{line}`; {name} has no option {option}"


def test_the_apps_readme_lists_are_the_apps_with_tools() -> None:
    labels = {registry.app for registry in load_registries()}
    paragraph = README[README.index("**Choosing tools.**") :].split("\n\n", 1)[0]
    named = set(re.findall(r"`(\w+)` \(", paragraph))
    assert named == labels


def links(text: str) -> list[str]:
    """The targets of a page's Markdown links that stay in the repository (no scheme)."""
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]


def test_the_readme_is_a_first_page() -> None:
    """What the project is, the two commands on the first screen, connecting a client and
    the map of the docs; the reference lives in docs/."""
    lines = README.splitlines()
    assert len(lines) <= README_LINES, f"README has {len(lines)} lines; at most {README_LINES}"
    first_screen = "\n".join(lines[:40])
    assert "make run" in first_screen
    assert "make test" in first_screen
    assert "## Connecting an MCP client" in README
    mapped = {t for t in links(README) if t.startswith("docs/")}
    assert {f"docs/{path.name}" for path in DOCS} <= mapped, "a page of docs/ README does not map"


def test_every_link_of_the_readme_and_the_docs_reaches_a_file() -> None:
    for path, text in [(ROOT / "README.md", README), *DOCS.items()]:
        for target in links(text):
            file = target.split("#", 1)[0]
            if file:
                assert (path.parent / file).exists(), f"{path.name} links to {target}: no such file"


def test_every_benchmark_the_docs_name_exists() -> None:
    named = set()
    for code in CODE:
        named |= set(re.findall(r"\bbench/([a-z_]+\.py)\b", code))
    assert named, "docs/benchmarks.md names no benchmark"
    missing = sorted(name for name in named if not (ROOT / "bench" / name).exists())
    assert not missing, f"the docs name benchmarks that are not in bench/: {missing}"


def test_the_tool_reference_is_the_registry_s() -> None:
    """docs/tools.md is made from the recorded `tools/list` (itself held to the code by
    tests/test_mcp_catalog.py): a tool changed without the page made again fails here."""
    import json

    from core.stdio_early import CATALOG_PATH
    from core.tool_reference import PAGE, reference_text

    expected = reference_text(json.loads(CATALOG_PATH.read_text(encoding="utf-8")))
    assert PAGE.read_text(encoding="utf-8") == expected, (
        "docs/tools.md differs from core/mcp_catalog.json: run "
        "`python manage.py runmcp --write-catalog` (`make catalog`), which writes both"
    )
