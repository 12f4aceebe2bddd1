"""Every command README tells a user to type exists, with every option it shows.

The commands are read from README's code spans and blocks: `make <target>` must be a
Makefile target; `python manage.py <command> --option …` a management command whose
parser knows each option (and each `--apps` name an app with tools).
"""

from __future__ import annotations

import re

import pytest
from django.core.management import get_commands, load_command_class

from core.mcp_server import load_registries
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
CODE = re.findall(r"`([^`\n]+)`", README) + re.findall(r"```sh\n(.*?)```", README, re.S)


def commands(prefix: str) -> list[str]:
    """Each command line of README that starts with `prefix` (tables escape `|` as `\\|`)."""
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
