"""Fixtures of the problem bank tests: the fake site on 127.0.0.1 and the real blocks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core import background
from tests.conftest import ROOT
from tests.problems.fake_site import FakeSite, serve

# Copied from ../shared/fixtures/sdamgia (what was measured on the real site): the tests
# read nothing outside the repository.
REAL = ROOT / "tests" / "fixtures" / "sdamgia"
REAL_BLOCKS = REAL / "math-ege_type1_problem_blocks_2023-01.json"


@pytest.fixture
def fake_site(settings) -> Iterator[FakeSite]:  # type: ignore[no-untyped-def]
    """A local СДАМ ГИА with no delays between requests and fast retries."""
    fake = FakeSite()
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0
    settings.SDAMGIA_RETRIES = 1
    settings.SDAMGIA_TIMEOUT = 3
    settings.SDAMGIA_MAX_BODY_BYTES = 2 * 1024 * 1024
    yield fake
    # A stale answer asks the site again in the background (`problems.stored`): that work
    # ends here, against this test's site and rows, not the next test's.
    background.drain(timeout=30)
    server.shutdown()
    server.server_close()


def real_items() -> list[dict[str, Any]]:
    """The 276 real problem blocks."""
    return json.loads(REAL_BLOCKS.read_text(encoding="utf-8"))["items"]  # type: ignore[no-any-return]


@pytest.fixture
def real_blocks() -> list[dict[str, Any]]:
    return real_items()


def unique_real(items: list[dict[str, Any]]) -> dict[str, str]:
    """problem id → block html, first occurrence (the file repeats some across categories)."""
    blocks: dict[str, str] = {}
    for item in items:
        blocks.setdefault(str(item["problem_id"]), item["block_html"])
    return blocks


__all__ = ["REAL", "Path", "real_items", "unique_real"]
