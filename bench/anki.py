"""Anki benchmark on the faithful AnkiConnect stand-in (tests/anki_bridge/ankiconnect_server.py).

    .venv/bin/python bench/anki.py [--notes 200] [--only images|text]

The stand-in behaves as the real add-on measured (../shared/fixtures/ankiconnect/
BEHAVIOUR.md): one request at a time on a 25 ms timer, a receive cost that grows faster
than the request, a connection closed after every answer, new cards filed under the note
type's last-used deck. The bridge is driven the way a desktop client drives it: a new
`manage.py runmcp` process over stdio, the call written as one JSON-RPC line (a 200-image
call is a 100 MB line). Two measurements, each with its baselines in the same run:

1. images: `anki.add_from_model` with N notes, each with a 1000×1000 JPEG, in one call
   (media by path, as when Anki runs on this machine; and by data, as when it does not),
   against the plain client a user writes (one keep-alive HTTP client, `storeMediaFile` +
   `addNote` per note) and the best hand-written one (files by path in one `multi`,
   `addNotes`, `changeDeck`);
2. text: N text notes in one `anki.add_from_model` call against one raw `addNotes` (and
   against the least a plain client must add for its cards to be in the deck).

Columns: wall time, HTTP requests, bytes sent to Anki, notes whose cards are in the asked
deck, and the ratio to the baseline. Uses a temporary SQLite database unless DATABASE_URL
is set.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's folder comes first on the path, and this file is `anki`:
# the root replaces it, so `import anki` finds Anki's package.
sys.path[0] = str(ROOT)
TMP = Path(tempfile.mkdtemp(prefix="bench-anki-"))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/bench.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from PIL import Image  # noqa: E402

from anki_bridge.client import create_model, new_elsewhere_query  # noqa: E402
from anki_bridge.models import Media, Note  # noqa: E402
from anki_bridge.notemodel import DEFAULT_MODEL  # noqa: E402
from bench.common import print_table  # noqa: E402
from tests.anki_bridge.ankiconnect_server import FakeAnki  # noqa: E402

MODEL = DEFAULT_MODEL.name
DECK = "Bench"
REPEAT = 7
DECK_IDS: dict[str, int] = {}  # Anki's url → the bench deck's id, as createDeck answered
# Anki's url → (the bridge call's line in bytes, seconds until its first request reached Anki)
FIRST_REQUEST: dict[str, tuple[int, float]] = {}
HEADER = [
    "client",
    "wall",
    "per note",
    "HTTP requests",
    "sent to Anki",
    "in the deck",
    "vs baseline",
]


def photo(seed: int, side: int = 1000) -> bytes:
    """A 1000×1000 JPEG that compresses like a photo (gradient, tint, noise)."""
    rng = random.Random(seed)
    image = Image.linear_gradient("L").resize((side, side)).convert("RGB")
    tint = Image.new("RGB", (side, side), tuple(rng.randrange(256) for _ in range(3)))
    image = Image.blend(image, tint, 0.5)
    noise = Image.effect_noise((side, side), 40).convert("RGB")
    image = Image.blend(image, noise, 0.25)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def fresh_anki() -> FakeAnki:
    """A new Anki profile with the deck and the default model, and an empty journal."""
    anki = FakeAnki(Path(tempfile.mkdtemp(dir=TMP)))
    settings.ANKI_CONNECT_URL = anki.url
    Note.objects.all().delete()
    Media.objects.all().delete()
    cache.clear()
    DECK_IDS[anki.url] = raw(anki, "createDeck", deck=DECK)
    raw(anki, "createModel", **create_model(DEFAULT_MODEL)["params"])
    anki.state.requests.clear()
    anki.state.request_bytes.clear()
    return anki


def raw(anki: FakeAnki, action: str, **params: Any) -> Any:
    """One AnkiConnect request the way a careful plain client sends it (no keep-alive)."""
    body = {"action": action, "params": params, "version": 6}
    answer = httpx.post(anki.url, json=body, headers={"Connection": "close"}, timeout=120).json()
    if answer["error"] is not None:
        raise RuntimeError(f"{action}: {answer['error']}")
    return answer["result"]


def in_deck(anki: FakeAnki) -> int:
    return sum(1 for note in anki.notes() if note["decks"] == [DECK])


def measure(
    name: str, run: Callable[[FakeAnki], float], notes: int, repeat: int = 1
) -> dict[str, Any]:
    """Run on a fresh Anki (`repeat` times: the median wall time, the last run's counts);
    `run` returns the wall time of the part it measures."""
    walls = []
    for _ in range(repeat):
        anki = fresh_anki()
        walls.append(run(anki))
        if len(walls) < repeat:
            anki.stop()
    result = {
        "name": name,
        "url": anki.url,
        "wall": statistics.median(walls),
        "notes": notes,
        "requests": len(anki.state.requests),
        "bytes": sum(anki.state.request_bytes),
        "in_deck": in_deck(anki),
        "total": len(anki.notes()),
    }
    anki.stop()
    return result


def row(m: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    ratio = baseline["wall"] / m["wall"]
    return [
        m["name"],
        f"{m['wall']:.2f} s",
        f"{m['wall'] / m['notes'] * 1000:.1f} ms",
        str(m["requests"]),
        f"{m['bytes'] / 1e6:.2f} MB",
        f"{m['in_deck']}/{m['total']}",
        "baseline"
        if m is baseline
        else f"{ratio:.2f}× faster"
        if ratio >= 1
        else f"{1 / ratio:.2f}× slower",
    ]


def bridge_call(items: list[dict[str, Any]], **env: str) -> Callable[[FakeAnki], float]:
    """One `anki.add_from_model` call over stdio, as a desktop client makes it: a new
    `manage.py runmcp` process (its start and `initialize` not timed), the call written as
    one JSON-RPC line, timed until its answer comes back."""
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "anki.add_from_model", "arguments": {"deck": DECK, "items": items}}},
        ensure_ascii=False,
    ).encode() + b"\n"  # fmt: skip

    def call(anki: FakeAnki) -> float:
        server = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "runmcp", "--apps", "anki_bridge"],
            cwd=ROOT,
            env={**os.environ, "ANKI_CONNECT_URL": anki.url, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert server.stdin is not None
        assert server.stdout is not None
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}  # fmt: skip
        server.stdin.write(json.dumps(hello).encode() + b"\n")
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        server.stdin.flush()
        server.stdout.readline()
        anki.state.requests.clear()
        anki.state.request_bytes.clear()
        first: list[float] = []
        done = threading.Event()

        def watch() -> None:  # when the bridge's first request reaches Anki
            while not done.wait(0.005):
                if anki.state.requests:
                    first.append(time.perf_counter())
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        started = time.perf_counter()
        server.stdin.write(line)
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        wall = time.perf_counter() - started
        done.set()
        watcher.join()
        FIRST_REQUEST[anki.url] = (len(line), first[0] - started if first else wall)
        server.stdin.close()
        server.wait(timeout=120)
        data = answer["result"].get("structuredContent") or {}
        if answer["result"].get("isError") or data.get("added") != len(items):
            raise RuntimeError(f"the bridge answered {str(answer)[:500]}")
        return wall

    return call


def timed(run: Callable[[FakeAnki], None]) -> Callable[[FakeAnki], float]:
    def wrapper(anki: FakeAnki) -> float:
        started = time.perf_counter()
        run(anki)
        return time.perf_counter() - started

    return wrapper


def image_items(images: list[bytes]) -> list[dict[str, Any]]:
    return [
        {
            "Prompt": f"Что на снимке №{i}?",
            "Response": f"Снимок №{i}",
            "images": [
                {"image_base64": base64.b64encode(data).decode(), "target_field": "Response"}
            ],
        }
        for i, data in enumerate(images)
    ]


def naive_images(images: list[bytes]) -> Callable[[FakeAnki], float]:
    """The plain client a user writes: one keep-alive HTTP client, one storeMediaFile (the
    image as it came) + one addNote per note. AnkiConnect closes every connection after
    its answer; the client opens the next one (a request into a dead socket is sent once
    more, as any HTTP library's retry does)."""

    def run(anki: FakeAnki) -> None:
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
                call("addNote", note={"deckName": DECK, "modelName": MODEL, "fields": fields})

    return timed(run)


def best_raw_images(images: list[bytes]) -> Callable[[FakeAnki], float]:
    """The best hand-written client: the files written to disk, stored by `path` in one
    `multi`, the notes in one `multi(findCards, addNotes, findCards)`, then one changeDeck
    of the cards filed elsewhere. It keeps no journal and checks nothing."""

    def run(anki: FakeAnki) -> None:
        folder = Path(tempfile.mkdtemp(dir=TMP))
        stores = []
        for i, data in enumerate(images):
            path = folder / f"raw_{i}.jpg"
            path.write_bytes(data)
            stores.append({"action": "storeMediaFile",
                           "params": {"filename": path.name, "path": str(path)}})  # fmt: skip
        names = raw(anki, "multi", actions=stores)
        notes = [
            {"deckName": DECK, "modelName": MODEL,
             "fields": {"Prompt": f"Что на снимке №{i}?", "Response": f'<img src="{name}">'}}
            for i, name in enumerate(names)
        ]  # fmt: skip
        place(anki, notes)

    return timed(run)


def place(anki: FakeAnki, notes: list[dict[str, Any]]) -> None:
    """addNotes between two searches for today's cards outside the deck, in one `multi`;
    then one changeDeck of the cards the second search found and the first did not."""
    elsewhere = {
        "action": "findCards",
        "params": {"query": new_elsewhere_query(DECK_IDS[anki.url])},
    }
    actions = [elsewhere, {"action": "addNotes", "params": {"notes": notes}}, elsewhere]
    before, _, after = raw(anki, "multi", actions=actions)  # bare results (no "version")
    cards = sorted(set(after) - set(before))
    if cards:
        raw(anki, "changeDeck", cards=cards, deck=DECK)


def text_items(count: int) -> list[dict[str, str]]:
    return [
        {"Prompt": f"Вопрос №{i}: что такое MCP?", "Response": f"Ответ №{i}", "Context": "bench"}
        for i in range(count)
    ]


def raw_add_notes(count: int) -> Callable[[FakeAnki], float]:
    def run(anki: FakeAnki) -> None:
        notes = [
            {"deckName": DECK, "modelName": MODEL, "fields": item} for item in text_items(count)
        ]
        raw(anki, "addNotes", notes=notes)

    return timed(run)


def raw_add_notes_placed(count: int) -> Callable[[FakeAnki], float]:
    """The least a plain client must do for its cards to end in the deck, in two requests
    (`place`). It keeps no journal and checks nothing."""

    def run(anki: FakeAnki) -> None:
        notes = [
            {"deckName": DECK, "modelName": MODEL, "fields": item} for item in text_items(count)
        ]
        place(anki, notes)

    return timed(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--only", choices=["images", "text"], help="one of the two measurements")
    args = parser.parse_args()
    n = args.notes
    call_command("migrate", verbosity=0)
    if args.only != "text":
        images_bench(n)
    if args.only != "images":
        text_bench(n)


def images_bench(n: int) -> None:
    images = [photo(i) for i in range(n)]
    size = sum(len(i) for i in images) / len(images) / 1024
    print(f"{n} notes, one 1000×1000 JPEG each (mean {size:.0f} KB), on {os.cpu_count()} cores;"
          " the bridge over stdio, one call")  # fmt: skip
    naive = measure(
        "naive: keep-alive client, storeMediaFile + addNote each", naive_images(images), n
    )
    best = measure("best raw: files by path in one multi, addNotes, changeDeck",
                   best_raw_images(images), n)  # fmt: skip
    items = image_items(images)
    by_path = measure("bridge over stdio (media by path)", bridge_call(items), n)
    by_data = measure(
        "bridge over stdio (media as data)", bridge_call(items, ANKI_MEDIA_UPLOAD="data"), n
    )
    print_table(HEADER, [row(m, naive) for m in (naive, best, by_path, by_data)])
    print(f"bridge (by path) vs the best raw client: {by_path['wall'] / best['wall']:.2f}×")
    size, reached = FIRST_REQUEST[by_data["url"]]
    print(f"the call's line ({size / 1e6:.0f} MB) reached the tool within {reached:.2f} s of "
          "being sent: its first request to Anki came then")  # fmt: skip


def text_bench(n: int) -> None:
    print(f"\n{n} text notes (median of {REPEAT} runs: one run is a few 25 ms ticks)")
    baseline = measure("one raw addNotes request", raw_add_notes(n), n, REPEAT)
    placed = measure("raw: multi(addNotes) + changeDeck", raw_add_notes_placed(n), n, REPEAT)
    text = measure("bridge over stdio, one add_from_model call", bridge_call(text_items(n)), n,
                   REPEAT)  # fmt: skip
    print_table(HEADER, [row(m, baseline) for m in (baseline, placed, text)])
    print(f"bridge vs the raw client that places its cards: {text['wall'] / placed['wall']:.2f}×")


if __name__ == "__main__":
    main()
