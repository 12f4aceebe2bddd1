"""Ingesting norm documents: a PDF becomes pages with an image, text and clause numbers.

pypdfium2 renders each page (NORMAGPT_PAGE_DPI) and reads its text layer. A page without
one is flagged and, when Debian's tesseract (with the languages of NORMAGPT_OCR_LANGS) is
installed, its text is recognised from the image.
"""

from __future__ import annotations

import functools
import io
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.files.base import ContentFile, File
from django.db import transaction
from django.utils import timezone

from core.exceptions import DomainError, InvalidInput
from core.ocr import OcrUnavailable, image_read, ocr_check
from normagpt.exceptions import BadPdf, DocumentNotFound
from normagpt.indexing import aliases_refresh, document_index, document_unindex
from normagpt.models import NormDocument, NormPage
from normagpt.parsing import clauses_find, code_key, kind_from_code

if TYPE_CHECKING:  # rendering libraries load when a PDF is read, not when a server starts
    import pypdfium2 as pdfium
    from PIL import Image

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
MIN_TEXT_CHARS = 20  # fewer characters than this: the page has no usable text layer
JPEG_QUALITY = 85


@dataclass(frozen=True)
class RenderedPage:
    number: int
    text: str
    image: bytes
    width: int
    height: int
    has_text_layer: bool
    ocr: bool


@transaction.atomic
def document_save(
    *,
    code: str,
    title: str,
    kind: str | None = None,
    status: str = NormDocument.Status.IN_FORCE,
    replaced_by: str | None = None,
    file: File | None = None,
    is_sample: bool = False,
    in_force_from: date | None = None,
    in_force_to: date | None = None,
) -> NormDocument:
    """Create or update the document `code` (matched ignoring case and spaces), an edition
    in force from `in_force_from` until `in_force_to` (the day it stopped; None: open).

    `replaced_by` names the replacing document's code, which must exist. A new `file`
    resets the document to `pending` ingestion. An edition whose days ended by today is
    `replaced` today.
    """
    if in_force_from and in_force_to and in_force_to <= in_force_from:
        raise InvalidInput("in_force_to must be after in_force_from", field="in_force_to")
    code = " ".join(code.split())
    successor = None
    if replaced_by:
        successor = NormDocument.objects.filter(code_key=code_key(replaced_by)).first()
        if successor is None:
            raise DocumentNotFound(f"replaced_by: no document {replaced_by!r} in the corpus")
        status = NormDocument.Status.REPLACED
    if in_force_to is not None and in_force_to <= timezone.localdate():
        status = NormDocument.Status.REPLACED
    document = NormDocument.objects.filter(code_key=code_key(code)).first() or NormDocument()
    if in_force_from is not None:  # not given: the edition's days stay as they were
        document.in_force_from = in_force_from
    if in_force_to is not None:
        document.in_force_to = in_force_to
    document.code = code
    document.title = title
    document.kind = kind or kind_from_code(code)
    document.status = status
    document.replaced_by = successor
    document.is_sample = is_sample
    if file is not None:
        document.file.save(Path(file.name or "document.pdf").name, file, save=False)
        document.ingest_status = NormDocument.Ingest.PENDING
        document.ingest_error = ""
    document.save()
    aliases_refresh(document)
    return document


def document_ingest(
    *, document_id: int, dpi: int | None = None, progress: Progress | None = None
) -> NormDocument:
    """Render and read every page of the document's PDF into NormPage rows.

    Replaces the pages of an earlier ingestion. On failure the document is marked
    `failed` with the reason, and BadPdf / DocumentNotFound is raised.
    """
    document = NormDocument.objects.filter(pk=document_id).first()
    if document is None:
        raise DocumentNotFound(f"document {document_id} does not exist")
    if not document.file:
        raise BadPdf(f"document {document.code} has no file to ingest", field="file")
    NormDocument.objects.filter(pk=document.pk).update(
        ingest_status=NormDocument.Ingest.RUNNING, ingest_error=""
    )
    try:
        with document.file.open("rb") as handle:
            data = handle.read()
        count = _ingest_pages(document, data, dpi or settings.NORMAGPT_PAGE_DPI, progress)
        document_index(document_id=document.pk)
    except Exception as exc:
        reason = exc.message if isinstance(exc, BadPdf) else f"{type(exc).__name__}: {exc}"
        NormDocument.objects.filter(pk=document.pk).update(
            ingest_status=NormDocument.Ingest.FAILED, ingest_error=reason[:2000]
        )
        raise
    NormDocument.objects.filter(pk=document.pk).update(
        ingest_status=NormDocument.Ingest.DONE, page_count=count
    )
    document.refresh_from_db()
    return document


def _ingest_pages(document: NormDocument, data: bytes, dpi: int, progress: Progress | None) -> int:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise BadPdf(f"{document.file.name} is not a readable PDF: {exc}", field="file") from exc
    try:
        total = len(pdf)
        document_unindex(document_id=document.pk)
        for old in NormPage.objects.filter(document=document).exclude(image=""):
            old.image.delete(save=False)
        NormPage.objects.filter(document=document).delete()
        for index in range(total):
            rendered = page_render(pdf, index, dpi=dpi)
            page = NormPage(
                document=document,
                number=rendered.number,
                text=rendered.text,
                width=rendered.width,
                height=rendered.height,
                clauses=clauses_find(rendered.text),
                has_text_layer=rendered.has_text_layer,
                ocr=rendered.ocr,
            )
            page.image.save(
                f"{document.pk}-{rendered.number:04d}.jpg", ContentFile(rendered.image), save=False
            )
            page.save()
            if progress is not None:
                progress(index + 1, total)
        return total
    finally:
        pdf.close()


def page_render(pdf: pdfium.PdfDocument, index: int, *, dpi: int) -> RenderedPage:
    """One page: its JPEG image at `dpi`, and its text (from the text layer, else OCR)."""
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        text = textpage.get_text_bounded().replace("\r\n", "\n").replace("\r", "\n")
        textpage.close()
        image = page.render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        page.close()
    has_layer = len(text.strip()) >= MIN_TEXT_CHARS
    ocr = False
    if not has_layer and settings.NORMAGPT_OCR and tesseract_available():
        recognised = ocr_image(image)
        if recognised.strip():
            text, ocr = recognised, True
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=JPEG_QUALITY, optimize=True)
    return RenderedPage(
        number=index + 1,
        text=text.strip(),
        image=buffer.getvalue(),
        width=image.width,
        height=image.height,
        has_text_layer=has_layer,
        ocr=ocr,
    )


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
