"""Anki benchmark: 200 notes with one 1000×1000 image each through `anki.add_from_model`.

    .venv/bin/python bench/anki.py [--notes 200] [--latency 0.025]

Against a local AnkiConnect on a real collection (tests/anki_bridge/ankiconnect_server.py)
that holds Anki's main thread `--latency` seconds per request, as the add-on does (about
25 ms on a desktop). Rows: the bridge in one call (batched `multi` requests); the bridge
called once per note; a naive client sending one `addNote` request per note (the image
inline as the add-on's `picture`). Prints requests to AnkiConnect and wall time. Uses a
temporary SQLite database unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

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
from django.core.management import call_command  # noqa: E402
from mcp import Client  # noqa: E402
from PIL import Image  # noqa: E402

from anki_bridge.models import Media, Note  # noqa: E402
from bench.common import print_table  # noqa: E402
from core.mcp_server import build_server  # noqa: E402
from tests.anki_bridge.ankiconnect_server import FakeAnki  # noqa: E402

MODEL = "Поля для ChatGPT"


def photo(seed: int, side: int = 1000) -> bytes:
    """A 1000×1000 JPEG that compresses like a photo (gradient, shapes, noise)."""
    rng = random.Random(seed)
    image = Image.linear_gradient("L").resize((side, side)).convert("RGB")
    tint = Image.new("RGB", (side, side), tuple(rng.randrange(256) for _ in range(3)))
    image = Image.blend(image, tint, 0.5)
    noise = Image.effect_noise((side, side), 40).convert("RGB")
    image = Image.blend(image, noise, 0.25)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def fresh_anki(latency: float) -> FakeAnki:
    anki = FakeAnki(Path(tempfile.mkdtemp(dir=TMP)))
    anki.state.latency = latency
    settings.ANKI_CONNECT_URL = anki.url
    Note.objects.all().delete()
    Media.objects.all().delete()
    return anki


def items(images: list[bytes]) -> list[dict[str, object]]:
    return [
        {
            "Prompt": f"Что на снимке №{i}?",
            "Response": f"Снимок №{i}",
            "images": [{"image_base64": base64.b64encode(data).decode(), "target_field": "Prompt"}],
        }
        for i, data in enumerate(images)
    ]


async def calls(anki: FakeAnki, payload: list[dict[str, object]], per_note: bool) -> float:
    """Wall time of the add_from_model calls (the model already exists, as in daily use)."""
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=600) as client:
        await client.call_tool("anki.model_info", {})
        anki.state.requests.clear()
        started = time.perf_counter()
        for batch in [[item] for item in payload] if per_note else [payload]:
            result = await client.call_tool(
                "anki.add_from_model", {"deck": "Bench", "items": batch}
            )
            assert not result.is_error, result
            assert json.loads(result.content[0].text)["added"] == len(batch)  # type: ignore[union-attr]
        return time.perf_counter() - started


def bridge(images: list[bytes], latency: float, *, per_note: bool) -> list[str]:
    anki = fresh_anki(latency)
    wall = asyncio.run(calls(anki, items(images), per_note))
    assert len(anki.notes()) == len(images)
    name = "bridge, one call per note" if per_note else "bridge, one call (multi)"
    return row(name, len(anki.state.requests), len(anki.state.actions()), wall, len(images), anki)


def naive(images: list[bytes], latency: float) -> list[str]:
    """One addNote request per note with the image inline (`picture`), as simple clients do."""
    anki = fresh_anki(latency)
    with httpx.Client(timeout=60) as http:

        def post(action: str, **params: object) -> object:
            body = {"action": action, "params": params, "version": 6}
            answer = http.post(anki.url, json=body).json()
            assert answer["error"] is None, answer
            return answer["result"]

        post("createDeck", deck="Bench")
        from anki_bridge.client import create_model
        from anki_bridge.notemodel import DEFAULT_MODEL

        post("createModel", **create_model(DEFAULT_MODEL)["params"])
        anki.state.requests.clear()
        started = time.perf_counter()
        for i, data in enumerate(images):
            fields = {"Prompt": f"Что на снимке №{i}?", "Response": f"Снимок №{i}"}
            picture = {
                "data": base64.b64encode(data).decode(),
                "filename": f"naive_{i}.jpg",
                "fields": ["Prompt"],
            }
            note = {"deckName": "Bench", "modelName": MODEL, "fields": fields, "picture": picture}
            post("addNote", note=note)
        wall = time.perf_counter() - started
    return row(
        "one addNote request per note",
        len(anki.state.requests),
        len(images),
        wall,
        len(images),
        anki,
    )


def row(
    name: str, requests: int, actions: int, wall: float, notes: int, anki: FakeAnki
) -> list[str]:
    media = anki.media_files()
    mean_kb = sum(len(v) for v in media.values()) / max(1, len(media)) / 1024
    anki.stop()
    return [
        name,
        str(requests),
        str(actions),
        f"{wall:.2f} s",
        f"{wall / notes * 1000:.1f} ms",
        f"{mean_kb:.0f} KB",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.025, help="seconds per request")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    images = [photo(i) for i in range(args.notes)]
    size = sum(len(i) for i in images) / len(images) / 1024
    print(
        f"{args.notes} notes, one 1000×1000 JPEG each (mean {size:.0f} KB), "
        f"AnkiConnect holding {args.latency * 1000:.0f} ms per request"
    )
    rows = [
        bridge(images, args.latency, per_note=False),
        bridge(images, args.latency, per_note=True),
        naive(images, args.latency),
    ]
    header = ["client", "HTTP requests", "actions", "wall", "per note", "image stored"]
    print_table(header, rows)


if __name__ == "__main__":
    main()
