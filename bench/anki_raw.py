"""The clients `bench/anki.py` measures the bridge against, each written as well as a
user would write it by hand: the plain one, the best raw one, the floor (the best raw one
doing the bridge's own image work), and their text counterparts. None keeps a journal or
checks anything. Imported once Django is set up (`bench/anki.py` sets it up)."""

from __future__ import annotations

import base64
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from anki_bridge.client import new_elsewhere_query
from anki_bridge.images import image_prepare
from bench.anki_standin import Anki, ask

FILES = Path(tempfile.mkdtemp(prefix="bench-anki-files-"))


def timed(run: Callable[[Anki], None]) -> Callable[[Anki], float]:
    def wrapper(anki: Anki) -> float:
        started = time.perf_counter()
        run(anki)
        return time.perf_counter() - started

    return wrapper


def naive_images(images: list[bytes]) -> Callable[[Anki], float]:
    """The plain client a user writes: one keep-alive HTTP client, one storeMediaFile (the
    image as it came) + one addNote per note. AnkiConnect closes every connection after
    its answer; the client opens the next one (a request into a dead socket is sent once
    more, as any HTTP library's retry does)."""

    def run(anki: Anki) -> None:
        with httpx.Client(timeout=120) as client:

            def call(action: str, **params: Any) -> Any:
                body = {"action": action, "params": params, "version": 6}
                for attempt in (1, 2):
                    try:
                        return client.post(anki.url, json=body).json()["result"]
                    except httpx.TransportError:
                        if attempt == 2:
                            raise
                return None

            for i, data in enumerate(images):
                name = call("storeMediaFile", filename=f"naive_{i}.jpg",
                            data=base64.b64encode(data).decode())  # fmt: skip
                fields = {"Prompt": f"Что на снимке №{i}?", "Response": f'<img src="{name}">'}
                note = {"deckName": anki.deck, "modelName": anki.model, "fields": fields}
                call("addNote", note=note)

    return timed(run)


def best_raw_images(images: list[bytes]) -> Callable[[Anki], float]:
    """The best hand-written client: the files written to disk, stored by `path` in one
    `multi`, the notes in one `multi(findCards, addNotes, findCards)`, then one changeDeck
    of the cards filed elsewhere. It keeps no journal and checks nothing."""

    def run(anki: Anki) -> None:
        folder = Path(tempfile.mkdtemp(dir=FILES))
        stores = []
        for i, data in enumerate(images):
            path = folder / f"raw_{i}.jpg"
            path.write_bytes(data)
            stores.append({"action": "storeMediaFile",
                           "params": {"filename": path.name, "path": str(path)}})  # fmt: skip
        names = ask(anki.url, "multi", actions=stores)
        notes = [
            {"deckName": anki.deck, "modelName": anki.model,
             "fields": {"Prompt": f"Что на снимке №{i}?", "Response": f'<img src="{name}">'}}
            for i, name in enumerate(names)
        ]  # fmt: skip
        place(anki, notes)

    return timed(run)


def floor_images(images: list[bytes]) -> Callable[[Anki], float]:
    """The floor: the best raw client doing the bridge's own work on the images too — each
    resized to 768 px (JPEG 85) on every core with the bridge's function — and nothing
    else (no transport, no journal, no checks)."""

    def run(anki: Anki) -> None:
        workers = min(os.cpu_count() or 1, len(images))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            prepared = list(pool.map(lambda data: image_prepare(data, max_side=768)[0], images))
        best_raw_images(prepared)(anki)

    return timed(run)


def place(anki: Anki, notes: list[dict[str, Any]]) -> None:
    """addNotes between two searches for today's cards outside the deck, in one `multi`;
    then one changeDeck of the cards the second search found and the first did not."""
    elsewhere = {
        "action": "findCards",
        "params": {"query": new_elsewhere_query(anki.deck_id)},
    }
    actions = [elsewhere, {"action": "addNotes", "params": {"notes": notes}}, elsewhere]
    before, _, after = ask(anki.url, "multi", actions=actions)
    cards = sorted(set(after) - set(before))
    if cards:
        ask(anki.url, "changeDeck", cards=cards, deck=anki.deck)


def text_items(count: int) -> list[dict[str, str]]:
    return [
        {"Prompt": f"Вопрос №{i}: что такое MCP?", "Response": f"Ответ №{i}", "Context": "bench"}
        for i in range(count)
    ]


def raw_add_notes(count: int) -> Callable[[Anki], float]:
    def run(anki: Anki) -> None:
        notes = [
            {"deckName": anki.deck, "modelName": anki.model, "fields": item}
            for item in text_items(count)
        ]
        ask(anki.url, "addNotes", notes=notes)

    return timed(run)


def raw_add_notes_placed(count: int) -> Callable[[Anki], float]:
    """The least a plain client must do for its cards to end in the deck, in two requests
    (`place`). It keeps no journal and checks nothing."""

    def run(anki: Anki) -> None:
        notes = [
            {"deckName": anki.deck, "modelName": anki.model, "fields": item}
            for item in text_items(count)
        ]
        place(anki, notes)

    return timed(run)
