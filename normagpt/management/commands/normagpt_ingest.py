"""`manage.py normagpt_ingest FILE.pdf --code … --title …`: a PDF into the norms corpus; with
`--amends CODE --number N`, an amendment to an edition of it."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.exceptions import DomainError
from normagpt import editions, services
from normagpt.models import NormDocument


def day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"{value!r} is not a date as YYYY-MM-DD") from exc


class Command(BaseCommand):
    help = (
        "Ingest a PDF norm document, an edition in force from --in-force-from (until "
        "--in-force-to): every page rendered to an image and its text layer read (OCR with "
        "tesseract for pages without one). Re-ingesting a code replaces its pages. With "
        "--amends CODE --number N, FILE (PDF or UTF-8 text) is amendment N to that edition, "
        "in force from --in-force-from: its orders («Пункт … изложить в новой редакции: «…»», "
        "«Пункт … исключить», «Пункт …. Заменить слова …», «Раздел … дополнить пунктом …», "
        "…) change the edition from that day; the orders it cannot read or make are named."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The PDF file (an amendment: PDF or text).")
        parser.add_argument("--code", help="e.g. 'СП 63.13330.2018'.")
        parser.add_argument("--title", help="The document's title.")
        parser.add_argument(
            "--kind", choices=NormDocument.Kind.values, help="Default: from the code."
        )
        parser.add_argument("--replaced-by", help="Code of the document that replaces this one.")
        parser.add_argument("--in-force-from", type=day, help="YYYY-MM-DD: in force from then.")
        parser.add_argument("--in-force-to", type=day, help="YYYY-MM-DD: no longer from then.")
        parser.add_argument("--amends", metavar="CODE", help="FILE amends this edition.")
        parser.add_argument("--number", type=int, help="The amendment's number (Изменение № N).")
        parser.add_argument("--dpi", type=int, help="Page image DPI (default NORMAGPT_PAGE_DPI).")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file")
        try:
            if options["amends"]:
                self._amendment(path, options)
            else:
                self._edition(path, options)
        except DomainError as exc:
            raise CommandError(exc.message) from exc

    def _amendment(self, path: Path, options: dict[str, Any]) -> None:
        if options["number"] is None or options["in_force_from"] is None:
            raise CommandError("an amendment needs --number and --in-force-from")
        reading = editions.reading_checked(editions.amendment_text(path.read_bytes()))
        changes = reading.changes
        amendment = editions.amendment_save(
            code=options["amends"],
            number=options["number"],
            in_force_from=options["in_force_from"],
            changes=changes,
            title=options["title"] or "",
            unread=reading.unread,
        )
        for order in amendment.unread_orders.all():
            self.stderr.write(
                f"not applied (not a wording this reader knows: {order.reason}): "
                f"{editions.Order(order.text, ()).shown}"
            )
        for missed in amendment.changes.filter(applied=False):
            self.stderr.write(f"not made on the edition's text: {editions.change_label(missed)}")
        numbers = ", ".join(c.number + _noted(c) for c in changes)
        self.stdout.write(
            f"{amendment.document.code}: amendment {amendment.number} in force from "
            f"{amendment.in_force_from}, {len(changes)} clause(s) changed: {numbers}"
        )

    def _edition(self, path: Path, options: dict[str, Any]) -> None:
        if not options["code"] or not options["title"]:
            raise CommandError("a document needs --code and --title")
        with path.open("rb") as handle:
            document = services.document_save(
                code=options["code"],
                title=options["title"],
                kind=options["kind"],
                replaced_by=options["replaced_by"],
                file=File(handle, name=path.name),
                in_force_from=options["in_force_from"],
                in_force_to=options["in_force_to"],
            )
        with tqdm(unit="page", desc=document.code, file=self.stderr._out) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            document = services.document_ingest(
                document_id=document.pk, dpi=options["dpi"], progress=progress
            )
        unread = document.pages.filter(has_text_layer=False)
        self.stdout.write(
            f"{document.code}: {document.page_count} pages ingested; "
            f"{unread.count()} without a text layer ({unread.filter(ocr=True).count()} read by OCR)"
        )


def _noted(change: editions.Change) -> str:
    noted = {
        editions.SUBSTITUTE: " (замена слов)",
        editions.APPEND: " (дополнен)",
        editions.INSERT: " (дополнен)",
        editions.ADD: " (новый)",
        editions.SECTION: " (раздел)",
        editions.TITLE: " (наименование)",
    }
    if change.mode in noted:
        return noted[change.mode]
    return " (исключён)" if not change.text else (f" ({change.part})" if change.part else "")
