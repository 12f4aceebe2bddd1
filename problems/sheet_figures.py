"""Figures and formula images for the printed sheets: fetched, their format told by their
bytes, and turned into something reportlab draws.

The site serves most figures as SVG under names ending .png (STRUCTURE.md §4: 3,128 of
3,510) and every formula as SVG, so the name and the Content-Type are never trusted:
`figure_kind` reads the first bytes. SVG becomes a reportlab Drawing through svglib —
vector paths in the PDF, never a bitmap; PNG, GIF and JPEG become images.

An SVG is content from another site, read as hostile: a size cap on the bytes and on the
number of elements, an XML parser that loads no DTD, opens no network and resolves only
entities declared inside the document (libxml2 caps their amplification: no "billion
laughs"), an external entity refused (a file or URL is never read), no `<script>` or
`<foreignObject>`, no reference outside the document (an `<image>` may only carry a
PNG or JPEG `data:` URI, a `<use>` only a `#fragment`), no CSS `@import`, and fonts
named in it looked up nowhere (no file search, no fontconfig): text is drawn in the
sheet's own font.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import re
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from lxml import etree
from PIL import Image as PILImage
from reportlab.graphics.shapes import Drawing
from reportlab.lib.utils import ImageReader
from svglib.fonts import STANDARD_FONT_NAMES, FontMap
from svglib.svglib import SvgRenderer

from core.fonts import cyrillic_font_styles
from core.image_fetch import ImageProblem
from problems.images import site_image_fetch

MAX_SVG_BYTES = 2 * 1024 * 1024
MAX_SVG_ELEMENTS = 20_000
MAX_SVG_SIDE = 5_000.0  # points: larger is no figure for a sheet
MAX_RASTER_PIXELS = 40_000_000
FETCH_WORKERS = 4  # the site's formula store is static files; still, a few at a time
FETCH_BUDGET = 120.0  # seconds for all the figures and formulas of one sheet
FORMULA_CACHE_BYTES = 256 * 1024
FORMULA_CACHE_SECONDS = 30 * 24 * 3600

logger = logging.getLogger(__name__)

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_DATA_IMAGE = re.compile(r"^data:image/(png|jpe?g);base64,", re.IGNORECASE)
_FORBIDDEN = {"script", "foreignObject", "iframe", "audio", "video", "feImage"}
_IMPORT = re.compile(r"@import[^;]*;?", re.IGNORECASE)


class FigureProblem(ValueError):
    """Bytes that are no figure this sheet draws (unknown format, hostile or broken SVG)."""


@dataclass
class Figure:
    """A figure or formula ready to draw: `drawing` (vector) or `image` (raster), with its
    natural size in points."""

    width: float
    height: float
    drawing: Drawing | None = None
    image: ImageReader | None = None


def figure_kind(data: bytes) -> str | None:
    """ "svg", "png", "gif" or "jpeg" by the bytes themselves; None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"\x1f\x8b"):
        return "svg" if _looks_like_svg(_gunzip(data)) else None
    return "svg" if _looks_like_svg(data) else None


def _looks_like_svg(data: bytes) -> bool:
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<?xml", b"<svg", b"<!--", b"<!doctype svg")) and b"<svg" in head


def _gunzip(data: bytes) -> bytes:
    """An .svgz body, refused when it would grow past the SVG cap (a zip bomb)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
            out = unzipped.read(MAX_SVG_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise FigureProblem(f"broken gzip: {exc}") from None
    if len(out) > MAX_SVG_BYTES:
        raise FigureProblem(f"the SVG is over {MAX_SVG_BYTES} bytes unpacked")
    return out


def figure_from_bytes(data: bytes) -> Figure:
    """The figure in `data`, whatever its format; FigureProblem when it cannot be drawn."""
    kind = figure_kind(data)
    if kind == "svg":
        drawing = svg_drawing(_gunzip(data) if data.startswith(b"\x1f\x8b") else data)
        return Figure(width=drawing.width, height=drawing.height, drawing=drawing)
    if kind is None:
        raise FigureProblem("neither SVG nor PNG, GIF or JPEG")
    try:
        with PILImage.open(io.BytesIO(data)) as probe:
            width, height = probe.size
            if width * height > MAX_RASTER_PIXELS:
                raise FigureProblem(f"{width}×{height} pixels is too large")
            probe.verify()
        image = ImageReader(io.BytesIO(data))
    except (OSError, SyntaxError, PILImage.DecompressionBombError) as exc:
        raise FigureProblem(f"a broken {kind}: {exc}") from None
    return Figure(width=float(width), height=float(height), image=image)


def svg_drawing(data: bytes) -> Drawing:
    """An SVG document as a reportlab Drawing, under the rules in the module docstring."""
    if len(data) > MAX_SVG_BYTES:
        raise FigureProblem(f"the SVG is over {MAX_SVG_BYTES} bytes")
    parser = etree.XMLParser(
        resolve_entities="internal",  # Illustrator's `&ns_svg;`; never a SYSTEM one
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise FigureProblem(f"broken SVG: {exc}") from None
    declared = root.getroottree().docinfo.internalDTD
    if declared is not None and any(e.system_url for e in declared.iterentities()):
        raise FigureProblem("an SVG declaring an external entity is refused")
    if etree.QName(root).localname != "svg":
        raise FigureProblem("the document is no SVG")
    _defuse(root)
    try:
        # A source that is no path: svglib then refuses every external reference too.
        drawing = SvgRenderer(io.BytesIO(), font_map=_SheetFonts()).render(root)
    except Exception as exc:  # svglib raises whatever a strange document provokes
        raise FigureProblem(f"svglib could not draw the SVG: {exc}") from None
    if not (0 < drawing.width <= MAX_SVG_SIDE and 0 < drawing.height <= MAX_SVG_SIDE):
        raise FigureProblem(f"an SVG of {drawing.width:g}×{drawing.height:g} pt")
    return drawing


def _defuse(root: Any) -> None:
    """Remove from the tree whatever could reach outside it or run."""
    elements = list(root.iter())
    if len(elements) > MAX_SVG_ELEMENTS:
        raise FigureProblem(f"the SVG has over {MAX_SVG_ELEMENTS} elements")
    for element in elements:
        if not isinstance(element.tag, str):  # an entity reference left unresolved
            _drop(element)
            continue
        name = etree.QName(element).localname
        if name in _FORBIDDEN:
            _drop(element)
            continue
        for attr in (_XLINK_HREF, "href"):
            value = (element.get(attr) or "").strip()
            if not value:
                continue
            allowed = _DATA_IMAGE.match(value) if name == "image" else value.startswith("#")
            if not allowed:
                del element.attrib[attr]
        if name == "style" and element.text:
            element.text = _IMPORT.sub("", element.text)


def _drop(element: Any) -> None:
    parent = element.getparent()
    if parent is not None:
        parent.remove(element)


class _SheetFonts(FontMap):
    """Fonts an SVG names: a PDF standard font named exactly as it is, any other («Times
    New Roman», «serif», …) in the sheet's Cyrillic font, so that Cyrillic labels print —
    never searched for on disk or with fontconfig."""

    def find_font(
        self, font_name: str, weight: str = "normal", style: str = "normal"
    ) -> tuple[str, bool]:
        internal = FontMap.build_internal_name(font_name, weight, style)
        if internal in STANDARD_FONT_NAMES:
            return internal, True
        faces = cyrillic_font_styles()
        if str(weight).lower() in ("bold", "bolder", "600", "700", "800", "900"):
            return faces["bold"], False
        return faces["italic" if style in ("italic", "oblique") else "regular"], False

    def register_default_fonts(self) -> None:
        """None: the map is never read (find_font answers without it)."""

    def use_fontconfig(
        self, font_name: str, weight: str = "normal", style: str = "normal"
    ) -> tuple[str | None, bool]:
        return None, False


def figures_fetch(urls: Iterable[str]) -> dict[str, Figure | str]:
    """Each URL's figure, or why it is missing (a short reason), fetched a few at a time
    under the problem photo search's image rules (`SDAMGIA_IMAGE_*`), within one budget
    for the whole sheet."""
    wanted = list(dict.fromkeys(urls))
    deadline = time.monotonic() + FETCH_BUDGET

    def one(url: str) -> bytes | str:
        left = deadline - time.monotonic()
        if left <= 0:
            return "the sheet's time for figures ran out"
        try:
            return site_image_fetch(url, timeout=left)
        except ImageProblem as exc:
            return exc.message
        except (OSError, ValueError) as exc:
            return str(exc)

    if not wanted:
        return {}
    bodies: dict[str, bytes | str] = _cached_formulas(wanted)
    missing = [url for url in wanted if url not in bodies]
    if missing:
        with ThreadPoolExecutor(max_workers=min(FETCH_WORKERS, len(missing))) as pool:
            fetched = dict(zip(missing, pool.map(one, missing), strict=True))
        _cache_formulas(fetched)
        bodies.update(fetched)
    # Drawn here, one after another: svglib and reportlab keep state that threads share.
    return {url: _figure_or_reason(body) for url, body in bodies.items()}


def _formula_key(url: str) -> str:
    return "sdamgia-formula:" + hashlib.sha256(url.encode()).hexdigest()


def _cached_formulas(urls: list[str]) -> dict[str, bytes | str]:
    """The formula images already fetched for an earlier sheet: the site's formula store
    is content-addressed (`/formula/svg/{2hex}/{32hex}.svg`), so one never changes."""
    keys = {_formula_key(url): url for url in urls if "/formula/" in url}
    try:
        found = cache.get_many(list(keys)) if keys else {}
    except Exception:  # a cache that is down costs only the fetches
        logger.warning("the cache could not be read for formula images", exc_info=True)
        return {}
    return {keys[key]: body for key, body in found.items() if isinstance(body, bytes)}


def _cache_formulas(bodies: dict[str, bytes | str]) -> None:
    keep = {
        _formula_key(url): body
        for url, body in bodies.items()
        if "/formula/" in url and isinstance(body, bytes) and len(body) <= FORMULA_CACHE_BYTES
    }
    if not keep:
        return
    try:
        cache.set_many(keep, timeout=FORMULA_CACHE_SECONDS)
    except Exception:
        logger.warning("the cache could not keep formula images", exc_info=True)


def _figure_or_reason(body: bytes | str) -> Figure | str:
    if isinstance(body, str):
        return body
    try:
        return figure_from_bytes(body)
    except FigureProblem as exc:
        return str(exc)
