"""Reads of the problem bank (no network)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Prefetch, QuerySet
from django.db.models.functions import Length
from django.utils import timezone

from problems.models import Category, CategoryProblem, Problem, Test, Topic
from problems.subjects import Site


def fresh_since(ttl_seconds: int) -> datetime:
    return timezone.now() - timedelta(seconds=ttl_seconds)


def problem_list(*, site: Site | None = None) -> QuerySet[Problem]:
    qs = Problem.objects.all()
    if site is not None:
        qs = qs.filter(subject=site.subject, exam=site.exam)
    return qs


def problems_by_ids(
    *, site: Site, problem_ids: list[str], fresh_after: datetime | None = None
) -> dict[str, Problem]:
    qs = problem_list(site=site).filter(problem_id__in=problem_ids).order_by()  # a dict: no order
    if fresh_after is not None:
        qs = qs.filter(fetched_at__gte=fresh_after)
    return {problem.problem_id: problem for problem in qs}


def problems_holding(*, site: Site, terms: list[str]) -> QuerySet[Problem]:
    """The site's stored problems whose search text holds every term, in id order (a scan:
    for when the site's own search cannot be asked)."""
    qs = problem_list(site=site) if terms else Problem.objects.none()
    for term in terms:
        qs = qs.filter(search_text__contains=term)
    return qs.order_by(Length("problem_id"), "problem_id")


def catalog_topics(*, site: Site, fresh_after: datetime | None = None) -> list[Topic]:
    qs = Topic.objects.filter(subject=site.subject, exam=site.exam)
    if fresh_after is not None:
        qs = qs.filter(fetched_at__gte=fresh_after)
    return list(
        qs.order_by("position").prefetch_related(
            Prefetch("categories", queryset=Category.objects.order_by("position"))
        )
    )


def category_get(*, site: Site, category_id: str) -> Category | None:
    return Category.objects.filter(
        subject=site.subject, exam=site.exam, category_id=category_id
    ).first()


def category_problem_ids(*, category: Category) -> list[str]:
    return list(
        CategoryProblem.objects.filter(category=category)
        .order_by("position")
        .values_list("problem__problem_id", flat=True)
    )


def exam_test_cached(
    *, site: Site, test_id: str, fresh_after: datetime | None = None
) -> Test | None:
    qs = Test.objects.filter(subject=site.subject, exam=site.exam, test_id=test_id)
    if fresh_after is not None:
        qs = qs.filter(fetched_at__gte=fresh_after)
    return qs.first()
