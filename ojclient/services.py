"""The five online-judge operations, shared by the MCP tools and the REST API.

Each one validates its input first (fixed messages, no request on failure), then makes
one request through `ojclient.client`, stores every problem it receives, and — when the
API is unreachable or answers 5xx — serves the stored copy instead, marked with its date.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from ojclient import client
from ojclient.entities import (
    DailyCompact,
    DailyFetching,
    PlatformStatus,
    Problem,
    ResolveResponse,
    SimilarItem,
    SimilarResponse,
    body_parse,
)
from ojclient.exceptions import (
    OjHttpError,
    OjInvalidInput,
    OjNotConfigured,
    OjProblemNotFound,
    OjRequestFailed,
    OjUpstreamError,
)
from ojclient.models import OjDailyChallenge, OjDailyEntry, OjProblem

logger = logging.getLogger(__name__)

DOMAINS = ("com", "cn")
DAILY_DEFAULT_SOURCE = "leetcode"  # the flat (v0.2) daily shape has no `source`
LIMIT_DEFAULT, LIMIT_MIN, LIMIT_MAX = 10, 1, 50
THRESHOLD_DEFAULT = 0.0
QUERY_MIN, QUERY_MAX = 3, 2000
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")  # unpadded too, as the seed's chrono


@dataclass(frozen=True)
class ProblemsResult:
    """Problems to show; `stored_at` is set when they come from the database."""

    problems: list[Problem]
    default_source: str | None = None
    stored_at: datetime | None = None


@dataclass(frozen=True)
class DailyResult:
    date: str
    domain: str
    result: ProblemsResult | None = None
    # The backend is still fetching the day's problem (HTTP 202): not an error.
    fetching: bool = False
    retry_after: int | None = None


@dataclass(frozen=True)
class SimilarResult:
    query: str
    mode: str  # "query" or "problem"
    results: list[SimilarItem] = field(default_factory=list)


# --- validation (rule 1: fixed messages, raised before any request) ----------------------


def date_check(value: str | None) -> str:
    """The date to ask for, zero-padded: `value` if it is a real date written YYYY-MM-DD
    (months and days may be unpadded, `2026-1-1`, as the original's chrono `%Y-%m-%d`
    accepts), else today in UTC."""
    if value is None:
        return datetime.now(UTC).date().isoformat()
    parts = _DATE.fullmatch(value)
    if not parts:
        raise OjInvalidInput("invalid date format, expected YYYY-MM-DD", field="date")
    try:
        return date(*(int(part) for part in parts.groups())).isoformat()
    except ValueError as exc:  # written right, but no day of the calendar
        raise OjInvalidInput(
            f"invalid date {value!r}: {exc} (expected a real day, YYYY-MM-DD)", field="date"
        ) from None


def domain_check(value: str | None) -> str:
    if value is None:
        return "com"
    if value not in DOMAINS:
        raise OjInvalidInput("domain must be 'com' or 'cn'", field="domain")
    return value


SOURCE_MAX = 50  # the stored columns' sizes: a longer value names no problem
ID_MAX = 200
RESOLVE_MAX = 1000  # a URL, a slug or a title
SOURCE_FILTER_MAX = 500


def length_check(value: str, field: str, most: int) -> str:
    """`value` when at most `most` characters; else a refusal naming the field."""
    if len(value) > most:
        raise OjInvalidInput(
            f"{field} must be at most {most} characters (got {len(value):,})", field=field
        )
    return value


def key_check(source: str | None, problem_id: str | None) -> tuple[str, str]:
    source = (source or "").strip()
    problem_id = (problem_id or "").strip()
    if not source or not problem_id:
        raise OjInvalidInput(
            "source and id must be non-empty", field="source" if not source else "id"
        )
    return length_check(source, "source", SOURCE_MAX), length_check(problem_id, "id", ID_MAX)


def limit_check(value: int | None) -> int:
    if value is None:
        return LIMIT_DEFAULT
    if not LIMIT_MIN <= value <= LIMIT_MAX:
        raise OjInvalidInput("limit must be between 1 and 50", field="limit")
    return value


def threshold_check(value: float | None) -> float:
    if value is None:
        return THRESHOLD_DEFAULT
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise OjInvalidInput("threshold must be between 0.0 and 1.0", field="threshold")
    return float(value)


# --- the five operations -----------------------------------------------------------------


def daily_get(*, domain: str | None = None, date: str | None = None) -> DailyResult:
    day = date_check(date)
    domain = domain_check(domain)
    try:
        response = client.daily(domain=domain, date=day)
    except (OjRequestFailed, OjHttpError) as exc:
        stored = _daily_stored(day=day, domain=domain, error=exc)
        return DailyResult(date=day, domain=domain, result=stored)
    if response.status == 202:
        fetching = body_parse(DailyFetching, response.data if response.data else {})
        return DailyResult(date=day, domain=domain, fetching=True, retry_after=fetching.retry_after)
    if isinstance(response.data, dict) and "problems" in response.data:
        compact = body_parse(DailyCompact, response.data)
        default_source = _source_name(compact.source) or DAILY_DEFAULT_SOURCE
        problems = compact.problems
        day = _valid_date(compact.date) or day
    else:
        problems = [body_parse(Problem, response.data)]
        default_source = DAILY_DEFAULT_SOURCE
        if isinstance(response.data, dict):
            day = _valid_date(response.data.get("date")) or day
    _store_daily(day=day, domain=domain, problems=problems, default_source=default_source)
    return DailyResult(
        date=day,
        domain=domain,
        result=ProblemsResult(problems=problems, default_source=default_source),
    )


def problem_get(*, source: str | None, problem_id: str | None) -> ProblemsResult:
    source, problem_id = key_check(source, problem_id)
    try:
        response = client.problem(source=source, problem_id=problem_id)
    except (OjRequestFailed, OjHttpError) as exc:
        row = OjProblem.objects.filter(source=source, problem_id=problem_id).first()
        return _stored_or_raise([row] if row else [], error=exc)
    problem = body_parse(Problem, response.data)
    _store_problems([problem], default_source=source)
    return ProblemsResult(problems=[problem], default_source=source)


def similar_find(
    *,
    query: str | None = None,
    source: str | None = None,
    problem_id: str | None = None,
    limit: int | None = None,
    threshold: float | None = None,
    source_filter: str | None = None,
) -> SimilarResult:
    """Mode B (`query` non-empty after trimming) wins over mode A (`source` + `id`)."""
    limit = limit_check(limit)
    threshold = threshold_check(threshold)
    text = (query or "").strip()
    if text:
        if not QUERY_MIN <= len(text) <= QUERY_MAX:
            raise OjInvalidInput(
                f"query must be between {QUERY_MIN} and {QUERY_MAX} characters", field="query"
            )
        mode, shown = "query", text
    else:
        source = (source or "").strip()
        problem_id = (problem_id or "").strip()
        if not source or not problem_id:
            raise OjInvalidInput(
                "either 'query' or both 'source' and 'id' must be provided", field="query"
            )
        source, problem_id = key_check(source, problem_id)
        mode, shown = "problem", f"{source} {problem_id}"
    length_check(source_filter or "", "source_filter", SOURCE_FILTER_MAX)
    response = client.similar(
        query=text,
        source=source,
        problem_id=problem_id,
        limit=limit,
        threshold=threshold,
        source_filter=(source_filter or "").strip(),
    )
    similar = body_parse(SimilarResponse, response.data)
    rewritten = similar.rewritten_query
    return SimilarResult(
        query=rewritten if rewritten is not None and rewritten.strip() else shown,
        mode=mode,
        results=similar.results,
    )


def problem_resolve(*, query: str | None) -> ProblemsResult:
    text = (query or "").strip()
    if not text:
        raise OjInvalidInput("query must be non-empty", field="query")
    length_check(text, "query", RESOLVE_MAX)
    try:
        response = client.resolve(text=text)
    except (OjRequestFailed, OjHttpError) as exc:
        return _stored_or_raise(_stored_for_query(text), error=exc)
    resolved = body_parse(ResolveResponse, response.data)
    if resolved.problem is None:
        raise OjProblemNotFound("problem not found", extra={"query": text})
    default_source = resolved.problem.source or resolved.source
    _store_problems([resolved.problem], default_source=default_source)
    return ProblemsResult(problems=[resolved.problem], default_source=default_source)


def platform_status_get() -> PlatformStatus:
    if not settings.OJ_API_TOKEN.strip():
        raise OjNotConfigured(
            "Authentication required: a token must be configured to use get_platform_status"
        )
    response = client.status()
    return body_parse(PlatformStatus, response.data)


# --- helpers -----------------------------------------------------------------------------


def _source_name(value: str | None) -> str | None:
    """`leetcode.com` (the v0.3 daily's site) → `leetcode`."""
    if not value:
        return None
    return value.split(".", 1)[0] if value.startswith("leetcode.") else value


def _valid_date(value: object) -> str | None:
    if isinstance(value, str) and _DATE.fullmatch(value):
        try:
            date.fromisoformat(value)
        except ValueError:
            return None
        return value
    return None


def _is_outage(exc: OjUpstreamError) -> bool:
    """Unreachable, timed out or 5xx: worth a stored copy. A 4xx is an answer, not an outage."""
    return isinstance(exc, OjRequestFailed) or (isinstance(exc, OjHttpError) and exc.status >= 500)


def _stored_or_raise(rows: Sequence[OjProblem], *, error: OjUpstreamError) -> ProblemsResult:
    if not rows or not _is_outage(error):
        raise error
    logger.warning(
        "OJ API unavailable (%s); serving %d stored problem(s)", error.message, len(rows)
    )
    return ProblemsResult(
        problems=[_problem_from_row(row) for row in rows],
        default_source=rows[0].source,
        stored_at=min(row.fetched_at for row in rows),
    )


def _daily_stored(*, day: str, domain: str, error: OjUpstreamError) -> ProblemsResult:
    daily = OjDailyChallenge.objects.filter(date=day, domain=domain).first()
    if daily is None or not _is_outage(error):
        raise error
    rows = [entry.problem for entry in daily.entries.select_related("problem")]
    result = _stored_or_raise(rows, error=error)
    return ProblemsResult(
        problems=result.problems, default_source=result.default_source, stored_at=daily.fetched_at
    )


def _stored_for_query(text: str) -> list[OjProblem]:
    """A stored problem that a resolve query names: its link, its slug, or `source:id`."""
    rows = OjProblem.objects.order_by("-fetched_at")
    link = text.rstrip("/")
    for candidates in (
        rows.filter(link__in=[link, f"{link}/"]),
        rows.filter(slug__iexact=text),
    ):
        found = candidates.first()
        if found is not None:
            return [found]
    match = re.fullmatch(r"([A-Za-z][\w.-]*)[:/ ]+(\S+)", text)
    if match:
        found = rows.filter(source__iexact=match[1], problem_id__iexact=match[2]).first()
        if found is not None:
            return [found]
    return []


def _problem_from_row(row: OjProblem) -> Problem:
    return Problem(
        id=row.problem_id,
        source=row.source,
        slug=row.slug or None,
        title=row.title or None,
        title_cn=row.title_cn or None,
        difficulty=row.difficulty or None,
        ac_rate=row.ac_rate,
        tags=list(row.tags),
        link=row.link or None,
        content=row.content or None,
    )


def _store_problems(problems: Sequence[Problem], *, default_source: str | None) -> None:
    """Upsert every problem received; a database failure is logged, never the caller's."""
    try:
        _problems_upsert(problems, default_source=default_source)
    except DatabaseError:
        logger.exception(
            "Could not store %d OJ problem(s); the answer is still served", len(problems)
        )


UPSERT_FIELDS = [
    "slug", "title", "title_cn", "difficulty", "tags", "link", "ac_rate", "content", "raw",
    "fetched_at",
]  # fmt: skip


def _problems_upsert(problems: Sequence[Problem], *, default_source: str | None) -> list[OjProblem]:
    """Store `problems` in one `INSERT … ON CONFLICT DO UPDATE`; their rows (with pks), in order.

    The statement returns the id of each row, inserted or updated (SQLite, PostgreSQL).
    """
    now = timezone.now()
    rows: dict[tuple[str, str], OjProblem] = {}
    for problem in problems:
        source = problem.source or default_source or "unknown"
        rows[(source, problem.id)] = OjProblem(
            source=source,
            problem_id=problem.id,
            slug=problem.slug or "",
            title=problem.title or "",
            title_cn=problem.title_cn or "",
            difficulty=problem.difficulty or "",
            tags=list(problem.tags),
            link=problem.link or "",
            ac_rate=problem.ac_rate,
            content=problem.content or "",
            raw=problem.model_dump(mode="json"),
            fetched_at=now,
        )
    if len(rows) == 1:  # `get_problem`: one statement, not the ORM's compiled bulk insert
        _row_upsert(next(iter(rows.values())))
    else:  # One row per key: ON CONFLICT cannot touch the same row twice in one statement.
        OjProblem.objects.bulk_create(
            list(rows.values()),
            update_conflicts=True,
            unique_fields=["source", "problem_id"],
            update_fields=UPSERT_FIELDS,
        )
    return [rows[(p.source or default_source or "unknown", p.id)] for p in problems]


def _row_upsert(row: OjProblem) -> None:
    """`row` inserted or updated by its key in one statement (SQLite and PostgreSQL share the
    syntax); its pk set from RETURNING. What `bulk_create(update_conflicts=True)` writes,
    without compiling a query (a third of a `get_problem` call's instructions)."""
    json_cast = "::jsonb" if connection.vendor == "postgresql" else ""
    columns = ["source", "problem_id", *UPSERT_FIELDS]
    ops = connection.ops
    values = {
        name: getattr(row, name) for name in columns if name not in ("tags", "raw", "fetched_at")
    }
    values["tags"] = json.dumps(row.tags, ensure_ascii=False)
    values["raw"] = json.dumps(row.raw, ensure_ascii=False)
    values["fetched_at"] = ops.adapt_datetimefield_value(row.fetched_at)
    placeholders = ", ".join(
        f"%s{json_cast}" if name in ("tags", "raw") else "%s" for name in columns
    )
    updates = ", ".join(f"{name} = excluded.{name}" for name in UPSERT_FIELDS)
    sql = (
        f"INSERT INTO {OjProblem._meta.db_table} ({', '.join(columns)}) "  # noqa: S608 (our own names)
        f"VALUES ({placeholders}) ON CONFLICT (source, problem_id) DO UPDATE SET {updates} "
        "RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [values[name] for name in columns])
        row.pk = cursor.fetchone()[0]


def _store_daily(
    *, day: str, domain: str, problems: Sequence[Problem], default_source: str | None
) -> None:
    try:
        with transaction.atomic():
            rows = _problems_upsert(problems, default_source=default_source)
            daily = OjDailyChallenge(date=day, domain=domain, fetched_at=timezone.now())
            OjDailyChallenge.objects.bulk_create(
                [daily],
                update_conflicts=True,
                unique_fields=["date", "domain"],
                update_fields=["fetched_at"],
            )
            OjDailyEntry.objects.filter(daily=daily).delete()
            OjDailyEntry.objects.bulk_create(
                OjDailyEntry(daily=daily, problem=row, position=index)
                for index, row in enumerate(rows)
            )
    except DatabaseError:
        logger.exception("Could not store the daily challenge %s (%s)", day, domain)
