"""Anki benchmark on the faithful AnkiConnect stand-in (tests/anki_bridge/ankiconnect_server.py).

    .venv/bin/python bench/anki.py [--notes 200] [--only images|text]

The stand-in behaves as the real add-on measured (../shared/fixtures/ankiconnect/
BEHAVIOUR.md): one request at a time on a 25 ms timer, a receive cost that grows faster
than the request, a connection closed after every answer, new cards filed under the note
type's last-used deck, and Anki's main window reset after each added note (18.7 ms of a
core: the best raw client takes the 4.5 s it took on a real Anki 26.9.3). The bridge is
driven the way a desktop client drives it: a new `manage.py runmcp` process over stdio,
the call written as one JSON-RPC line (a 200-image call is a 100 MB line). Two
measurements, each with its baselines in the same run:

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

With ANKI_REAL_URL (a running Anki with AnkiConnect, e.g. http://127.0.0.1:8765) every
measurement runs a second time against it, through a counting pass-through that answers
as the add-on does. Everything the bench makes there is in the note type «toolhub-bench»
and the decks «toolhub-bench::…», deleted after each measurement.
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

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from PIL import Image  # noqa: E402

from anki_bridge import review  # noqa: E402
from bench.anki_raw import (  # noqa: E402
    best_raw_images,
    floor_images,
    naive_images,
    raw_add_notes,
    raw_add_notes_placed,
    text_items,
)
from bench.anki_standin import BENCH_MEDIA, Anki, ask, fresh_anki  # noqa: E402
from bench.common import print_table  # noqa: E402

REPEAT = 7
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


def measure(
    clients: list[tuple[str, Callable[[Anki], float]]],
    notes: int,
    repeat: int = 1,
    real: str | None = None,
) -> list[dict[str, Any]]:
    """Each client on a fresh Anki, `repeat` rounds interleaved (one run of each client per
    round): the median wall time and the last run's counts. A run returns the wall time of
    the part it measures."""
    walls: dict[str, list[float]] = {name: [] for name, _ in clients}
    last: dict[str, dict[str, Any]] = {}
    for _ in range(repeat):
        for name, run in clients:
            anki = fresh_anki(real)
            try:
                walls[name].append(run(anki))
                in_deck, total = anki.notes_placed()
                last[name] = {"url": anki.url, "requests": anki.requests(),
                              "bytes": anki.request_bytes(), "in_deck": in_deck,
                              "total": total}  # fmt: skip
            finally:
                anki.stop()
    return [
        {"name": name, "wall": statistics.median(walls[name]), "notes": notes, **last[name]}
        for name, _ in clients
    ]


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


def bridge_call(items: list[dict[str, Any]], **env: str) -> Callable[[Anki], float]:
    """One `anki.add_from_model` call over stdio, as a desktop client makes it: a new
    `manage.py runmcp` process (its start and `initialize` not timed), the call written as
    one JSON-RPC line, timed until its answer comes back."""

    def run(anki: Anki) -> float:
        arguments = {"deck": anki.deck, "model": anki.model, "items": items}
        line = json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "anki.add_from_model", "arguments": arguments}},
            ensure_ascii=False,
        ).encode() + b"\n"  # fmt: skip
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
        anki.reset_counts()
        first: list[float] = []
        done = threading.Event()

        def watch() -> None:  # when the bridge's first request reaches Anki
            while not done.wait(0.005):
                if anki.first_request_seen():
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

    return run


def image_items(images: list[bytes]) -> list[dict[str, Any]]:
    return [
        {
            "Prompt": f"Что на снимке №{i}?",
            "Response": f"Снимок №{i}",
            "images": [
                {
                    "image_base64": base64.b64encode(data).decode(),
                    "target_field": "Response",
                    "filename": f"{BENCH_MEDIA}{i}.jpg",
                }
            ],
        }
        for i, data in enumerate(images)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--only", choices=["images", "text"], help="one of the two measurements")
    parser.add_argument("--repeat", type=int, default=REPEAT, help="rounds of the text runs")
    args = parser.parse_args()
    n = args.notes
    call_command("migrate", verbosity=0)
    targets: list[str | None] = [None]
    if os.environ.get("ANKI_REAL_URL"):
        targets.append(os.environ["ANKI_REAL_URL"])
    for real in targets:
        print(f"\n## {'real Anki at ' + real if real else 'the faithful stand-in'}")
        if args.only != "text":
            media_check(real)
            limits_check(real)
            images_bench(n, real)
        if args.only != "images":
            text_bench(n, real, args.repeat)


def media_check(real: str | None) -> None:
    """Issue 52: a picture the user stored survives a bridge call that sends another
    picture of the same name (AnkiConnect replaces a file of the same name). The user's
    file is the bench's own, under a name of the bench's (a real Anki's `photo.jpg` is the
    user's own); both are deleted after."""
    anki = fresh_anki(real)
    name = f"{BENCH_MEDIA}photo.jpg"
    own, other = photo(1001, 200), photo(1002, 200)
    try:
        ask(anki.url, "storeMediaFile", filename=name, data=base64.b64encode(own).decode())
        image = {"image_base64": base64.b64encode(other).decode(), "target_field": "Prompt",
                 "filename": name}  # fmt: skip
        bridge_call([{"Prompt": "media check", "images": [image]}])(anki)
        kept = base64.b64decode(ask(anki.url, "retrieveMediaFile", filename=name) or "")
        print(f"media check: the user's {name} is {'intact' if kept == own else 'REPLACED'} "
              "after a call that sent another picture under its name")  # fmt: skip
    finally:
        for stored in ask(anki.url, "getMediaFilesNames", pattern=f"{BENCH_MEDIA}photo*"):
            ask(anki.url, "deleteMediaFile", filename=stored)
        anki.stop()


def limits_check(real: str | None) -> None:
    """Issue 52: a review session offers no more new cards than Anki's own reviewer shows
    today (the deck's daily limit less the cards studied today). The deck's options are
    read, never changed: on a real Anki they are the user's."""
    anki = fresh_anki(real)
    try:
        bridge_call(text_items(40))(anki)
        limit = ask(anki.url, "getDeckConfig", deck=anki.deck)["new"]["perDay"]
        (today,) = ask(anki.url, "getDeckStats", decks=[anki.deck]).values()
        user, _ = get_user_model().objects.get_or_create(username="bench")
        started = review.session_start(user=user, deck=anki.deck, include_new=True, limit=200)
        shown, offered = today["new_count"], started.new
        print(f"limits check: a session of a deck with 40 new cards offered {offered}; "
              f"Anki shows {shown} today (the deck's limit: {limit} a day)")  # fmt: skip
    finally:
        anki.stop()


def images_bench(n: int, real: str | None) -> None:
    images = [photo(i) for i in range(n)]
    size = sum(len(i) for i in images) / len(images) / 1024
    print(f"{n} notes, one 1000×1000 JPEG each (mean {size:.0f} KB), on {os.cpu_count()} cores;"
          " the bridge over stdio, one call; median of 3 interleaved runs (the naive client"
          " and media as data: one run)")  # fmt: skip
    items = image_items(images)
    (naive, by_data) = measure(
        [
            ("naive: keep-alive client, storeMediaFile + addNote each", naive_images(images)),
            ("bridge over stdio (media as data)",
             bridge_call(items, ANKI_MEDIA_UPLOAD="data")),
        ],
        n, real=real,
    )  # fmt: skip
    best, floor, by_path = measure(
        [
            ("best raw: files by path in one multi, addNotes, changeDeck",
             best_raw_images(images)),
            ("floor: best raw + the bridge's resizing to 768 px on every core",
             floor_images(images)),
            ("bridge over stdio (media by path)", bridge_call(items)),
        ],
        n, repeat=3, real=real,
    )  # fmt: skip
    print_table(HEADER, [row(m, naive) for m in (naive, best, floor, by_path, by_data)])
    print(f"bridge (by path) vs the best raw client: {by_path['wall'] / best['wall']:.2f}×; "
          f"vs the floor (the same resizing): {by_path['wall'] / floor['wall']:.2f}×")  # fmt: skip
    size, reached = FIRST_REQUEST[by_data["url"]]
    print(f"the call's line ({size / 1e6:.0f} MB) reached the tool within {reached:.2f} s of "
          "being sent: its first request to Anki came then")  # fmt: skip


def text_bench(n: int, real: str | None, repeat: int) -> None:
    print(f"\n{n} text notes (median of {repeat} interleaved runs: one run is a few 25 ms ticks)")
    baseline, placed, text = measure(
        [
            ("one raw addNotes request", raw_add_notes(n)),
            ("raw: multi(addNotes) + changeDeck", raw_add_notes_placed(n)),
            ("bridge over stdio, one add_from_model call", bridge_call(text_items(n))),
        ],
        n, repeat=repeat, real=real,
    )  # fmt: skip
    print_table(HEADER, [row(m, baseline) for m in (baseline, placed, text)])
    print(f"bridge vs the raw client that places its cards: {text['wall'] / placed['wall']:.2f}×")


if __name__ == "__main__":
    main()
