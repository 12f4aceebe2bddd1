"""Norm documents into the corpus: a PDF's pages rendered and read, or a document's page
texts, put in place of the edition's pages in one transaction (`normagpt.ingest.edition`).

pypdfium2 renders each page (NORMAGPT_PAGE_DPI, within the limits of
`normagpt.ingest.pdf`) and reads its text layer. A page without one is flagged and, when
Debian's tesseract (with the languages of NORMAGPT_OCR_LANGS) is installed, its text is
recognised from the image.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from core.exceptions import DomainError, InvalidInput
from core.holders import holder_token
from normagpt.exceptions import BadPdf, DocumentNotFound, IngestLost, IngestRunning
from normagpt.indexing import aliases_refresh
from normagpt.ingest.edition import (
    draft_add,
    drafts_discard,
    drafts_numbers,
    drafts_pages,
    edition_replace,
    statistics_refresh,
)
from normagpt.ingest.lease import heartbeat, lease_held, lease_release, lease_renew, lease_take
from normagpt.ingest.pdf import page_render, pdf_close, pdf_open
from normagpt.models import NormDocument, NormPage
from normagpt.parsing import clauses_find, code_key, kind_from_code, text_clean

if TYPE_CHECKING:
    import pypdfium2 as pdfium

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
_SAVED = ["code", "code_key", "title", "kind", "status", "replaced_by", "is_sample",
          "in_force_from", "in_force_to", "updated_at"]  # fmt: skip


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
    resets the document to `pending` ingestion (IngestRunning while its PDF is being
    ingested). An edition whose days ended by today is `replaced` today. The ingestion's
    own fields (its lease, progress, page count) are left as they are.
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
    document = (
        NormDocument.objects.select_for_update().filter(code_key=code_key(code)).first()
        or NormDocument()
    )
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
    _file_put(document, file)
    fields = [*_SAVED, "file", "ingest_status", "ingest_error"] if file is not None else _SAVED
    document.save(update_fields=fields if document.pk else None)
    aliases_refresh(document)
    return document


def _file_put(document: NormDocument, file: File | None) -> None:
    if file is None:
        return
    if document.pk and lease_held(document):
        raise IngestRunning(f"{document.code} is being ingested: upload its new file after that")
    document.file.save(Path(file.name or "document.pdf").name, file, save=False)
    document.ingest_status = NormDocument.Ingest.PENDING
    document.ingest_error = ""


def document_ingest(
    *, document_id: int, dpi: int | None = None, progress: Progress | None = None
) -> NormDocument:
    """Render and read every page of the document's PDF, then put them in place of its
    pages and clauses in one transaction: until then, and if anything fails, the edition
    it had stays whole and searchable.

    Holds the document's ingestion lease meanwhile (IngestRunning while another live
    process holds it). A start after one that stopped midway (killed: the recovery sweep
    marks it failed) goes on from the pages it rendered, for the same file at the same
    DPI. On failure the document is marked `failed` with the reason, the pages rendered
    are deleted, and BadPdf (naming the file, the page and the rule) or the error raised.
    """
    document = NormDocument.objects.filter(pk=document_id).first()
    if document is None:
        raise DocumentNotFound(f"document {document_id} does not exist")
    if not document.file:
        raise BadPdf(f"document {document.code} has no file to ingest", field="file")
    holder = holder_token()
    lease_take(document_id=document.pk, holder=holder)
    try:
        with heartbeat(document_id=document.pk, holder=holder):
            changed = _ingest(document, holder, dpi or settings.NORMAGPT_PAGE_DPI, progress)
    except IngestLost:
        raise
    except Exception as exc:
        _fail(document, holder, exc)
        raise
    statistics_refresh(changed=changed)
    document.refresh_from_db()
    return document


def _ingest(document: NormDocument, holder: str, dpi: int, progress: Progress | None) -> int:
    """Render the pages not kept yet, then swap the edition; the clause rows changed."""
    data = _file_read(document)
    source = f"{hashlib.sha256(data).hexdigest()}@{dpi}"
    drafts_discard(document_id=document.pk, keep=source)  # of another file or DPI
    name = _file_name(document)
    pdf = pdf_open(data, name=name)
    try:
        total = len(pdf)
        lease = (document.pk, holder)
        _pages_render(pdf, lease=lease, source=source, dpi=dpi, name=name, progress=progress)
    finally:
        pdf_close(pdf)
    pages = drafts_pages(document_id=document.pk, source=source, total=total)
    return edition_replace(document_id=document.pk, pages=pages, holder=holder, source=source)


def _pages_render(
    pdf: pdfium.PdfDocument,
    *,
    lease: tuple[int, str],
    source: str,
    dpi: int,
    name: str,
    progress: Progress | None,
) -> None:
    """Render and keep each page of the rendering `source` not kept yet, renewing the
    lease (document, holder) and counting the pages kept with each."""
    document_id, holder = lease
    total = len(pdf)
    kept = drafts_numbers(document_id=document_id, source=source)
    lease_renew(document_id=document_id, holder=holder, ingest_done=len(kept), ingest_total=total)
    if kept and progress is not None:
        progress(len(kept), total)
    for index in range(total):
        if index + 1 in kept:
            continue
        page = page_render(pdf, index, dpi=dpi, name=name)
        draft_add(document_id=document_id, source=source, page=page)
        kept.add(index + 1)
        lease_renew(document_id=document_id, holder=holder, ingest_done=len(kept))
        if progress is not None:
            progress(len(kept), total)


def _file_read(document: NormDocument) -> bytes:
    """The stored file's bytes; BadPdf (naming the rule) for one over NORMAGPT_MAX_FILE_MB,
    refused before it is read."""
    limit = settings.NORMAGPT_MAX_FILE_MB
    size = document.file.size
    if size > limit * 2**20:
        raise BadPdf(
            f"{_file_name(document)} is {size / 2**20:,.0f} MB, over the limit of "
            f"{limit} MB: NORMAGPT_MAX_FILE_MB",
            field="file",
        )
    with document.file.open("rb") as handle:
        return handle.read()


def _file_name(document: NormDocument) -> str:
    return Path(document.file.name or "document.pdf").name


def _fail(document: NormDocument, holder: str, exc: Exception) -> None:
    """Mark the ingestion failed with the reason and delete the pages it rendered (unless
    another process took it over meanwhile: they are its pages then)."""
    if isinstance(exc, DomainError):
        reason = exc.message
    else:
        logger.error("ingestion of %s failed", document.code, exc_info=exc)
        reason = f"ingestion failed: {type(exc).__name__}: {exc}".rstrip(": ")
    if lease_release(
        document_id=document.pk,
        holder=holder,
        ingest_status=NormDocument.Ingest.FAILED,
        ingest_error=reason[:2000],
    ):
        drafts_discard(document_id=document.pk)


def document_texts_ingest(
    *, document_id: int, texts: list[str], progress: Progress | None = None
) -> NormDocument:
    """The document's pages from `texts`, one per page (no PDF, no images): each cleaned
    (`text_clean`), with a text layer, indexed, put in place of its pages and clauses in
    one transaction — the edition it had stays whole if anything fails — and the
    document marked `done`. InvalidInput for no texts; IngestRunning while its PDF is
    being ingested. `progress(done, total)` counts the pages read."""
    if not texts:
        raise InvalidInput("texts: a document needs at least one page", field="texts")
    if not NormDocument.objects.filter(pk=document_id).exists():
        raise DocumentNotFound(f"document {document_id} does not exist")
    pages = []
    for number, raw in enumerate(texts, 1):
        text = text_clean(raw).strip()
        pages.append(
            NormPage(document_id=document_id, number=number, text=text, clauses=clauses_find(text))
        )
        if progress is not None:
            progress(number, len(texts))
    changed = edition_replace(document_id=document_id, pages=pages, holder=None)
    statistics_refresh(changed=changed)
    return NormDocument.objects.get(pk=document_id)
