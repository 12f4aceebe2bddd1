"""The AnkiConnect client: envelopes, `multi`, and every way Anki can fail."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from anki_bridge import client as ankiconnect
from anki_bridge.client import AnkiClient, Outcome, clean_error
from anki_bridge.exceptions import AnkiError, AnkiUnavailable
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.conftest import free_port


def client_with(handler: Any) -> AnkiClient:
    return AnkiClient(url="http://127.0.0.1:1", key="", transport=httpx.MockTransport(handler))


def test_every_request_is_protocol_6_and_multi_answers_per_action(anki: FakeAnki) -> None:
    with AnkiClient() as client:
        assert client.version() == 6
        outcomes = client.multi(
            [
                ankiconnect.create_deck("Default"),
                ankiconnect.model_field_names("Nope"),
                {**ankiconnect.create_deck("x"), "action": "nope"},
            ]
        )
    assert outcomes == [
        Outcome(result=1),
        Outcome(error="model was not found: Nope"),
        Outcome(error="unsupported action"),
    ]
    assert anki.state.requests == [["version"], ["multi", "createDeck", "modelFieldNames", "nope"]]


def test_a_refused_action_raises_with_anki_s_text_without_isolation_marks(anki: FakeAnki) -> None:
    with AnkiClient() as client, pytest.raises(AnkiError) as caught:
        client.find_cards("prop:foo")
    assert caught.value.message == (
        "Anki refused findCards: Invalid search: `prop:` was given an invalid argument '`foo`'."
    )
    assert caught.value.service == "Anki"
    assert clean_error("\u2068x\u2069 ") == "x"


def test_anki_closed_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with AnkiClient(url=url) as client, pytest.raises(AnkiUnavailable) as caught:
        client.version()
    assert caught.value.message == (
        f"Anki is not reachable at {url}: is Anki open with AnkiConnect installed?"
    )
    assert caught.value.retryable


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (httpx.Response(403, text="no"), "Anki answered HTTP 403 at http://127.0.0.1:1"),
        (httpx.Response(200, text="<html>"), "is not JSON: is ANKI_CONNECT_URL AnkiConnect?"),
        (httpx.Response(200, json=6), "without the version-6 envelope"),
    ],
)
def test_answers_that_are_not_anki_connect_are_errors(
    response: httpx.Response, expected: str
) -> None:
    with client_with(lambda request: response) as client, pytest.raises(AnkiError) as caught:
        client.version()
    assert expected in caught.value.message


def test_a_slow_anki_is_unavailable_with_the_timeout() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with client_with(slow) as client, pytest.raises(AnkiUnavailable, match="did not answer"):
        client.version()


def test_the_key_goes_into_the_request_and_every_multi_action() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        return httpx.Response(200, json={"result": [{"result": 1, "error": None}], "error": None})

    with AnkiClient(url="http://x", key="k", transport=httpx.MockTransport(handler)) as client:
        assert client.multi([ankiconnect.create_deck("d")]) == [Outcome(result=1)]
    assert bodies[0]["key"] == "k"
    assert bodies[0]["version"] == 6
    assert bodies[0]["params"]["actions"][0]["key"] == "k"
