"""`manage.py normagpt_reindex [CODE ...]`: split the stored pages of the corpus (or of the
named documents) into clauses again and count the search stems anew, without reading the
PDFs again — after rows were changed outside Django, or after an upgrade of the splitter."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from normagpt import services


class Command(BaseCommand):
    help = (
        "Split the corpus's stored pages into clauses again and recount the search stems "
        "(all documents, or those whose codes are given)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("codes", nargs="*", help="Document codes (all documents if none).")

    def handle(self, *args: Any, **options: Any) -> None:
        def report(code: str, clauses: int) -> None:
            self.stdout.write(f"{code}: {clauses} clause(s)")

        documents, stems = services.corpus_reindex(codes=options["codes"], progress=report)
        self.stdout.write(self.style.SUCCESS(f"{documents} document(s), {stems} stem(s) counted"))
