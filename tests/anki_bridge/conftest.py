"""Fixtures of the Anki tests: a local AnkiConnect on a real collection, images, settings."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from anki_bridge import waiting
from tests.anki_bridge.ankiconnect_server import FakeAnki

HERE = Path(__file__).resolve().parent
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "ankiconnect"
RECORDED = SHARED / "recorded_exchanges.json"
RECORDED_COPY = HERE / "recorded_exchanges.json"


def recorded_exchanges() -> list[dict[str, Any]]:
    """The 45 exchanges recorded from Anki 26.9.3: the shared fixture, else its copy here."""
    path = RECORDED if RECORDED.exists() else RECORDED_COPY
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(autouse=True)
def _queue_thread(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """The no-broker queue thread runs only in tests marked `queue_thread`, and ends with them.

    Elsewhere it would race the test's own flushes (both are correct, but the test could
    not tell which delivered) and poll a closed port after the test.
    """
    if request.node.get_closest_marker("queue_thread") is None:
        monkeypatch.setattr(waiting, "queue_watch", lambda flush: None)
    yield
    waiting.queue_watch_stop()


@pytest.fixture
def anki(tmp_path: Path, settings) -> Iterator[FakeAnki]:  # type: ignore[no-untyped-def]
    """A running local AnkiConnect on a fresh collection; settings point at it."""
    server = FakeAnki(tmp_path / "anki")
    settings.ANKI_CONNECT_URL = server.url
    settings.ANKI_CONNECT_KEY = ""
    settings.ANKI_CONNECT_TIMEOUT = 10
    settings.ANKI_DEFAULT_DECK = "Default"
    settings.ANKI_DEFAULT_MODEL = "Поля для ChatGPT"
    yield server
    server.stop()


def png_bytes(width: int = 40, height: int = 30, color: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def png_base64(width: int = 40, height: int = 30, color: str = "red") -> str:
    return base64.b64encode(png_bytes(width, height, color)).decode("ascii")


def image_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def image_format(data: bytes) -> str | None:
    with Image.open(io.BytesIO(data)) as image:
        return image.format
