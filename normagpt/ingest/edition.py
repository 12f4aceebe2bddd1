"""A new edition's pages replace the old one's in one transaction, or not at all.

An ingestion renders each page into a NormPageDraft (its image stored at once under a
new name, through Django's storage: a shared disk or S3). Only when every page is there
does `edition_replace` swap them in — the old clauses out, each page's content the new
edition's (a page keeps its id, which answers cite), the new clauses in, indexed — in one
transaction; the old images are deleted after it commits. Until then,
and whenever anything fails, the old edition is whole and searchable.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable

from django.core.files.base import ContentFile
from django.db import connection, transaction

from normagpt.exceptions import BadPdf, IngestLost, IngestRunning
from normagpt.indexing import document_index, document_unindex, search_index_merge
from normagpt.ingest.lease import lease_held
from normagpt.ingest.pdf import RenderedPage
from normagpt.models import NormClause, NormDocument, NormPage, NormPageDraft, NormTerm
from normagpt.parsing import clauses_find

logger = logging.getLogger(__name__)

ANALYZE_SHARE, ANALYZE_BASE = 0.1, 50  # PostgreSQL's autovacuum_analyze_scale_factor, _threshold


def draft_add(*, document_id: int, source: str, page: RenderedPage) -> None:
    """Keep a rendered page of the rendering `source`: its image stored under a new name,
    then its row (the image deleted again if the row cannot be written)."""
    draft = NormPageDraft(
        document_id=document_id, source=source, number=page.number, text=page.text,
        width=page.width, height=page.height, has_text_layer=page.has_text_layer, ocr=page.ocr,
    )  # fmt: skip
    name = f"{document_id}-{uuid.uuid4().hex[:12]}-{page.number:04d}.jpg"
    draft.image.save(name, ContentFile(page.image), save=False)
    try:
        draft.save()
    except BaseException:
        images_delete([draft.image.name or name])
        raise


def drafts_numbers(*, document_id: int, source: str) -> set[int]:
    """The pages of the rendering `source` kept already."""
    drafts = NormPageDraft.objects.filter(document_id=document_id, source=source)
    return set(drafts.values_list("number", flat=True))


def drafts_discard(*, document_id: int, keep: str | None = None) -> int:
    """Delete the document's kept pages (those of any rendering but `keep`) and their
    images; how many."""
    drafts = NormPageDraft.objects.filter(document_id=document_id)
    if keep is not None:
        drafts = drafts.exclude(source=keep)
    names = list(drafts.exclude(image="").values_list("image", flat=True))
    count, _ = drafts.delete()
    images_delete(names)
    return count


def drafts_pages(*, document_id: int, source: str, total: int) -> list[NormPage]:
    """The kept pages of the rendering `source` as the edition's pages (unsaved); BadPdf
    unless they are its pages 1 to `total`."""
    drafts = NormPageDraft.objects.filter(document_id=document_id, source=source)
    pages = [
        NormPage(
            document_id=document_id,
            number=d.number,
            text=d.text,
            image=d.image.name,
            width=d.width,
            height=d.height,
            clauses=clauses_find(d.text),
            has_text_layer=d.has_text_layer,
            ocr=d.ocr,
        )
        for d in drafts.order_by("number")
    ]
    if [page.number for page in pages] != list(range(1, total + 1)):
        raise BadPdf(f"document {document_id}: {len(pages)} of {total} pages were rendered")
    return pages


def edition_replace(
    *, document_id: int, pages: list[NormPage], holder: str | None, source: str | None = None
) -> int:
    """Put `pages` (unsaved, their images stored) in place of the document's pages and
    clauses in one transaction: indexed, the document `done`, the kept pages of `source`
    dropped (their images are now the pages'). Only while `holder` holds the ingestion's
    lease (IngestLost), or with `holder` None while no live ingestion does (IngestRunning):
    then nothing changes. The old images are deleted once it commits. The clause rows it
    changed (old and new)."""
    with transaction.atomic():
        document = NormDocument.objects.select_for_update().get(pk=document_id)
        _holder_check(document, holder)
        old_images = list(
            NormPage.objects.filter(document=document)
            .exclude(image="")
            .values_list("image", flat=True)
        )
        old_clauses = NormClause.objects.filter(document=document).count()
        document_unindex(document_id=document_id)
        _pages_put(document_id, pages)
        clauses = document_index(document_id=document_id)
        if source is not None:
            NormPageDraft.objects.filter(document=document, source=source).delete()
        NormDocument.objects.filter(pk=document_id).update(
            ingest_status=NormDocument.Ingest.DONE, ingest_error="", page_count=len(pages),
            ingest_holder="", ingest_heartbeat_at=None, ingest_done=len(pages),
            ingest_total=len(pages),
        )  # fmt: skip
    transaction.on_commit(lambda: images_delete(old_images))
    return old_clauses + clauses


PAGE_FIELDS = ["text", "image", "width", "height", "clauses", "has_text_layer", "ocr"]


def _pages_put(document_id: int, pages: list[NormPage]) -> None:
    """The edition's pages in place of the document's: a page of a number the document has
    keeps its row (its id, which answers and links cite: `/normagpt/pages/<id>/`), its
    content the new edition's; pages past the old edition's end are added, and the old
    edition's past the new one's end deleted."""
    held = dict(NormPage.objects.filter(document_id=document_id).values_list("number", "pk"))
    kept = [page for page in pages if page.number in held]
    for page in kept:
        page.pk = held[page.number]
    NormPage.objects.bulk_update(kept, PAGE_FIELDS, batch_size=500)
    NormPage.objects.bulk_create([page for page in pages if page.number not in held])
    numbers = {page.number for page in pages}
    gone = [pk for number, pk in held.items() if number not in numbers]
    NormPage.objects.filter(pk__in=gone).delete()


def _holder_check(document: NormDocument, holder: str | None) -> None:
    if holder is None and lease_held(document):
        raise IngestRunning(
            f"{document.code} is being ingested from its PDF: wait for it to finish"
        )
    if holder is not None and document.ingest_holder != holder:
        raise IngestLost(f"{document.code}: its ingestion was taken over; stopping")


def images_delete(names: Iterable[str]) -> None:
    """Delete stored page images; one that cannot be deleted is logged and left."""
    storage = NormPage._meta.get_field("image").storage
    for name in names:
        try:
            storage.delete(name)
        except Exception:  # the edition is in place already: a stray file is only a leftover
            logger.warning("page image %s could not be deleted", name, exc_info=True)


def corpus_analyze() -> bool:
    """Ready the search's tables after a bulk load: their full-text indexes merged
    (`indexing.search_index_merge`), and on PostgreSQL the planner's statistics of them
    (pages, clauses, stems) refreshed, which it needs when autovacuum is off or behind
    (search took 25.8 ms of CPU before, 14.9 ms after); whether the statistics were (not on
    SQLite, whose planner the search's queries do not need statistics for)."""
    search_index_merge()
    if connection.vendor != "postgresql":
        return False
    tables = ", ".join(m._meta.db_table for m in (NormPage, NormClause, NormTerm))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")
    return True


def statistics_refresh(*, changed: int) -> bool:
    """After an ingestion that changed `changed` clause rows: `corpus_analyze` when they
    are more than a tenth (and 50) of the clauses PostgreSQL's planner believes there are,
    or it has never counted them (autovacuum's own rule, kept whether or not autovacuum
    runs), else the full-text indexes merged only; whether the statistics were refreshed."""
    if connection.vendor != "postgresql":
        search_index_merge()
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [_CLAUSES])
        row = cursor.fetchone()
    counted = row[0] if row else -1
    if counted >= 0 and changed <= ANALYZE_BASE + ANALYZE_SHARE * counted:
        search_index_merge()
        return False
    return corpus_analyze()


_CLAUSES = NormClause._meta.db_table
