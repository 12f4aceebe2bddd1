"""The local AnkiConnect answers the 45 recorded exchanges of a real Anki as it did.

Ids and timestamps differ from run to run: a recorded id is learned the first time it
appears and must then come back consistently (the same deck id twice, the note id that
`addNote` returned in `notesInfo`); every other value must match exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import RECORDED, RECORDED_COPY, recorded_exchanges

BIG = 10**9  # ids (ms) and timestamps (s) are at least this large
CLOSE = {"Connection": "close"}


def is_volatile(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) >= BIG


def translate(value: Any, ids: dict[int, int]) -> Any:
    """A recorded request with the ids learned so far replaced by this run's ids."""
    if isinstance(value, dict):
        return {k: translate(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [translate(v, ids) for v in value]
    if isinstance(value, int) and value in ids:
        return ids[value]
    if isinstance(value, str):  # a search such as "nid:1795331676063"
        for recorded, actual in ids.items():
            value = value.replace(str(recorded), str(actual))
    return value


def match(recorded: Any, actual: Any, ids: dict[int, int], where: str = "body") -> None:
    """Assert `actual` equals `recorded` up to ids and timestamps (learned into `ids`)."""
    if is_volatile(recorded):
        assert is_volatile(actual), f"{where}: expected an id/timestamp, got {actual!r}"
        if ".cards[" in where:
            # Card ids are numbered apart from note ids: the recording's card has its note's
            # id only because both were made in one millisecond; no request sends it back.
            return
        learned = ids.setdefault(recorded, actual)
        assert learned == actual, f"{where}: id {recorded} came back as {actual}, was {learned}"
    elif isinstance(recorded, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        assert set(actual) == set(recorded), f"{where}: keys {sorted(actual)} != {sorted(recorded)}"
        for key, value in recorded.items():
            match(value, actual[key], ids, f"{where}.{key}")
    elif isinstance(recorded, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        assert len(actual) == len(recorded), f"{where}: {actual!r} != {recorded!r}"
        for i, (r, a) in enumerate(zip(recorded, actual, strict=True)):
            match(r, a, ids, f"{where}[{i}]")
    else:
        assert actual == recorded, f"{where}: {actual!r} != {recorded!r}"


def test_the_copy_in_the_tests_is_the_shared_fixture() -> None:
    if not RECORDED.exists():
        pytest.skip("the shared fixtures are not beside this checkout; the copy is used")
    assert json.loads(RECORDED.read_text()) == json.loads(RECORDED_COPY.read_text())


def test_every_recorded_exchange_gets_the_recorded_answer(tmp_path: Path) -> None:
    exchanges = recorded_exchanges()
    assert len(exchanges) == 45
    server = FakeAnki(tmp_path / "anki")
    server.state.misroute = False  # the recording's build carries the deck-routing fix
    media_source = tmp_path / "from_path.txt"
    media_source.write_text("from a path")
    ids: dict[int, int] = {}
    try:
        # AnkiConnect closes every connection after its answer: one connection per request.
        with httpx.Client(base_url=server.url, timeout=30, headers=CLOSE) as http:
            for exchange in exchanges:
                body = exchange["req"]
                try:
                    request = json.loads(body)
                except ValueError:
                    content = body.encode()  # the malformed-body exchange is sent as is
                else:
                    request = translate(request, ids)
                    params = request.get("params")
                    if isinstance(params, dict) and params.get("path"):
                        request["params"]["path"] = str(media_source)  # the recorder's temp file
                    content = json.dumps(request).encode()
                response = http.post("/", content=content)
                assert response.status_code == exchange["status"], exchange["label"]
                match(exchange["body"], response.json(), ids, exchange["label"])
    finally:
        server.stop()


def test_the_cyrillic_search_is_case_sensitive_and_bad_searches_carry_isolation_marks(
    anki: FakeAnki,
) -> None:
    def call(action: str, **params: Any) -> Any:
        body = {"action": action, "params": params, "version": 6}
        return httpx.post(anki.url, json=body, timeout=10, headers=CLOSE).json()

    call("createDeck", deck="X")
    added = call(
        "addNote",
        note={"deckName": "X", "modelName": "Basic", "fields": {"Front": "Привет", "Back": "b"}},
    )
    assert added["error"] is None
    assert call("findNotes", query="Привет")["result"] == [added["result"]]
    assert call("findNotes", query="привет")["result"] == []
    error = call("findNotes", query="prop:foo")["error"]
    assert "\u2068" in error
    assert "\u2069" in error
