"""The lock files hold every dependency of pyproject.toml, pinned at a version it allows,
each with the hashes of its files: installs (`make`) come from them alone."""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)", re.M)


def pins(lock: str) -> dict[str, str]:
    text = (ROOT / ".ci" / lock).read_text(encoding="utf-8")
    return {canonicalize_name(name): version for name, version in PIN.findall(text)}


@pytest.mark.parametrize(
    ("lock", "wanted"),
    [
        ("requirements.lock", PROJECT["dependencies"]),
        (
            "requirements-dev.lock",
            PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"],
        ),
    ],
)
def test_each_dependency_is_pinned_at_a_version_pyproject_allows(
    lock: str, wanted: list[str]
) -> None:
    pinned = pins(lock)
    for line in wanted:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is missing from .ci/{lock}: run `make lock`"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{name}=={pinned[name]} in .ci/{lock} is outside {requirement.specifier}: "
            "run `make lock`"
        )


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-dev.lock"])
def test_every_pin_carries_hashes(lock: str) -> None:
    text = (ROOT / ".ci" / lock).read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9_.-]+==)", text.split("\n", 2)[2])
    assert len(blocks) > 50
    assert all("--hash=sha256:" in block for block in blocks)
