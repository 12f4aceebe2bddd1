"""The Anki bridge's three ways out (AnkiConnect, the search API, image URLs) on core.http.

Each client cuts a server that trickles one byte a second at the call's deadline (not at
a per-read timeout), refuses a 20 MB body at its cap, and names its service in the error.
AnkiConnect's stand-in answers HTTP/1.1 without `Connection: close` and closes the socket
a moment later, as the add-on does: the bridge opens a connection per request, while a
plain keep-alive client sends its next request into the dying socket.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import httpx
import pytest

from anki_bridge import search
from anki_bridge.client import AnkiClient
from anki_bridge.exceptions import AnkiError, AnkiUnavailable, SearchUnavailable
from anki_bridge.images import ImageProblem
from core.image_fetch import image_fetch
from tests.upstream_servers import MB, RawServer, answer, huge, read_request, serve, trickle

DEADLINE = 1
CUT_WITHIN = 20  # seconds; the trickle would hold a per-read client for two minutes
VERSION = b'{"result": 6, "error": null}'


@contextmanager
def elapsed() -> Iterator[list[float]]:
    took: list[float] = []
    started = time.monotonic()
    try:
        yield took
    finally:
        took.append(time.monotonic() - started)


def anki_like(linger: float = 0.05) -> AbstractContextManager[RawServer]:
    """AnkiConnect's manner: one answer per connection, no `Connection: close`, then close.

    The add-on closes the socket on its next poll of Anki's main thread, a moment after
    the answer: a client that reuses the connection meanwhile is dropped unanswered.
    """

    def handle(server: RawServer, conn: socket.socket) -> None:
        if read_request(conn, server) is None:
            return
        conn.settimeout(5)
        conn.sendall(answer(200, VERSION, headers={"Content-Type": "application/json"}))
        server.wait(linger)

    return serve(handle)


@pytest.fixture
def anki_settings(settings):  # type: ignore[no-untyped-def]
    settings.ANKI_CONNECT_KEY = ""
    settings.ANKI_CONNECT_TIMEOUT = DEADLINE
    return settings


# --- AnkiConnect ------------------------------------------------------------------------


def test_anki_connect_trickling_is_cut_at_the_deadline(anki_settings) -> None:  # type: ignore[no-untyped-def]
    with trickle() as server, elapsed() as took:
        url = anki_settings.ANKI_CONNECT_URL = server.url
        with AnkiClient() as anki, pytest.raises(AnkiUnavailable) as caught:
            anki.version()
    assert took[0] < CUT_WITHIN
    assert caught.value.message == (
        f"Anki did not answer within {DEADLINE} s at {url}: "
        "is a dialog open in Anki, or is it busy syncing?"
    )
    assert caught.value.service == "Anki"


@pytest.mark.parametrize("declared", [True, False])
def test_anki_connect_20_mb_is_refused_at_the_cap(anki_settings, declared: bool) -> None:  # type: ignore[no-untyped-def]
    anki_settings.ANKI_CONNECT_TIMEOUT = 30
    with huge(size=20 * MB, content_length=declared) as server:
        anki_settings.ANKI_CONNECT_URL = server.url
        with AnkiClient() as anki, pytest.raises(AnkiError) as caught:
            anki.version()
    assert "Anki answered more than 16,777,216 bytes at http://127.0.0.1:" in caught.value.message
    assert caught.value.service == "Anki"
    assert not caught.value.retryable


def test_fifty_calls_to_an_anki_that_closes_after_each_answer_all_succeed(anki_settings) -> None:  # type: ignore[no-untyped-def]
    anki_settings.ANKI_CONNECT_TIMEOUT = 10
    with anki_like() as server:
        anki_settings.ANKI_CONNECT_URL = server.url
        with AnkiClient() as anki:
            assert [anki.version() for _ in range(50)] == [6] * 50
    assert len(server.requests) == 50
    assert server.connections == 50  # a connection of its own per request
    assert all(r.headers.get("connection") == "close" for r in server.requests)


def test_a_keep_alive_client_fails_on_the_same_stand_in() -> None:
    """The stand-in is faithful: reusing its connection is what breaks real AnkiConnect."""
    failures = 0
    with anki_like() as server, httpx.Client(base_url=server.url, timeout=10) as plain:
        for _ in range(50):
            try:
                plain.post("/", json={"action": "version", "version": 6})
            except httpx.TransportError:
                failures += 1
    assert failures > 0


# --- the search API ---------------------------------------------------------------------


@pytest.fixture
def search_settings(settings):  # type: ignore[no-untyped-def]
    settings.SEARCH_API_KEY = ""
    settings.SEARCH_API_TIMEOUT = DEADLINE
    return settings


def test_the_search_api_trickling_is_cut_at_the_deadline(search_settings) -> None:  # type: ignore[no-untyped-def]
    with trickle() as server, elapsed() as took:
        search_settings.SEARCH_API_URL = f"{server.url}/search"
        with pytest.raises(SearchUnavailable) as caught:
            search.search_run(query="q")
    assert took[0] < CUT_WITHIN
    assert caught.value.message == f"the search API did not answer within {DEADLINE} s"
    assert caught.value.service == "search API"


@pytest.mark.parametrize("declared", [True, False])
def test_a_20_mb_search_answer_is_refused_at_the_cap(search_settings, declared: bool) -> None:  # type: ignore[no-untyped-def]
    search_settings.SEARCH_API_TIMEOUT = 30
    with huge(size=20 * MB, content_length=declared) as server:
        search_settings.SEARCH_API_URL = f"{server.url}/search"
        with pytest.raises(SearchUnavailable) as caught:
            search.search_run(query="q")
    assert caught.value.message == "the search API answered more than 5242880 bytes"
    assert caught.value.service == "search API"


# --- image URLs -------------------------------------------------------------------------


def fetch(url: str, **kwargs: Any) -> bytes:
    options = {
        "allow_private": True,
        "private_setting": "ANKI_IMAGE_ALLOW_PRIVATE",
        "max_bytes": 10 * MB,
        "timeout": DEADLINE,
        **kwargs,
    }
    return image_fetch(url, **options)


def test_an_image_host_trickling_is_cut_at_the_deadline() -> None:
    with trickle() as server, elapsed() as took, pytest.raises(ImageProblem) as caught:
        fetch(f"{server.url}/a.png")
    assert took[0] < CUT_WITHIN
    assert caught.value.code == "image_failed"
    assert caught.value.message == f"127.0.0.1 timed out after {DEADLINE} s"


def test_the_deadline_covers_the_headers_too() -> None:
    with trickle(headers_too=True) as server, pytest.raises(ImageProblem, match="timed out"):
        fetch(f"{server.url}/a.png")


@pytest.mark.parametrize("declared", [True, False])
def test_a_20_mb_image_is_refused_at_the_cap(declared: bool) -> None:
    with (
        huge(size=20 * MB, content_length=declared) as server,
        pytest.raises(ImageProblem) as caught,
    ):
        fetch(f"{server.url}/a.png", timeout=30)
    assert caught.value.code == "image_refused"
    assert caught.value.message == f"127.0.0.1: the body is over the {10 * MB}-byte cap"
