"""`manage.py sdamgia_crawl`: catalog → every category listing → the database."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from core import background
from core.exceptions import DomainError
from problems import catalog, selectors
from problems.crawl import Crawl
from problems.models import Category
from problems.subjects import EXAMS, Site, site_resolve, sites_all

CRAWL_TASK = "problems.crawl_category"
CRAWL_WORK_TASK = "problems.crawl_work"
PROGRESS_POLL_SECONDS = 0.5


class Command(BaseCommand):
    help = (
        "Crawl СДАМ ГИА sites into the database: the catalog, then every category listing "
        "(whole problems). --all: every site of both exams (30), one after another; a site "
        "that cannot be read is reported and the crawl goes on. Resumable: categories read "
        "within their TTL are skipped, so a crawl stopped midway continues where it was. "
        "Runs on Celery workers when REDIS_URL is set, in-process otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--subject", help="Subject code or alias, e.g. math.")
        parser.add_argument("--exam", default="ege", help="ege (default), oge or both.")
        parser.add_argument("--all", action="store_true", help="Every site of both exams.")
        parser.add_argument("--category", help="Only this category id (one site).")
        parser.add_argument("--dry-run", action="store_true", help="Show what would be fetched.")
        parser.add_argument("--refresh", action="store_true", help="Fetch fresh items too.")

    def handle(self, *args: Any, **options: Any) -> None:
        sites = self._sites(options)
        if options["category"] and len(sites) > 1:
            raise CommandError("--category needs one site: give --subject and one --exam")
        totals = {"problems": 0, "categories": 0, "failed": 0, "sites_failed": 0}
        for number, site in enumerate(sites, start=1):
            if len(sites) > 1:
                self.stderr.write(f"[{number}/{len(sites)}] {site.label}.sdamgia.ru")
            try:
                stored, read, failed = self._crawl_site(site, options)
            except CommandError as exc:
                if len(sites) == 1:
                    raise
                self.stderr.write(f"{site.label}: skipped: {exc}")
                totals["sites_failed"] += 1
                continue
            totals["problems"] += stored
            totals["categories"] += read
            totals["failed"] += failed
        if len(sites) > 1 and not options["dry_run"]:
            self.stdout.write(
                f"all sites: {totals['problems']} problems in {totals['categories']} "
                f"categories; {totals['failed']} categories failed; "
                f"{totals['sites_failed']} of {len(sites)} sites could not be read"
            )

    def _sites(self, options: dict[str, Any]) -> list[Site]:
        if options["all"]:
            if options["subject"]:
                raise CommandError("give --subject or --all, not both")
            return sites_all()
        if not options["subject"]:
            raise CommandError("give --subject (e.g. --subject math) or --all for every site")
        exams = list(EXAMS) if options["exam"] == "both" else [options["exam"]]
        try:
            return [site_resolve(subject=options["subject"], exam=exam) for exam in exams]
        except DomainError as exc:
            raise CommandError(exc.message) from exc

    def _crawl_site(self, site: Site, options: dict[str, Any]) -> tuple[int, int, int]:
        """Problems stored, categories read, categories failed, for one site."""
        try:
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
                self.stdout.write(
                    f"{site.label}: would read category {category.category_id}: {category.title}"
                )
            return 0, 0, 0
        ids = [c.category_id for c in todo]
        if background.broker_available() and background.workers_available():
            stored, failed = self._crawl_shared(site, ids, options["refresh"])
        else:
            stored, failed = self._crawl(site.subject, site.exam, ids, options["refresh"])
        self.stdout.write(
            f"{site.label}: done: {stored} problems in {len(todo) - len(failed)} categories; "
            f"{len(failed)} failed"
        )
        for category_id, message in failed.items():
            self.stderr.write(f"{site.label}: category {category_id}: {message}")
        return stored, len(todo) - len(failed), len(failed)

    def _crawl_shared(
        self, site: Site, ids: list[str], refresh: bool
    ) -> tuple[int, dict[str, str]]:
        """Workers share the categories through Redis (`problems.crawl`); one bar shows
        what all of them have done. Loops are started again while the crawl stands still
        longer than a lease: the workers that ran them may all have died."""
        if not ids:
            return 0, {}
        shared = Crawl.start(site, ids, refresh=refresh)
        loops = settings.SDAMGIA_CRAWL_WORKERS
        bar = tqdm(total=len(ids), unit="category", desc=site.label, file=self.stderr._out)
        with bar:
            for _ in range(loops):
                background.start(CRAWL_WORK_TASK, shared.id)
            moved_at, done = time.monotonic(), 0
            while not (state := shared.state()).finished:
                if state.done != done:
                    moved_at, done = time.monotonic(), state.done
                    bar.update(done - bar.n)
                elif time.monotonic() - moved_at > settings.SDAMGIA_CRAWL_LEASE + 10:
                    self.stderr.write(f"{site.label}: no progress; starting the loops again")
                    for _ in range(loops):
                        background.start(CRAWL_WORK_TASK, shared.id)
                    moved_at = time.monotonic()
                time.sleep(PROGRESS_POLL_SECONDS)
            bar.update(state.done - bar.n)
        return state.problems, state.failed

    def _crawl(
        self, subject: str, exam: str, ids: list[str], refresh: bool
    ) -> tuple[int, dict[str, str]]:
        """One task per category: on the workers when one answers, else here in turn."""
        bar = tqdm(total=len(ids), unit="category", desc=f"{subject}-{exam}", file=self.stderr._out)
        with bar:
            answers = background.gather(
                CRAWL_TASK,
                [(subject, exam, cid, refresh) for cid in ids],
                timeout=None,
                progress=lambda done, _: bar.update(done - bar.n),
            )
        stored = sum(int(answer.value) for answer in answers if not answer.error)
        failed = {cid: a.error for cid, a in zip(ids, answers, strict=True) if a.error}
        return stored, failed
