"""Anki packages (issue 53): notes with 1000×1000 JPEGs as an `.apkg`, beside the same
notes through AnkiConnect.

    .venv/bin/python bench/anki_package.py [--notes 200]

Every row gets the same N notes, each with one photo-like 1000×1000 JPEG sent as data:
1. `anki.export_package` over stdio, as a desktop client calls it: a new `manage.py
   runmcp` process, the call as one JSON-RPC line, then the package read back with
   `resources/read` (it is over ANKI_PACKAGE_EMBED_MAX), timed from the call to the bytes;
2. the floor: the same resizing (the bridge's `image_prepare`, on every core) and genanki
   writing the package, in this process, with no MCP, database or storage;
3. `anki.add_from_model` over stdio into the faithful AnkiConnect stand-in (bench/anki.py
   explains what it reproduces of the real add-on), media as data.
Correctness: the package is imported into a fresh collection by Anki's own importer (the
`anki` package): notes and media files found against those asked. Uses a temporary
SQLite database unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT)  # `import anki` must find Anki's package, not bench/anki.py

from bench.anki import (  # noqa: E402  (sets up Django on a temporary database)
    bridge_call,
    image_items,
    measure,
    photo,
)
from bench.common import print_table  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="bench-apkg-"))


def export_over_stdio(items: list[dict[str, Any]]) -> tuple[float, bytes]:
    """One `anki.export_package` call and the `resources/read` of its package."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "runmcp", "--apps", "anki_bridge"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_MEDIA_ROOT": str(TMP / "media")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None
    assert server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        server.stdin.flush()

    def answer(id_: int) -> dict[str, Any]:
        assert server.stdout is not None
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == id_:
                return message  # type: ignore[no-any-return]

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})  # fmt: skip
    answer(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "anki.export_package",
        "arguments": {"items": items, "deck": "Bench::Photos"}}})  # fmt: skip
    made = answer(2)["result"]
    if made.get("isError"):
        raise RuntimeError(str(made)[:500])
    embedded = [c for c in made["content"] if c["type"] == "resource"]
    if embedded:
        data = base64.b64decode(embedded[0]["resource"]["blob"])
    else:
        uri = made["structuredContent"]["resource"]
        send({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}})
        data = base64.b64decode(answer(3)["result"]["contents"][0]["blob"])
    wall = time.perf_counter() - started
    server.stdin.close()
    server.wait(timeout=120)
    return wall, data


def floor(images: list[bytes]) -> tuple[float, bytes]:
    """The resizing on every core and genanki writing the package: nothing else."""
    import genanki

    from anki_bridge.images import content_name, image_prepare
    from anki_bridge.notemodel import DEFAULT_MODEL
    from anki_bridge.packages import _genanki_model, _package_bytes

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        resized = [data for data, _ in pool.map(lambda b: image_prepare(b, max_side=768), images)]
    model = _genanki_model(DEFAULT_MODEL)
    deck = genanki.Deck(1 << 40, "Bench::Photos")
    media = {}
    for i, data in enumerate(resized):
        name = content_name(f"toolhub-bench-{i}.jpg", data)
        media[name] = data
        fields = [f"Что на снимке №{i}?", f'Снимок №{i}<div><img src="{name}"></div>', "", ""]
        deck.add_note(genanki.Note(model=model, fields=fields))
    data = _package_bytes(genanki.Package(deck), media)
    return time.perf_counter() - started, data


def imported(data: bytes, name: str) -> tuple[int, int]:
    """Notes and media files Anki's own importer finds in `data`."""
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

    folder = TMP / name
    folder.mkdir()
    (folder / "in.apkg").write_bytes(data)
    collection = Collection(str(folder / "collection.anki2"))
    try:
        collection.import_anki_package(
            ImportAnkiPackageRequest(
                package_path=str(folder / "in.apkg"),
                options=ImportAnkiPackageOptions(with_scheduling=False),
            )
        )
        notes = len(collection.find_notes("deck:Bench::Photos"))
        media = sum(1 for path in Path(collection.media.dir()).iterdir() if path.is_file())
    finally:
        collection.close()
    return notes, media


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=200)
    n = parser.parse_args().notes
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    images = [photo(i) for i in range(n)]
    sent = sum(len(i) for i in images)
    print(f"{n} notes, one 1000×1000 JPEG each ({sent / 1e6:.1f} MB sent), on "
          f"{os.cpu_count()} cores; one run each")  # fmt: skip
    items = image_items(images)
    export_wall, package = export_over_stdio(items)
    floor_wall, floor_package = floor(images)
    (anki,) = measure([("AnkiConnect stand-in", bridge_call(items, ANKI_MEDIA_UPLOAD="data"))], n)
    rows = []
    for label, wall, data in (
        ("anki.export_package over stdio (+ resources/read)", export_wall, package),
        ("floor: resizing + genanki, in-process", floor_wall, floor_package),
    ):
        notes, media = imported(data, label.split()[0].strip(":"))
        rows.append([label, f"{wall:.2f} s", f"{len(data) / 1e6:.1f} MB",
                     f"{notes}/{n}", f"{media}/{n}"])  # fmt: skip
    rows.append(["anki.add_from_model over stdio → AnkiConnect stand-in",
                 f"{anki['wall']:.2f} s", f"{anki['bytes'] / 1e6:.1f} MB sent",
                 f"{anki['in_deck']}/{n}", "-"])  # fmt: skip
    print_table(["path", "wall", "package", "notes imported", "media imported"], rows)
    print(
        f"export vs the floor: {export_wall / floor_wall:.2f}×; "
        f"vs AnkiConnect: {anki['wall'] / export_wall:.2f}× faster"
    )


if __name__ == "__main__":
    main()
