"""`sdamgia_search_by_image`: a photo of a problem → its text (OCR) → the fuzzy search.

The image comes as base64 (a data URL too) or as a URL, fetched the careful way
(`core.image_fetch`: http(s) only, every address and redirect checked, private ones
refused unless SDAMGIA_IMAGE_ALLOW_PRIVATE, one deadline); either way its bytes are
capped at SDAMGIA_IMAGE_MAX_BYTES. Pillow checks it is an image of sane size; it is
turned grey, enlarged when small, its contrast stretched and its orientation (EXIF)
applied, then tesseract reads it (`core.ocr`, Russian + English).
The recognised text goes to `problems_search_fuzzy` — its OCR-tolerant matching and its
query repair are made for this — and comes back beside the matches.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import TYPE_CHECKING

from django.conf import settings

from core.exceptions import InvalidInput, UpstreamError
from core.image_fetch import ImageProblem
from core.ocr import image_read
from problems.fuzzy import problems_search_fuzzy
from problems.images import site_image_fetch
from problems.outcomes import PhotoOutcome, Progress
from problems.subjects import Site

if TYPE_CHECKING:
    from PIL import Image

MAX_PIXELS = 40_000_000
MAX_BASE64_CHARS = 25_000_000  # the schemas' bound; the decoded bytes meet the setting's cap
MAX_URL_CHARS = 2000
MIN_WIDTH = 1800  # tesseract reads best at ~30 px letters: smaller photos are enlarged
MAX_SIDE = 20_000  # … but not past this (tesseract refuses a side over 32,767 px)
MIN_SIDE = 16  # a line of text; a thinner image holds none
MAX_ASPECT = 150  # a photo of one line of a problem (4032×64 cut from a phone's) is less
_DATA_URL = re.compile(r"^\s*data:image/[a-z0-9.+-]+;base64,", re.IGNORECASE)
_HYPHEN_BREAK = re.compile(r"(\w)[-‐]\s*\n\s*(\w)")


def problems_search_by_image(
    *,
    site: Site,
    image_base64: str | None = None,
    image_url: str | None = None,
    threshold: float = 0.6,
    limit: int = 20,
    progress: Progress | None = None,
    refresh: bool = False,
) -> PhotoOutcome:
    """The problems a photo shows, best first, with the text read off it."""
    field = _source_field(image_base64, image_url)
    data = _bytes(image_base64) if image_base64 else _fetched(image_url or "")
    image = _image(data, field)
    text = _text(image)
    if len(text) < 10:
        shown = f" (read: {text!r})" if text else ""
        raise InvalidInput(
            f"{field}: no problem text could be read in the image{shown}; send a sharper, "
            "straighter photo of the condition",
            field=field,
        )
    search = problems_search_fuzzy(
        site=site,
        condition_text=text[:1000],
        threshold=threshold,
        limit=limit,
        progress=progress,
        refresh=refresh,
        read=True,
    )
    return PhotoOutcome(recognized_text=text, search=search)


def _source_field(image_base64: str | None, image_url: str | None) -> str:
    if bool(image_base64) == bool(image_url):
        raise InvalidInput(
            "give exactly one of image_base64 and image_url"
            + (" (both were given)" if image_base64 else ""),
            field="image_base64" if image_base64 else "image_url",
        )
    return "image_base64" if image_base64 else "image_url"


def _bytes(encoded: str) -> bytes:
    payload = _DATA_URL.sub("", encoded).strip()
    try:
        data = base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInput("image_base64 is not valid base64", field="image_base64") from exc
    cap = settings.SDAMGIA_IMAGE_MAX_BYTES
    if len(data) > cap:
        raise InvalidInput(
            f"image_base64: the image has {len(data)} bytes, over the {cap}-byte cap "
            "(SDAMGIA_IMAGE_MAX_BYTES)",
            field="image_base64",
        )
    return data


def _fetched(url: str) -> bytes:
    try:
        return site_image_fetch(url)
    except ImageProblem as exc:
        if exc.code == "image_refused":
            raise InvalidInput(f"image_url: {exc.message}", field="image_url") from exc
        raise UpstreamError(
            f"image_url could not be fetched: {exc.message}", service="the image's host"
        ) from exc


def _image(data: bytes, field: str) -> Image.Image:
    """The decoded image, upright, grey and large enough for OCR."""
    from PIL import Image, ImageOps, UnidentifiedImageError  # off the server's start-up

    if not data:
        raise InvalidInput(f"{field}: the image is empty", field=field)
    try:
        with Image.open(io.BytesIO(data)) as probe:
            if probe.width * probe.height > MAX_PIXELS:
                raise InvalidInput(
                    f"{field}: the image has {probe.width}×{probe.height} pixels, over the "
                    f"{MAX_PIXELS:,} a photo of a problem needs",
                    field=field,
                )
            image = ImageOps.exif_transpose(probe).convert("L")
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise InvalidInput(
            f"{field}: not an image Pillow can read (JPEG, PNG, WebP, …)", field=field
        ) from exc
    if min(image.size) < MIN_SIDE or max(image.size) > MAX_ASPECT * min(image.size):
        raise InvalidInput(
            f"{field}: the image is {image.width}×{image.height} pixels; a photo of a problem "
            f"is at least {MIN_SIDE} pixels each way (a line of text) and at most "
            f"{MAX_ASPECT} times longer than wide",
            field=field,
        )
    if image.width < MIN_WIDTH:  # enlarged for OCR, never past the pixels a photo may have
        scale = min(
            MIN_WIDTH / image.width,
            (MAX_PIXELS / (image.width * image.height)) ** 0.5,
            MAX_SIDE / max(image.size),
        )
        if scale > 1:
            size = (round(image.width * scale), max(1, round(image.height * scale)))
            image = image.resize(size, Image.Resampling.LANCZOS)
    return ImageOps.autocontrast(image, cutoff=1)


def _text(image: Image.Image) -> str:
    raw = image_read(
        image,
        command=settings.SDAMGIA_TESSERACT_CMD,
        languages=settings.SDAMGIA_OCR_LANGS,
        timeout=settings.SDAMGIA_OCR_TIMEOUT,
        psm=6,
    )
    joined = _HYPHEN_BREAK.sub(r"\1\2", raw)
    return " ".join(joined.split())
