"""sdamgia_search_by_image: a photo (base64 or URL) → OCR → the fuzzy search, over MCP and REST."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import random
import shutil
from typing import Any

import pytest
from mcp import Client
from rest_framework.test import APIClient

from core.mcp_server import build_server
from problems.parsing import parse_problem_block
from problems.services import problems_store
from problems.subjects import Site
from tests.conftest import text_of
from tests.problems.conftest import real_items, unique_real
from tests.problems.photos import FONT, photo

pytestmark = pytest.mark.django_db(transaction=True)

MATH = Site("math", "ege")
BASE = "https://math-ege.sdamgia.ru"
needs_ocr = pytest.mark.skipif(
    shutil.which("tesseract") is None or not FONT.exists(),
    reason="tesseract (tesseract-ocr, tesseract-ocr-rus) or DejaVu fonts are not installed",
)


def call(arguments: dict[str, Any]) -> tuple[bool, str]:
    async def go() -> tuple[bool, str]:
        async with Client(build_server(["problems"]), read_timeout_seconds=120) as client:
            result = await client.call_tool("sdamgia_search_by_image", arguments)
            return bool(result.is_error), text_of(result)

    return asyncio.run(go())


@pytest.fixture
def stored(fake_site) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The real problems, stored here and on the site stand-in: id → condition."""
    fake_site.search_engine = True
    blocks = unique_real(real_items())
    parsed = [parse_problem_block(html, base_url=BASE) for html in blocks.values()]
    problems_store(site=MATH, parsed=parsed)
    for pid, html in blocks.items():
        fake_site.add_problem("math-ege", pid, html)
    return {p.problem_id: p.condition_text for p in parsed}


@needs_ocr
def test_a_photo_of_a_condition_finds_its_problem_with_the_text_read(stored) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(3)
    for pid in ("27340", "27794", "27612"):
        image = photo(stored[pid], rng)
        error, text = call(
            {
                "subject": "math",
                "image_base64": base64.b64encode(image).decode(),
                "response_format": "json",
                "limit": 3,
            }
        )
        assert not error, text
        data = json.loads(text)
        assert data["matches"][0]["id"] == pid
        assert len(data["recognized_text"]) > 30
        assert data["recognized_text"].split()[0] in stored[pid]


@needs_ocr
def test_an_image_url_is_fetched_only_where_the_rules_allow(stored, httpserver, settings) -> None:  # type: ignore[no-untyped-def]
    image = photo(stored["27340"], random.Random(1))
    httpserver.expect_request("/photo.jpg").respond_with_data(image, content_type="image/jpeg")
    url = httpserver.url_for("/photo.jpg")

    settings.SDAMGIA_IMAGE_ALLOW_PRIVATE = False
    error, text = call({"subject": "math", "image_url": url})
    assert error
    assert text.startswith("image_url:")
    assert "127.0.0.1 is a loopback address (set SDAMGIA_IMAGE_ALLOW_PRIVATE" in text
    assert httpserver.log == []  # refused before any request

    settings.SDAMGIA_IMAGE_ALLOW_PRIVATE = True  # a private deployment's own image server
    error, text = call({"subject": "math", "image_url": url, "response_format": "json"})
    assert not error, text
    assert json.loads(text)["matches"][0]["id"] == "27340"


@pytest.mark.parametrize(
    ("arguments", "field", "rule"),
    [
        ({}, "image_url", "exactly one of image_base64 and image_url"),
        (
            {"image_base64": "aGVsbG8=", "image_url": "https://example.org/a.jpg"},
            "image_base64",
            "exactly one of image_base64 and image_url (both were given)",
        ),
        (
            {"image_base64": base64.b64encode(b"not an image at all").decode()},
            "image_base64",
            "not an image Pillow can read",
        ),
        (
            {"image_url": "http://169.254.169.254/latest/meta-data"},
            "image_url",
            "169.254.169.254 is a cloud metadata address (never fetched)",
        ),
        ({"image_url": "http://10.0.0.7/a.jpg"}, "image_url", "10.0.0.7 is a private address"),
        ({"image_url": "file:///etc/passwd"}, "image_url", "only http(s) URLs are fetched"),
    ],
)
def test_bad_input_names_the_field_and_the_rule(fake_site, arguments, field, rule) -> None:  # type: ignore[no-untyped-def]
    error, text = call({"subject": "math", **arguments})
    assert error
    assert field in text
    assert rule in text
    assert "Traceback" not in text


def test_an_image_over_the_byte_cap_is_refused(fake_site, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SDAMGIA_IMAGE_MAX_BYTES = 1000
    error, text = call({"subject": "math", "image_base64": base64.b64encode(b"x" * 1001).decode()})
    assert error
    assert "image_base64: the image has 1001 bytes, over the 1000-byte cap" in text


@pytest.mark.parametrize("size", [(4, 8000), (10, 1000), (3000, 8)])
def test_a_sliver_of_an_image_is_refused_at_once(fake_site, size) -> None:  # type: ignore[no-untyped-def]
    """A 140-byte PNG 4×8000 was enlarged to 1800×3,600,000 for OCR: gigabytes, no answer."""
    import io
    import time

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", size, 255).save(buffer, format="PNG")
    started = time.monotonic()
    error, text = call(
        {"subject": "math", "image_base64": base64.b64encode(buffer.getvalue()).decode()}
    )
    assert error
    assert f"image_base64: the image is {size[0]}×{size[1]} pixels" in text
    assert "at least 16 pixels each way" in text
    assert time.monotonic() - started < 30  # refused, not read


def test_a_small_photo_is_enlarged_within_the_pixels_a_photo_may_have() -> None:
    from PIL import Image

    from problems import photo

    buffer = io.BytesIO()
    Image.new("L", (300, 9000), 255).save(buffer, format="PNG")
    image = photo._image(buffer.getvalue(), "image_base64")
    assert image.width * image.height <= photo.MAX_PIXELS
    assert max(image.size) <= photo.MAX_SIDE


def test_without_tesseract_the_error_says_ocr_is_unavailable(fake_site, settings) -> None:  # type: ignore[no-untyped-def]
    import io

    from PIL import Image

    settings.SDAMGIA_TESSERACT_CMD = "/nonexistent/tesseract"
    buffer = io.BytesIO()
    Image.new("RGB", (400, 200), "white").save(buffer, "PNG")
    error, text = call(
        {"subject": "math", "image_base64": base64.b64encode(buffer.getvalue()).decode()}
    )
    assert error
    assert "OCR is unavailable: tesseract ('/nonexistent/tesseract') is not installed" in text
    assert "Traceback" not in text


@needs_ocr
def test_a_blank_photo_says_no_text_was_read(fake_site) -> None:  # type: ignore[no-untyped-def]
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (800, 500), "white").save(buffer, "JPEG")
    error, text = call(
        {"subject": "math", "image_base64": base64.b64encode(buffer.getvalue()).decode()}
    )
    assert error
    assert "image_base64: no problem text could be read in the image" in text


@needs_ocr
def test_rest_search_by_image(stored) -> None:  # type: ignore[no-untyped-def]
    image = photo(stored["27794"], random.Random(2))
    client = APIClient()
    url = "/api/problems/math/ege/search-by-image/"
    ok = client.post(url, {"image_base64": base64.b64encode(image).decode()}, format="json")
    assert ok.status_code == 200, ok.content
    assert ok.json()["matches"][0]["id"] == "27794"
    assert ok.json()["recognized_text"]
    bad = client.post(url, {"image_url": "not a url"}, format="json")
    assert bad.status_code == 400
    assert "image_url" in bad.content.decode()
    neither = client.post(url, {}, format="json")
    assert neither.status_code == 400
    assert "exactly one of image_base64 and image_url" in neither.content.decode()
