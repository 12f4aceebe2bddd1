"""Use cases of the catalog tree, category listings and tests (fetch-through, stored).

`*_get` are strict (a crawl must know the site was not read); `*_read`, for readers,
answer from the stored copy when the site fails (`problems.stored`).
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.exceptions import InvalidInput
from problems import selectors
from problems.client import SdamgiaClient, run_with_client, site_base_url
from problems.entities import CatalogTopic, ParsedProblem, TestPage
from problems.exceptions import ProblemNotFound, SdamgiaBadPage
from problems.models import Category, CategoryProblem, Problem, Test, Topic
from problems.outcomes import CategoryOutcome
from problems.parsing import (
    PageStructureError,
    parse_catalog,
    parse_category_page,
    parse_test_page,
    says_not_found,
)
from problems.services import problem_store
from problems.stored import Answer, Retry, fetch_or_stored
from problems.subjects import Site

LISTING_MAX_PAGES = 200
# The tasks that read a stored copy served stale again, in the background.
CATALOG_REFRESH_TASK = "problems.catalog_refresh"
CATEGORY_REFRESH_TASK = "problems.crawl_category"
TEST_REFRESH_TASK = "problems.test_refresh"
_ID = re.compile(r"^\d{1,20}$", re.ASCII)  # ASCII digits only: «١٢٣» is refused


def _id_check(value: str, field: str) -> str:
    value = str(value).strip()
    if not _ID.match(value):
        raise InvalidInput(f"{field} must be 1–20 digits 0-9, got {value!r}", field=field)
    return value


def catalog_get(*, site: Site, refresh: bool = False) -> list[Topic]:
    """The catalog tree of a site: topics with their categories, in site order."""
    if not refresh:
        fresh_after = selectors.fresh_since(settings.SDAMGIA_TTL_CATALOG)
        topics = selectors.catalog_topics(site=site, fresh_after=fresh_after)
        if topics:
            return topics

    async def fetch(client: SdamgiaClient) -> list[CatalogTopic]:
        page = await client.catalog_page(site)
        try:
            return parse_catalog(page.text, base_url=site_base_url(site))
        except PageStructureError as exc:
            raise SdamgiaBadPage.unreadable(site.label, "catalog page", exc) from None

    parsed = run_with_client(fetch)
    if not parsed:
        raise SdamgiaBadPage(f"the catalog of {site.label}.sdamgia.ru has no topics")
    catalog_store(site=site, topics=parsed)
    return selectors.catalog_topics(site=site)


def catalog_read(*, site: Site, refresh: bool = False) -> Answer[list[Topic]]:
    """`catalog_get` for a reader: when the site fails, the stored catalog of any age,
    marked stale; without one, the site's error."""
    return fetch_or_stored(
        lambda: catalog_get(site=site, refresh=refresh),
        lambda: selectors.catalog_topics(site=site) or None,
        lambda topics: min(topic.fetched_at for topic in topics),
        refresh=refresh,
        retry=Retry(CATALOG_REFRESH_TASK, (site.subject, site.exam)),
    )


@transaction.atomic
def catalog_store(*, site: Site, topics: list[CatalogTopic]) -> None:
    """Replace a site's topics; upsert its categories (their listings are kept)."""
    now = timezone.now()
    Topic.objects.filter(subject=site.subject, exam=site.exam).delete()
    for position, parsed in enumerate(topics):
        topic = Topic.objects.create(
            subject=site.subject,
            exam=site.exam,
            number=parsed.number,
            title=parsed.title,
            count=parsed.count,
            is_additional=parsed.is_additional,
            position=position,
            fetched_at=now,
        )
        for cat_position, category in enumerate(parsed.categories):
            Category.objects.update_or_create(
                subject=site.subject,
                exam=site.exam,
                category_id=category.category_id,
                defaults={
                    "topic": topic,
                    "title": category.title,
                    "count": category.count,
                    "position": cat_position,
                    "fetched_at": now,
                },
            )


def category_problems_get(
    *, site: Site, category_id: str, limit: int = 20, offset: int = 0, refresh: bool = False
) -> CategoryOutcome:
    """Problem ids of a category, following its listing pages up to data-total.

    Listing pages carry whole problems: each is stored, so reading them later is local.
    """
    category_id = _id_check(category_id, "category_id")
    category = selectors.category_get(site=site, category_id=category_id)
    fresh_after = selectors.fresh_since(settings.SDAMGIA_TTL_CATEGORY)
    listed = category is not None and category.listing_fetched_at is not None
    if not refresh and listed and category.listing_fetched_at >= fresh_after:  # type: ignore[union-attr,operator]
        ids = selectors.category_problem_ids(category=category)  # type: ignore[arg-type]
        return CategoryOutcome(category, ids[offset : offset + limit], len(ids), True)  # type: ignore[arg-type]
    parsed, pages = run_with_client(lambda client: _read_listing(client, site, category_id))
    if not parsed:
        raise ProblemNotFound(
            f"category {category_id} of {site.label}.sdamgia.ru lists no problems "
            "(unknown category, or an empty one)",
            extra={"category_id": category_id},
        )
    category = listing_store(site=site, category_id=category_id, problems=parsed, pages=pages)
    ids = [p.problem_id for p in parsed]
    return CategoryOutcome(category, ids[offset : offset + limit], len(ids), True)


def category_problems_read(
    *, site: Site, category_id: str, limit: int = 20, offset: int = 0, refresh: bool = False
) -> Answer[CategoryOutcome]:
    """`category_problems_get` for a reader: when the site fails, the stored listing of
    any age, marked stale; without one, the site's error."""
    category_id = _id_check(category_id, "category_id")

    def stored() -> CategoryOutcome | None:
        category = selectors.category_get(site=site, category_id=category_id)
        if category is None or category.listing_fetched_at is None:
            return None
        ids = selectors.category_problem_ids(category=category)
        return CategoryOutcome(category, ids[offset : offset + limit], len(ids), True)

    return fetch_or_stored(
        lambda: category_problems_get(
            site=site, category_id=category_id, limit=limit, offset=offset, refresh=refresh
        ),
        stored,
        lambda outcome: outcome.category.listing_fetched_at,
        refresh=refresh,
        retry=Retry(CATEGORY_REFRESH_TASK, (site.subject, site.exam, category_id, True)),
    )


async def _read_listing(
    client: SdamgiaClient, site: Site, category_id: str
) -> tuple[list[ParsedProblem], int]:
    problems: list[ParsedProblem] = []
    seen: set[str] = set()
    page_no = 0
    total = 1
    while page_no < min(total, LISTING_MAX_PAGES):
        page_no += 1
        page = await client.category_page(site, category_id, page_no)
        try:
            listing = parse_category_page(page.text, base_url=site_base_url(site))
        except PageStructureError as exc:
            where = f"page {page_no} of category {category_id}"
            raise SdamgiaBadPage.unreadable(site.label, where, exc) from None
        total = listing.total_pages or page_no
        new = [p for p in listing.problems if p.problem_id and p.problem_id not in seen]
        if not new:  # the site repeats its last page forever
            break
        problems.extend(new)
        seen.update(p.problem_id for p in new)
    return problems, page_no


@transaction.atomic
def listing_store(
    *, site: Site, category_id: str, problems: list[ParsedProblem], pages: int
) -> Category:
    """Store a whole category listing: its problems and their order."""
    now = timezone.now()
    category, _ = Category.objects.get_or_create(
        subject=site.subject,
        exam=site.exam,
        category_id=category_id,
        defaults={"fetched_at": now},
    )
    CategoryProblem.objects.filter(category=category).delete()
    for position, parsed in enumerate(problems):
        problem = problem_store(site=site, parsed=parsed, fetched_at=now)
        CategoryProblem.objects.create(category=category, problem=problem, position=position)
    category.listing_fetched_at = now
    category.listing_pages = pages
    category.save(update_fields=["listing_fetched_at", "listing_pages"])
    return category


@transaction.atomic
def listing_order_store(
    *, site: Site, category_id: str, problem_ids: list[str], pages: int
) -> Category:
    """A listing whose problems are already stored (page by page, by a crawl): its order."""
    now = timezone.now()
    category, _ = Category.objects.get_or_create(
        subject=site.subject,
        exam=site.exam,
        category_id=category_id,
        defaults={"fetched_at": now},
    )
    stored = {
        problem.problem_id: problem
        for problem in Problem.objects.filter(
            subject=site.subject, exam=site.exam, problem_id__in=problem_ids
        )
    }
    CategoryProblem.objects.filter(category=category).delete()
    CategoryProblem.objects.bulk_create(
        CategoryProblem(category=category, problem=stored[pid], position=position)
        for position, pid in enumerate(problem_ids)
        if pid in stored
    )
    category.listing_fetched_at = now
    category.listing_pages = pages
    category.save(update_fields=["listing_fetched_at", "listing_pages"])
    return category


def category_is_fresh(*, site: Site, category_id: str) -> bool:
    """Whether the category's listing was read within its TTL."""
    category = selectors.category_get(site=site, category_id=category_id)
    fresh_after = selectors.fresh_since(settings.SDAMGIA_TTL_CATEGORY)
    return bool(
        category and category.listing_fetched_at and category.listing_fetched_at >= fresh_after
    )


def exam_test_get(*, site: Site, test_id: str, refresh: bool = False) -> Test:
    """A test's problem ids in order, or the fact that its author hid them."""
    test_id = _id_check(test_id, "test_id")
    if not refresh:
        fresh_after = selectors.fresh_since(settings.SDAMGIA_TTL_TEST)
        cached = selectors.exam_test_cached(site=site, test_id=test_id, fresh_after=fresh_after)
        if cached is not None:
            return cached

    async def fetch(client: SdamgiaClient) -> TestPage:
        page = await client.test_page(site, test_id)
        try:
            return parse_test_page(page.text, base_url=site_base_url(site))
        except PageStructureError as exc:
            if says_not_found(page.text) or "prob_list" in page.text:  # the site's own "none"
                raise ProblemNotFound(
                    f"test {test_id} was not found on {site.label}.sdamgia.ru",
                    extra={"test_id": test_id},
                ) from None
            raise SdamgiaBadPage.unreadable(site.label, f"page of test {test_id}", exc) from None

    parsed = run_with_client(fetch)
    if not parsed.ids and not parsed.ids_hidden and not parsed.problem_count:
        raise ProblemNotFound(f"test {test_id} was not found on {site.label}.sdamgia.ru")
    return exam_test_store(site=site, test_id=test_id, parsed=parsed)


def exam_test_read(*, site: Site, test_id: str, refresh: bool = False) -> Answer[Test]:
    """`exam_test_get` for a reader: when the site fails, the stored test of any age,
    marked stale; without one, the site's error."""
    test_id = _id_check(test_id, "test_id")
    return fetch_or_stored(
        lambda: exam_test_get(site=site, test_id=test_id, refresh=refresh),
        lambda: selectors.exam_test_cached(site=site, test_id=test_id),
        lambda test: test.fetched_at,
        refresh=refresh,
        retry=Retry(TEST_REFRESH_TASK, (site.subject, site.exam, test_id)),
    )


@transaction.atomic
def exam_test_store(*, site: Site, test_id: str, parsed: TestPage) -> Test:
    now = timezone.now()
    for problem in parsed.problems:
        if problem.problem_id:
            problem_store(site=site, parsed=problem, fetched_at=now)
    test, _ = Test.objects.update_or_create(
        subject=site.subject,
        exam=site.exam,
        test_id=test_id,
        defaults={
            "title": parsed.title[:500],
            "problem_ids": parsed.ids,
            "ids_hidden": parsed.ids_hidden,
            "problem_count": parsed.problem_count or len(parsed.ids),
            "fetched_at": now,
        },
    )
    return test
