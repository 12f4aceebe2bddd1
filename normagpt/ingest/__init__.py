"""Ingesting norm documents: a PDF becomes pages with an image, text and clause numbers.

- `pdf`: every PDF checked against the limits before a page is drawn; drawing a page.
- `lease`: one process ingests a document at a time; one that stopped is marked failed.
- `edition`: a new edition's pages replace the old one's in one transaction, or not at all.
- `documents`: the use cases — saving a document, ingesting its PDF or its page texts.
"""

from normagpt.ingest.documents import document_ingest, document_save, document_texts_ingest
from normagpt.ingest.edition import corpus_analyze
from normagpt.ingest.lease import ingests_expire
from normagpt.ingest.pdf import (
    RenderedPage,
    ocr_image,
    page_render,
    pdf_close,
    pdf_open,
    pdf_texts,
    tesseract_available,
)

__all__ = [
    "RenderedPage",
    "corpus_analyze",
    "document_ingest",
    "document_save",
    "document_texts_ingest",
    "ingests_expire",
    "ocr_image",
    "page_render",
    "pdf_close",
    "pdf_open",
    "pdf_texts",
    "tesseract_available",
]
