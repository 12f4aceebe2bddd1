"""`manage.py normagpt_ingest_dataset DIR [--only CODE …]`: a checkout of the public dataset
Akumsk/russian-construction-standards loaded as documents of the corpus (docs/normagpt.md: "A real
corpus")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.exceptions import DomainError
from normagpt import dataset
from normagpt.ingest import corpus_analyze


class Command(BaseCommand):
    help = (
        "Load a checkout of the dataset Akumsk/russian-construction-standards (its "
        "metadata/*.json: the page texts of 361 norm documents, CC BY 4.0) into the corpus: "
        "each document by its code, its pages read into clauses and tables, the dataset's "
        "attribution shown with them. A file loaded before, unchanged, is skipped: run it "
        "again to go on after a stop. Prints, per document: pages, clauses, tables and the "
        "clause numbers that open a line but were not read as parts."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "directory", type=Path, help="The dataset's checkout (or its metadata)."
        )
        parser.add_argument(
            "--only", nargs="+", metavar="CODE", help="Documents whose code holds these."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        directory: Path = options["directory"]
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a directory")
        try:
            files = dataset.dataset_files(directory)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        loaded, failed, taken = self._load(files, options["only"])
        if loaded:
            corpus_analyze()  # the planner's statistics after a bulk load (PostgreSQL)
        self.stdout.write(
            f"{taken} file(s): {loaded} loaded, {taken - loaded - failed} unchanged or "
            f"repeated, {failed} failed"
        )
        if failed:
            raise CommandError(f"{failed} file(s) could not be loaded (see above)")

    def _load(self, files: list[Path], only: list[str] | None) -> tuple[int, int, int]:
        """(loaded, failed, taken): a file that is no document of the dataset fails whatever
        was asked for; a code read twice (a file's copy) is loaded once."""
        loaded = failed = taken = 0
        seen: dict[str, str] = {}  # code → the file it was read from in this run
        with tqdm(files, unit="doc", file=self.stderr._out) as bar:
            for path in bar:
                bar.set_postfix_str(path.stem[:40])
                document = self._read(path)
                if document is None or not dataset.code_wanted(document.code, only):
                    failed += document is None
                    taken += document is None
                    continue
                taken += 1
                if document.code in seen:
                    self.stderr.write(f"{path.name}: {document.code} again ({seen[document.code]})")
                    continue
                seen[document.code] = path.name
                try:
                    stored, now = dataset.dataset_document_load(document=document)
                except DomainError as exc:
                    failed += 1
                    self.stderr.write(f"{path.name}: {exc.message}")
                    continue
                loaded += now
                self._summary(stored.pk, stored.code, now)
        return loaded, failed, taken

    def _read(self, path: Path) -> dataset.DatasetDocument | None:
        try:
            return dataset.dataset_document_read(path)
        except DomainError as exc:
            self.stderr.write(f"{path.name}: {exc.message}")
            return None

    def _summary(self, document_id: int, code: str, now: bool) -> None:
        reading = dataset.document_reading(document_id=document_id)
        unread = ", ".join(reading.unread[: dataset.UNREAD_SHOWN])
        more = len(reading.unread) - dataset.UNREAD_SHOWN
        self.stdout.write(
            f"{code}: {reading.pages} pages, {reading.clauses} clauses, {reading.tables} tables"
            + (" (unchanged)" if not now else "")
            + (
                f"; not read as parts: {unread}" + (f" and {more} more" if more > 0 else "")
                if unread
                else ""
            )
        )
