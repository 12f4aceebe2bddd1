"""`manage.py normagpt_demo`: a small SAMPLE corpus, so a fresh checkout has norms to search."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core.exceptions import DomainError
from normagpt.demo import demo_corpus_load
from normagpt.models import NormDocument


class Command(BaseCommand):
    help = (
        "Build a few sample PDF pages with reportlab (every page marked as a SAMPLE, not a real "
        "norm) and ingest them. Safe to run again: the sample documents are replaced."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Do nothing when the corpus already has documents (what `make run` uses).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["if_empty"] and NormDocument.objects.exists():
            self.stdout.write("normagpt_demo: the corpus already has documents; nothing to do")
            return
        with tempfile.TemporaryDirectory(prefix="normagpt-demo-") as directory:
            bar = tqdm(unit="page", file=self.stderr._out)

            def progress(code: str, done: int, total: int) -> None:
                bar.set_description(code)
                bar.update(1)

            try:
                documents = demo_corpus_load(directory=Path(directory), progress=progress)
            except DomainError as exc:
                raise CommandError(exc.message) from exc
            finally:
                bar.close()
        for document in documents:
            self.stdout.write(f"{document.code}: {document.page_count} page(s) — {document.title}")
