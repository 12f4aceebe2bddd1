"""`manage.py normagpt_ingest FILE.pdf --code … --title …`: a PDF into the norms corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.exceptions import DomainError
from normagpt import services
from normagpt.models import NormDocument


class Command(BaseCommand):
    help = (
        "Ingest a PDF norm document: every page rendered to an image and its text layer read "
        "(OCR with tesseract for pages without one). Re-ingesting a code replaces its pages."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The PDF file.")
        parser.add_argument("--code", required=True, help="e.g. 'СП 63.13330.2018'.")
        parser.add_argument("--title", required=True, help="The document's title.")
        parser.add_argument(
            "--kind", choices=NormDocument.Kind.values, help="Default: from the code."
        )
        parser.add_argument("--replaced-by", help="Code of the document that replaces this one.")
        parser.add_argument("--dpi", type=int, help="Page image DPI (default NORMAGPT_PAGE_DPI).")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file")
        try:
            with path.open("rb") as handle:
                document = services.document_save(
                    code=options["code"],
                    title=options["title"],
                    kind=options["kind"],
                    replaced_by=options["replaced_by"],
                    file=File(handle, name=path.name),
                )
            with tqdm(unit="page", desc=document.code, file=self.stderr._out) as bar:

                def progress(done: int, total: int) -> None:
                    bar.total = total
                    bar.update(done - bar.n)

                document = services.document_ingest(
                    document_id=document.pk, dpi=options["dpi"], progress=progress
                )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        unread = document.pages.filter(has_text_layer=False)
        self.stdout.write(
            f"{document.code}: {document.page_count} pages ingested; "
            f"{unread.count()} without a text layer ({unread.filter(ocr=True).count()} read by OCR)"
        )
