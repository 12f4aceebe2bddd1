"""A picture quiz is reviewed by its pictures (issue 52, item 6): through the MCP SDK
client, `anki.review_next` sends the front's picture as image content within the size
settings, and `anki.review_reveal` the back's own; the text still names them."""

from __future__ import annotations

import base64
import io
import random
from typing import Any

import pytest
from mcp import Client
from PIL import Image

from core.mcp_server import build_server
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import image_size
from tests.conftest import orm, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

DECK = "Flags"


def noisy_png(width: int, height: int) -> bytes:
    """A picture that compresses badly (so that it is over the byte limit as it is)."""
    rng = random.Random(52)
    image = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def picture_quiz(anki: FakeAnki) -> None:
    with anki.state.lock:
        col = anki.state.col
        front = col.media.write_data("flag.png", noisy_png(1600, 1000))
        back = col.media.write_data("map.png", noisy_png(300, 200))
        note = col.new_note(col.models.by_name("Basic"))
        note["Front"] = f'Whose flag? <img src="{front}"><img src="missing.png">'
        note["Back"] = f'Japan <img src="{back}">'
        col.add_note(note, col.decks.id(DECK))


def images_of(result: Any) -> list[tuple[str, bytes]]:
    return [
        (block.mime_type, base64.b64decode(block.data))
        for block in result.content
        if block.type == "image"
    ]


async def test_a_picture_front_reaches_the_model_as_an_image_of_bounded_size(
    anki: FakeAnki, settings: Any
) -> None:
    settings.ANKI_REVIEW_IMAGE_MAX_PX = 512
    settings.ANKI_REVIEW_IMAGE_MAX_BYTES = 60_000
    await orm(picture_quiz, anki)
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
        started = await client.call_tool("anki.review_start", {"deck": DECK, "include_new": True})
        session = started.structured_content["session"]
        shown = await client.call_tool("anki.review_next", {"session": session})
        assert not shown.is_error, text_of(shown)
        (image,) = images_of(shown)  # the front's picture; the missing one stays named
        mime, data = image
        assert mime == "image/jpeg"
        assert len(data) <= 60_000
        assert max(image_size(data)) <= 512
        assert "[image: flag.png]" in shown.structured_content["front"]
        assert "Japan" not in "".join(b.text for b in shown.content if b.type == "text")
        revealed = await client.call_tool(
            "anki.review_reveal", {"session": session, "card": shown.structured_content["card"]}
        )
        (back,) = images_of(revealed)  # the back's own picture only
        assert image_size(back[1]) == (300, 200)
