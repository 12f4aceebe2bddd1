"""Absolute links from SITE_URL, the system check that refuses a malformed one, and the
URLconf an answer's links are reversed in (LINKS_URLCONF)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import NoReverseMatch, URLResolver, reverse
from django.urls.converters import IntConverter

from config import urls_pages
from core.links import absolute_url, link_path, site_url_check
from tests.conftest import PYTHON, ROOT, STARTUP_DEADLINE, subprocess_env


def test_a_path_is_joined_to_the_site_and_a_full_url_is_left_alone(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SITE_URL = "https://hub.example.org/tools/"
    assert absolute_url("/normagpt/runs/3/") == "https://hub.example.org/tools/normagpt/runs/3/"
    assert absolute_url("media/p.png") == "https://hub.example.org/tools/media/p.png"
    assert absolute_url("https://s3.example.org/b/p.png") == "https://s3.example.org/b/p.png"


@pytest.mark.parametrize("value", ["hub.example.org", "ftp://hub.example.org", "http://", ""])
def test_a_site_url_without_an_http_scheme_and_host_stops_start_up(settings, value) -> None:  # type: ignore[no-untyped-def]
    settings.SITE_URL = value
    (error,) = site_url_check()
    assert error.id == "core.E001"
    assert "SITE_URL" in error.msg


def test_the_default_site_url_passes(settings) -> None:  # type: ignore[no-untyped-def]
    assert site_url_check() == []


# --- where an answer's links are reversed ----------------------------------------------

LOADED = """
import sys
import django
django.setup()
from normagpt.formatting import page_url
from problems.sheet_links import sheet_link
print(page_url(5, "5.1"), sheet_link("sheets/v.pdf").split("?")[0])
print(sorted(m for m in ("config.urls", "drf_spectacular.views") if m in sys.modules))
"""


def test_an_answer_s_links_load_no_admin_api_or_api_docs() -> None:
    """A desktop client's process links its first search's pages: reversed in the whole
    URLconf, that imported the admin (autodiscovered), DRF and drf-spectacular first, 0.44 s
    of the first call of every session."""
    made = subprocess.run(
        [PYTHON, "-c", LOADED], cwd=ROOT, env=subprocess_env(), capture_output=True, text=True,
        timeout=STARTUP_DEADLINE, check=True,
    )  # fmt: skip
    links, loaded = made.stdout.splitlines()
    assert links == "http://127.0.0.1:8000/normagpt/pages/5/?clause=5.1#cited /media/sheets/"
    assert loaded == "[]"


def _named(patterns: list[Any], namespace: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Each named pattern's name (with its namespace) and arguments its converters take."""
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _named(entry.url_patterns, inner)
        elif entry.name:
            converters = entry.pattern.converters
            yield (
                f"{namespace}{entry.name}",
                {
                    key: 7 if isinstance(converter, IntConverter) else "x"
                    for key, converter in converters.items()
                },
            )


def test_every_page_an_answer_links_to_is_where_the_whole_urlconf_mounts_it() -> None:
    named = list(_named(urls_pages.urlpatterns))
    assert {"normagpt:page", "normagpt:page-image", "normagpt:run", "problems-sheet"} <= {
        name for name, _ in named
    }
    for name, kwargs in named:
        light = reverse(name, urlconf="config.urls_pages", kwargs=kwargs)
        assert light == reverse(name, urlconf="config.urls", kwargs=kwargs)


def test_a_link_to_a_view_the_light_urlconf_lacks_comes_from_the_whole_one(settings) -> None:  # type: ignore[no-untyped-def]
    assert link_path("anki_bridge:package", "abc") == "/api/anki/packages/abc/"
    settings.LINKS_URLCONF = None  # a deployment's own ROOT_URLCONF
    assert link_path("normagpt:page", 3) == "/normagpt/pages/3/"
    with pytest.raises(NoReverseMatch):
        link_path("no-such-view")
