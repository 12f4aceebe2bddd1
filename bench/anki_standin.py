"""The Anki a measurement of `bench/anki.py` runs against: a new profile of the faithful
AnkiConnect stand-in (tests/anki_bridge/ankiconnect_server.py), or a real Anki
(ANKI_REAL_URL) reached through a pass-through that counts requests and bytes. Both count
what a client sent them and how many notes have their cards in the asked deck. Imported
once Django is set up (`bench/anki.py` sets it up)."""

from __future__ import annotations

import dataclasses
import http.server
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.core.cache import cache

from anki_bridge.client import create_model
from anki_bridge.models import Media, Note
from anki_bridge.notemodel import DEFAULT_MODEL
from tests.anki_bridge.ankiconnect_server import FakeAnki

MODEL = DEFAULT_MODEL.name
DECK = "Bench"
BENCH_MEDIA = "toolhub-bench-"  # the bench's media files begin so (a real Anki's are the user's)
PROFILES = Path(tempfile.mkdtemp(prefix="bench-anki-profiles-"))
CLOSE = {"Connection": "close"}


def ask(url: str, action: str, **params: Any) -> Any:
    """One AnkiConnect request the way a careful plain client sends it (no keep-alive)."""
    body = {"action": action, "params": params, "version": 6}
    answer = httpx.post(url, json=body, headers=CLOSE, timeout=900).json()
    if answer["error"] is not None:
        raise RuntimeError(f"{action}: {answer['error']}")
    return answer["result"]


class StandIn:
    """A new profile of the faithful stand-in per measurement."""

    label = "stand-in"

    def __init__(self) -> None:
        self.fake = FakeAnki(Path(tempfile.mkdtemp(dir=PROFILES)))
        self.url = self.fake.url
        self.deck, self.model = DECK, MODEL
        self.deck_id = ask(self.url, "createDeck", deck=DECK)
        ask(self.url, "createModel", **create_model(DEFAULT_MODEL)["params"])
        self.reset_counts()

    def reset_counts(self) -> None:
        self.fake.state.requests.clear()
        self.fake.state.request_bytes.clear()

    def requests(self) -> int:
        return len(self.fake.state.requests)

    def request_bytes(self) -> int:
        return sum(self.fake.state.request_bytes)

    def notes_placed(self) -> tuple[int, int]:
        """(notes whose cards are all in the deck, notes)."""
        notes = self.fake.notes()
        return sum(1 for note in notes if note["decks"] == [self.deck]), len(notes)

    def first_request_seen(self) -> bool:
        return bool(self.fake.state.requests)

    def stop(self) -> None:
        self.fake.stop()


class CountingPassThrough(http.server.ThreadingHTTPServer):
    """Forwards each request to the real add-on and counts requests and bytes; answers as
    the add-on does (HTTP/1.1, no `Connection: close`, then the socket closed)."""

    daemon_threads = True

    def __init__(self, target: str) -> None:
        self.target = target
        self.sizes: list[int] = []
        super().__init__(("127.0.0.1", 0), PassThroughHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class PassThroughHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: CountingPassThrough

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.sizes.append(len(body))
        answer = httpx.post(self.server.target, content=body, headers=CLOSE, timeout=900)
        self.send_response(200)
        self.send_header("Content-Type", "text/json")
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        return None


class RealAnki:
    """A real Anki (ANKI_REAL_URL): a new deck per measurement in the bench's note type,
    reached through a `CountingPassThrough`; its notes and deck deleted afterwards."""

    label = "real Anki"
    MODEL = "toolhub-bench"
    runs = 0

    def __init__(self, target: str) -> None:
        RealAnki.runs += 1
        self.target = target
        self.proxy = CountingPassThrough(target)
        self.url = self.proxy.url
        self.deck, self.model = f"toolhub-bench::{os.getpid()}-{RealAnki.runs}", self.MODEL
        if self.MODEL not in ask(target, "modelNames"):
            bench_model = dataclasses.replace(DEFAULT_MODEL, name=self.MODEL)
            ask(target, "createModel", **create_model(bench_model)["params"])
        self._clear_notes()
        self.deck_id = ask(target, "createDeck", deck=self.deck)
        self.reset_counts()

    def _clear_notes(self) -> None:
        notes = ask(self.target, "findNotes", query=f'"note:{self.MODEL}"')
        ask(self.target, "deleteNotes", notes=notes)

    def reset_counts(self) -> None:
        self.proxy.sizes.clear()

    def requests(self) -> int:
        return len(self.proxy.sizes)

    def request_bytes(self) -> int:
        return sum(self.proxy.sizes)

    def notes_placed(self) -> tuple[int, int]:
        notes = ask(self.target, "findNotes", query=f'"note:{self.MODEL}"')
        outside = ask(self.target, "findNotes",
                       query=f'"note:{self.MODEL}" -"deck:{self.deck}"')  # fmt: skip
        return len(notes) - len(outside), len(notes)

    def first_request_seen(self) -> bool:
        return bool(self.proxy.sizes)

    def stop(self) -> None:
        self._clear_notes()
        ask(self.target, "deleteDecks", decks=[self.deck], cardsToo=True)
        # The bridge's pictures (named by their content: left, the next run would find
        # them there and send none).
        for name in ask(self.target, "getMediaFilesNames", pattern=f"{BENCH_MEDIA}*"):
            ask(self.target, "deleteMediaFile", filename=name)
        self.proxy.shutdown()
        self.proxy.server_close()


Anki = StandIn | RealAnki


def fresh_anki(real: str | None = None) -> Anki:
    """A new Anki for one measurement (the stand-in, or the real one at `real`), with the
    deck and the model, and an empty journal."""
    Note.objects.all().delete()
    Media.objects.all().delete()
    cache.clear()
    anki = RealAnki(real) if real else StandIn()
    settings.ANKI_CONNECT_URL = anki.url
    return anki
