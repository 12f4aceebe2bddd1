"""Reading PDFs safely: every file is checked against the limits before a page is drawn.

`pdf_open` refuses, with a BadPdf naming the file, the page and the rule, what would cost
more than a norm document can: a file over NORMAGPT_MAX_FILE_MB, one that is not a PDF,
is damaged, truncated or encrypted, a page tree claiming more than NORMAGPT_MAX_PAGES
pages or naming pages the file does not hold, a page over NORMAGPT_MAX_PAGE_AREA (A0). A
page within the limits is drawn at NORMAGPT_PAGE_DPI, or lower where its image would
exceed NORMAGPT_MAX_RENDER_PIXELS: that bound comes from our DPI, not from the file, so
the page keeps its text and gets a coarser image rather than being refused.

pdfium is not thread-safe: every call into it here holds `PDFIUM`, one page at a time, so
an admin request reading an amendment waits for a page, not for a whole ingestion.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from core.exceptions import DomainError
from core.ocr import OcrUnavailable, image_read, ocr_check
from normagpt.exceptions import BadPdf
from normagpt.parsing import text_clean

if TYPE_CHECKING:  # rendering libraries load when a PDF is read, not when a server starts
    import pypdfium2 as pdfium
    from PIL import Image

logger = logging.getLogger(__name__)

PDFIUM = threading.RLock()
MIN_TEXT_CHARS = 20  # fewer characters than this: the page has no usable text layer
JPEG_QUALITY = 85
JPEG_MAX_SIDE = 65_000  # pixels: libjpeg's limit is 65,535
A0 = (2384, 3370)  # points
HEADER_WITHIN = 1024  # pdfium finds the %PDF- header within the first KB


@dataclass(frozen=True)
class RenderedPage:
    number: int
    text: str
    image: bytes
    width: int
    height: int
    has_text_layer: bool
    ocr: bool


def pdf_open(data: bytes, *, name: str) -> pdfium.PdfDocument:
    """The PDF in `data`, opened, its every page's size checked against the limits before
    any page is drawn (milliseconds, whatever the file claims); close it with `pdf_close`.

    BadPdf (field `file`) naming `name`, the page and the rule for a file over the limits,
    not a PDF, damaged, truncated or encrypted: never pdfium's own error.
    """
    import pypdfium2 as pdfium

    _file_check(data, name)
    with PDFIUM:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise BadPdf(_unreadable(name, exc), field="file") from exc
        try:
            _pages_check(pdf, name)
        except BaseException:
            pdf.close()
            raise
    return pdf


def pdf_close(pdf: pdfium.PdfDocument) -> None:
    with PDFIUM:
        pdf.close()


def pdf_texts(data: bytes, *, name: str) -> list[str]:
    """The text layer of each page of the PDF in `data`, as pdfium reads it (`pdf_open`'s
    checks first: BadPdf for a file over the limits or unreadable)."""
    pdf = pdf_open(data, name=name)
    try:
        return [_page_text(pdf, index, name) for index in range(len(pdf))]
    finally:
        pdf_close(pdf)


@contextlib.contextmanager
def _page_open(pdf: pdfium.PdfDocument, index: int, name: str) -> Iterator[pdfium.PdfPage]:
    """Page `index` of `pdf`, loaded and used with pdfium's lock held, closed after; BadPdf
    naming the file and the page when it cannot be loaded."""
    import pypdfium2 as pdfium

    with PDFIUM:
        try:
            page = pdf[index]
        except pdfium.PdfiumError as exc:
            raise BadPdf(f"{name}: page {index + 1} cannot be loaded: {exc}", field="file") from exc
        try:
            yield page
        finally:
            page.close()


def _page_text(pdf: pdfium.PdfDocument, index: int, name: str) -> str:
    import pypdfium2 as pdfium

    with _page_open(pdf, index, name) as page:
        try:
            textpage = page.get_textpage()
            text: str = textpage.get_text_range()
            textpage.close()
            return text
        except pdfium.PdfiumError as exc:
            raise BadPdf(f"{name}: page {index + 1} cannot be read: {exc}", field="file") from exc


def _file_check(data: bytes, name: str) -> None:
    limit = settings.NORMAGPT_MAX_FILE_MB
    if len(data) > limit * 2**20:
        raise BadPdf(
            f"{name} is {len(data) / 2**20:,.0f} MB, over the limit of {limit} MB: "
            "NORMAGPT_MAX_FILE_MB",
            field="file",
        )
    if b"%PDF-" not in data[:HEADER_WITHIN]:
        what = "empty" if not data else "not a PDF (a PDF file begins with %PDF-)"
        raise BadPdf(f"{name} is {what}", field="file")


def _unreadable(name: str, exc: Exception) -> str:
    import pypdfium2.raw as codes

    code = getattr(exc, "err_code", None)
    if code == codes.FPDF_ERR_PASSWORD:
        return f"{name} is encrypted: it opens only with a password; upload it without one"
    if code == codes.FPDF_ERR_SECURITY:
        return f"{name} is protected by a security handler PDFium does not support"
    return f"{name} is not a readable PDF (damaged or truncated): {exc}"


def _pages_check(pdf: pdfium.PdfDocument, name: str) -> None:
    """Every page exists and is within the size limits (BadPdf naming the first that is not)."""
    import pypdfium2 as pdfium

    total, limit = len(pdf), settings.NORMAGPT_MAX_PAGES
    if total == 0:
        raise BadPdf(f"{name} has no pages", field="file")
    if total > limit:
        raise BadPdf(
            f"{name}: its page tree claims {total:,} pages, over the limit of {limit:,} "
            "pages: NORMAGPT_MAX_PAGES",
            field="file",
        )
    for index in range(total):
        try:
            width, height = pdf.get_page_size(index)
        except pdfium.PdfiumError as exc:
            raise BadPdf(
                f"{name}: page {index + 1} of {total} cannot be read: the file's page tree "
                "names a page the file does not hold (a damaged or hostile file)",
                field="file",
            ) from exc
        _size_check(name, index + 1, width, height)


def _size_check(name: str, number: int, width: float, height: float) -> None:
    if not (math.isfinite(width) and math.isfinite(height) and width > 0 and height > 0):
        raise BadPdf(f"{name}: page {number} has no size ({width} × {height} pt)", field="file")
    limit = settings.NORMAGPT_MAX_PAGE_AREA
    if width * height > limit:
        bound = f"A0 ({A0[0]} × {A0[1]} pt)" if limit == A0[0] * A0[1] else f"{limit:,} pt²"
        raise BadPdf(
            f"{name}: page {number} is {width:,.0f} × {height:,.0f} pt, over the limit of "
            f"{bound}: NORMAGPT_MAX_PAGE_AREA",
            field="file",
        )


def render_scale(width: float, height: float, dpi: int) -> float:
    """Pixels per point for a page of `width` × `height` pt: `dpi`'s, or less where the
    image would exceed NORMAGPT_MAX_RENDER_PIXELS or JPEG's largest side. Computed from the
    page's size before it is drawn."""
    # the largest s with (width·s + 1)(height·s + 1) ≤ the limit: pdfium rounds sides up
    area, sides, pixels = width * height, width + height, settings.NORMAGPT_MAX_RENDER_PIXELS
    fits = (math.sqrt(sides * sides + 4 * area * (pixels - 1)) - sides) / (2 * area)
    return min(dpi / 72, fits, JPEG_MAX_SIDE / max(width, height))


def page_render(
    pdf: pdfium.PdfDocument, index: int, *, dpi: int, name: str = "the PDF"
) -> RenderedPage:
    """One page: its JPEG image at `dpi` (lower for a page whose image would exceed the
    pixel limit), and its text (the text layer, cleaned by `text_clean`; else OCR).

    BadPdf naming `name` and the page when pdfium cannot load or draw it."""
    text, bitmap = _page_draw(pdf, index, dpi, name)
    try:
        image = bitmap.to_pil()  # RGBX, sharing the bitmap's memory: no copy
        has_layer = len(text.strip()) >= MIN_TEXT_CHARS
        ocr = False
        if not has_layer and settings.NORMAGPT_OCR and tesseract_available():
            recognised = ocr_image(image.convert("RGB"))
            if recognised.strip():
                text, ocr = recognised, True
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=JPEG_QUALITY, optimize=True)
    except (MemoryError, OSError, ValueError) as exc:
        raise BadPdf(
            f"{name}: page {index + 1} could not be drawn: {_what(exc)}", field="file"
        ) from exc
    finally:
        with PDFIUM:
            bitmap.close()
    return RenderedPage(
        number=index + 1, text=text.strip(), image=buffer.getvalue(), width=image.width,
        height=image.height, has_text_layer=has_layer, ocr=ocr,
    )  # fmt: skip


def _page_draw(
    pdf: pdfium.PdfDocument, index: int, dpi: int, name: str
) -> tuple[str, pdfium.PdfBitmap]:
    """The page's cleaned text and its bitmap (close it with the lock held)."""
    import pypdfium2 as pdfium

    with _page_open(pdf, index, name) as page:
        try:
            textpage = page.get_textpage()
            text = text_clean(textpage.get_text_bounded())
            textpage.close()
            width, height = page.get_size()
            scale = render_scale(width, height, dpi)
            bitmap = page.render(scale=scale, rev_byteorder=True, prefer_bgrx=True)
        except (pdfium.PdfiumError, MemoryError) as exc:
            raise BadPdf(
                f"{name}: page {index + 1} could not be drawn: {_what(exc)}", field="file"
            ) from exc
    return text, bitmap


def _what(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "not enough memory (lower NORMAGPT_MAX_RENDER_PIXELS)"
    return str(exc) or type(exc).__name__


@functools.cache
def tesseract_available() -> bool:
    """Whether the tesseract binary and every language of NORMAGPT_OCR_LANGS are installed."""
    try:
        ocr_check(command=settings.NORMAGPT_TESSERACT_CMD, languages=settings.NORMAGPT_OCR_LANGS)
    except OcrUnavailable as exc:
        logger.warning("%s: pages without a text layer stay unread", exc.message)
        return False
    return True


def ocr_image(image: Image.Image) -> str:
    """The text tesseract reads on `image` ('' when it fails: the page stays flagged)."""
    try:
        return image_read(
            image,
            command=settings.NORMAGPT_TESSERACT_CMD,
            languages=settings.NORMAGPT_OCR_LANGS,
            timeout=120,
        )
    except DomainError as exc:
        logger.warning("%s", exc.message)
        return ""
