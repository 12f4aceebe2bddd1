"""Absolute links from SITE_URL, and the system check that refuses a malformed one."""

from __future__ import annotations

import pytest

from core.links import absolute_url, site_url_check


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
