"""`manage.py sdamgia_crawl`: catalog → every category listing → the database."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core import background
from core.exceptions import DomainError
from problems import catalog, selectors
from problems.models import Category
from problems.subjects import site_resolve

CRAWL_TASK = "problems.crawl_category"


class Command(BaseCommand):
    help = (
        "Crawl a СДАМ ГИА site into the database: the catalog, then every category listing "
        "(whole problems). Resumable: categories read within their TTL are skipped. Runs on "
        "Celery workers when REDIS_URL is set, in-process otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--subject", required=True, help="Subject code or alias, e.g. math.")
        parser.add_argument("--exam", default="ege", help="ege (default) or oge.")
        parser.add_argument("--category", help="Only this category id.")
        parser.add_argument("--dry-run", action="store_true", help="Show what would be fetched.")
        parser.add_argument("--refresh", action="store_true", help="Fetch fresh items too.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            site = site_resolve(subject=options["subject"], exam=options["exam"])
            catalog.catalog_get(site=site, refresh=options["refresh"])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        categories = Category.objects.filter(subject=site.subject, exam=site.exam)
        if options["category"]:
            categories = categories.filter(category_id=options["category"])
            if not categories.exists():
                raise CommandError(
                    f"category {options['category']} is not in the catalog of {site.label}"
                )
        fresh_after = selectors.fresh_since(settings.SDAMGIA_TTL_CATEGORY)
        todo = [
            c
            for c in categories.order_by("topic__position", "position")
            if options["refresh"]
            or c.listing_fetched_at is None
            or c.listing_fetched_at < fresh_after
        ]
        skipped = categories.count() - len(todo)
        self.stderr.write(
            f"{site.label}: {len(todo)} categories to read, {skipped} fresh (skipped)"
        )
        if options["dry_run"]:
            for category in todo:
                self.stdout.write(f"would read category {category.category_id}: {category.title}")
            return
        stored, failed = self._crawl(
            site.subject, site.exam, [c.category_id for c in todo], options["refresh"]
        )
        self.stdout.write(
            f"done: {stored} problems in {len(todo) - len(failed)} categories; {len(failed)} failed"
        )
        for category_id, message in failed.items():
            self.stderr.write(f"category {category_id}: {message}")

    def _crawl(
        self, subject: str, exam: str, ids: list[str], refresh: bool
    ) -> tuple[int, dict[str, str]]:
        """One task per category: on the workers when one answers, else here in turn."""
        with tqdm(total=len(ids), unit="category", file=self.stderr._out) as bar:
            answers = background.gather(
                CRAWL_TASK,
                [(subject, exam, cid, refresh) for cid in ids],
                timeout=None,
                progress=lambda done, _: bar.update(done - bar.n),
            )
        stored = sum(int(answer.value) for answer in answers if not answer.error)
        failed = {cid: a.error for cid, a in zip(ids, answers, strict=True) if a.error}
        return stored, failed
