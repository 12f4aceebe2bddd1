"""Reads of the problem bank (no network)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection
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
    """The site's stored problems among `problem_ids` (fetched since `fresh_after`), by id.

    A fixed statement, not a compiled query: a stored `sdamgia_get_problem` spent most of
    its time having the ORM compile this and the categories' query."""
    if not problem_ids:
        return {}
    quote = connection.ops.quote_name
    columns = ", ".join(quote(str(field.column)) for field in Problem._meta.concrete_fields)
    sql = (
        f"SELECT {columns} FROM {Problem._meta.db_table} "  # noqa: S608 (our table)
        "WHERE subject = %s AND exam = %s "
        f"AND problem_id IN ({', '.join(['%s'] * len(problem_ids))})"
    )
    params: list[object] = [site.subject, site.exam, *problem_ids]
    if fresh_after is not None:
        sql += " AND fetched_at >= %s"
        params.append(fresh_after)
    return {problem.problem_id: problem for problem in Problem.objects.raw(sql, params)}


def problem_category_ids(problem: Problem) -> list[str]:
    """The site's ids of the categories listing `problem`, in the catalog's order (as
    `problem.categories.all()`, whose prefetched rows are used when there are any)."""
    prefetched = getattr(problem, "_prefetched_objects_cache", {}).get("categories")
    if prefetched is not None:
        return [category.category_id for category in prefetched]
    sql = (
        f"SELECT c.category_id FROM {Category._meta.db_table} c "  # noqa: S608 (our tables)
        f"JOIN {CategoryProblem._meta.db_table} cp ON cp.category_id = c.id "
        f"LEFT JOIN {Topic._meta.db_table} t ON t.id = c.topic_id "
        "WHERE cp.problem_id = %s ORDER BY c.subject, c.exam, t.position, c.position"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [problem.pk])
        return [row[0] for row in cursor.fetchall()]


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
