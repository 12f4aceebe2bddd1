"""Use cases of the problem bank: fetch-through reads of problems and searches.

What was fetched once is served from the database until its TTL expires (`refresh=True`
fetches anyway). Every problem a page carries is stored, so later reads are local. When
the site fails, readers get the stored copy of any age, marked stale (`problems.stored`).
Catalog, category and test use cases live in `problems.catalog`; fuzzy search in
`problems.fuzzy`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from core.exceptions import DomainError, InvalidInput, NotFound
from problems import answers, selectors
from problems.client import (
    SdamgiaClient,
    first_attempt_only,
    gather_settled,
    problem_page_url,
    run_with_client,
    site_base_url,
)
from problems.entities import ParsedProblem
from problems.exceptions import ProblemNotFound, SdamgiaBadPage, SdamgiaUnavailable
from problems.formulas import formula_stand_in as formula_stand_in  # re-exported for Anki
from problems.formulas import is_formula_src as is_formula_src
from problems.formulas import plain_formula as plain_formula
from problems.matching import index_terms, keyword_terms, matching_form
from problems.models import Problem, Variant
from problems.outcomes import BatchItem, Progress, SearchOutcome
from problems.parsing import (
    PageStructureError,
    parse_problem_page,
    parse_search_page,
    says_not_found,
)
from problems.schemas import AnswerChecked
from problems.stored import Answer, Retry, Staleness, fetch_or_stored, stored_refresh_later
from problems.subjects import Site
from problems.subjects import site_resolve as site_resolve  # re-exported for other apps

BATCH_MAX = 50
BATCH_CONCURRENCY = 10
SEARCH_MAX_PAGES = 20
SEARCH_CACHE_SECONDS = 6 * 3600
REFRESH_TASK = "problems.problems_refresh"  # stored copies served stale, fetched again
_DIGITS = re.compile(r"^\d{1,20}$", re.ASCII)  # ids are ASCII digits: «١٢٣» is refused


def problem_id_check(problem_id: str, *, field: str = "problem_id") -> str:
    """A problem id is 1–20 digits; InvalidInput naming `field` otherwise."""
    value = str(problem_id).strip()
    if not _DIGITS.match(value):
        raise InvalidInput(f"{field} must be 1–20 digits 0-9, got {problem_id!r}", field=field)
    return value


def problem_store(
    *, site: Site, parsed: ParsedProblem, fetched_at: datetime | None = None
) -> Problem:
    """Insert or update one problem from a parsed page in one statement; returns the row."""
    (problem,) = _problems_upsert(site=site, parsed=[parsed], fetched_at=fetched_at)
    return problem


def problems_store(*, site: Site, parsed: Sequence[ParsedProblem]) -> list[Problem]:
    """Store every whole problem of a page in one statement; the rows, in page order.

    Blocks without a condition (a page showing only numbers) are not problems to keep.
    """
    whole = [p for p in parsed if p.problem_id and p.condition_text]
    return _problems_upsert(site=site, parsed=whole) if whole else []


PROBLEM_UPDATE_FIELDS = [
    "type_number", "condition_text", "condition_html", "figures", "formulas", "source_text",
    "source_html", "solution_text", "solution_html", "solution_figures", "solution_kind",
    "answer", "answers", "analogs", "codifier", "internal_id", "search_text", "search_terms",
    "fetched_at",
]  # fmt: skip


def _problems_upsert(
    *, site: Site, parsed: Sequence[ParsedProblem], fetched_at: datetime | None = None
) -> list[Problem]:
    """One `INSERT … ON CONFLICT DO UPDATE` for `parsed`; a repeated id: the last one wins."""
    now = fetched_at or timezone.now()
    rows = {p.problem_id: _problem_row(site=site, parsed=p, fetched_at=now) for p in parsed}
    # One row per key: ON CONFLICT cannot touch the same row twice in one statement.
    Problem.objects.bulk_create(
        list(rows.values()),
        update_conflicts=True,
        unique_fields=["subject", "exam", "problem_id"],
        update_fields=PROBLEM_UPDATE_FIELDS,
    )
    return [rows[p.problem_id] for p in parsed]


def _problem_row(*, site: Site, parsed: ParsedProblem, fetched_at: datetime) -> Problem:
    text = " ".join(part for part in (parsed.source_text, parsed.condition_text) if part)
    search_text = matching_form(text)
    return Problem(
        subject=site.subject,
        exam=site.exam,
        problem_id=parsed.problem_id,
        type_number=parsed.type_number,
        condition_text=parsed.condition_text,
        condition_html=parsed.condition_html,
        figures=parsed.figures,
        formulas=parsed.formulas,
        source_text=parsed.source_text,
        source_html=parsed.source_html,
        solution_text=parsed.solution_text,
        solution_html=parsed.solution_html,
        solution_figures=parsed.solution_figures,
        solution_kind=parsed.solution_kind,
        answer=parsed.answer[:500],
        answers=parsed.answers,
        analogs=parsed.analogs,
        codifier=[{"code": c.code, "title": c.title} for c in parsed.codifier],
        internal_id=parsed.internal_id,
        search_text=search_text,
        search_terms=index_terms(search_text),
        fetched_at=fetched_at,
    )


async def problem_fetch(client: SdamgiaClient, site: Site, problem_id: str) -> ParsedProblem:
    """The parsed /problem page; ProblemNotFound when the page holds no such problem."""
    page = await client.problem_page(site, problem_id)
    where = f"{site.label}.sdamgia.ru"
    try:
        parsed = parse_problem_page(page.text, base_url=site_base_url(site))
    except PageStructureError:
        parsed = None
    if parsed is None or not parsed.problem_id:
        raise _no_problem_error(page.text, problem_id, where, site)
    if parsed.problem_id != problem_id:
        raise ProblemNotFound(
            f"problem {problem_id} was not found on {where} "
            f"(the page shows problem {parsed.problem_id} instead)"
        )
    if not parsed.condition_text:
        raise SdamgiaBadPage(
            f"the page of problem {problem_id} on {where} has no condition "
            "(a truncated or changed page); nothing was stored"
        )
    return parsed


def _no_problem_error(text: str, problem_id: str, where: str, site: Site) -> DomainError:
    """Why a /problem page holds no problem. Only a page saying so means "not found"; a
    maintenance, error or garbage page is the site failing (a stored copy may answer)."""
    if "prob_maindiv" in text:
        return SdamgiaBadPage(
            f"the page of problem {problem_id} on {where} is truncated or changed; "
            "nothing was stored"
        )
    if "<html" not in text[:4000].lower():
        return SdamgiaBadPage(
            f"СДАМ ГИА answered something that is not a web page for problem {problem_id}"
        )
    if says_not_found(text):
        return ProblemNotFound(
            f"problem {problem_id} was not found on {where}",
            extra={"problem_id": problem_id, "site": site.label},
        )
    return SdamgiaBadPage(
        f"СДАМ ГИА ({where}) answered with a page that is not a problem page for problem "
        f"{problem_id} (a maintenance or error page?); nothing was stored",
        extra={"problem_id": problem_id, "site": site.label},
    )


def problem_get(*, site: Site, problem_id: str, refresh: bool = False) -> Problem:
    """One problem, from the database while fresh, else from the site (and stored).

    Strict: the site failing is an error. Readers use `problem_read`."""
    problem_id = problem_id_check(problem_id)
    if not refresh:
        fresh_after = selectors.fresh_since(settings.SDAMGIA_TTL_PROBLEM)
        cached = selectors.problems_by_ids(
            site=site, problem_ids=[problem_id], fresh_after=fresh_after
        )
        if problem_id in cached:
            return cached[problem_id]
    parsed = run_with_client(lambda client: problem_fetch(client, site, problem_id))
    return problem_store(site=site, parsed=parsed)


def problem_read(*, site: Site, problem_id: str, refresh: bool = False) -> Answer[Problem]:
    """`problem_get` for a reader: when the site fails, the stored copy of any age, marked
    stale (`problems.stored`); without one, the site's error."""
    problem_id = problem_id_check(problem_id)
    return fetch_or_stored(
        lambda: problem_get(site=site, problem_id=problem_id, refresh=refresh),
        lambda: selectors.problems_by_ids(site=site, problem_ids=[problem_id]).get(problem_id),
        lambda problem: problem.fetched_at,
        refresh=refresh,
        retry=Retry(REFRESH_TASK, (site.subject, site.exam, [problem_id])),
    )


def problems_fetch_missing(
    *, site: Site, problem_ids: Sequence[str], progress: Progress | None = None
) -> dict[str, DomainError | None]:
    """Fetch and store `problem_ids` with at most BATCH_CONCURRENCY requests at once.

    Returns, per id, None when stored or the DomainError that stopped it; one failure
    never stops the others.
    """
    ids = list(dict.fromkeys(problem_ids))
    done = 0

    async def fetch_all(client: SdamgiaClient) -> list[ParsedProblem | BaseException]:
        limit = asyncio.Semaphore(BATCH_CONCURRENCY)

        async def one(problem_id: str) -> ParsedProblem:
            nonlocal done
            async with limit:
                try:
                    return await problem_fetch(client, site, problem_id)
                finally:
                    done += 1
                    if progress is not None:
                        progress(done, len(ids))

        return await gather_settled([one(problem_id) for problem_id in ids])

    outcomes = run_with_client(fetch_all) if ids else []
    results: dict[str, DomainError | None] = {}
    for problem_id, outcome in zip(ids, outcomes, strict=True):
        if isinstance(outcome, ParsedProblem):
            problem_store(site=site, parsed=outcome)
            results[problem_id] = None
        elif isinstance(outcome, DomainError):
            results[problem_id] = outcome
        else:
            results[problem_id] = SdamgiaBadPage(f"problem {problem_id}: unexpected failure")
    return results


def problems_get_many(
    *,
    site: Site,
    problem_ids: Sequence[str],
    refresh: bool = False,
    progress: Progress | None = None,
) -> list[BatchItem]:
    """Up to 50 problems in request order, each with its problem or its own error.

    An id the site fails on (`SdamgiaUnavailable`) is answered by its stored copy of any
    age, marked stale, and fetched again in the background; a site's "not found" stays an
    error. When every id asked of the site has a copy, the site gets one attempt's time.
    """
    if not problem_ids:
        raise InvalidInput("problem_ids must hold at least one id", field="problem_ids")
    if len(problem_ids) > BATCH_MAX:
        raise InvalidInput(
            f"problem_ids holds {len(problem_ids)} ids; at most {BATCH_MAX} per call",
            field="problem_ids",
        )
    ids = [problem_id_check(pid, field=f"problem_ids[{i}]") for i, pid in enumerate(problem_ids)]
    fresh_after = None if refresh else selectors.fresh_since(settings.SDAMGIA_TTL_PROBLEM)
    cached = (
        {}
        if refresh
        else selectors.problems_by_ids(site=site, problem_ids=ids, fresh_after=fresh_after)
    )
    missing = [pid for pid in dict.fromkeys(ids) if pid not in cached]
    with first_attempt_only(lambda: _copies_of_all(site, missing)):
        errors = problems_fetch_missing(site=site, problem_ids=missing, progress=progress)
    stored = selectors.problems_by_ids(site=site, problem_ids=missing) if missing else {}
    items = [
        _batch_item(pid, cached.get(pid) or stored.get(pid), errors.get(pid), refresh)
        for pid in ids
    ]
    stale = list(dict.fromkeys(item.problem_id for item in items if item.stale))
    if stale:
        stored_refresh_later(Retry(REFRESH_TASK, (site.subject, site.exam, stale)))
    return items


def _copies_of_all(site: Site, problem_ids: list[str]) -> bool:
    """Whether each of `problem_ids` has a stored copy (of any age)."""
    return len(selectors.problems_by_ids(site=site, problem_ids=problem_ids)) == len(problem_ids)


def _batch_item(
    problem_id: str, problem: Problem | None, error: DomainError | None, refresh: bool
) -> BatchItem:
    if error is None:
        return BatchItem(problem_id, problem=problem)
    if problem is not None and isinstance(error, SdamgiaUnavailable):
        stale = Staleness(problem.fetched_at, error.message, refresh, retrying=True)
        return BatchItem(problem_id, problem=problem, stale=stale)
    return BatchItem(problem_id, error=error.message, error_code=error.code)


def problems_search(
    *, site: Site, query: str, limit: int = 20, offset: int = 0, refresh: bool = False
) -> SearchOutcome:
    """Keyword search on the site, following pages until offset+limit ids or the end.

    The site repeats its last page forever, so a page that brings no new id ends the
    search. Every problem on the pages read is stored. When the site fails, the stored
    problems holding every keyword answer (`offline`, stale); with none stored, the
    site's error.
    """
    query = " ".join(query.split())
    if not 3 <= len(query) <= 500:
        raise InvalidInput("query must be 3–500 characters", field="query")
    # hashed: a key with spaces or Cyrillic is not portable across cache backends
    key = f"sdamgia:search:{site.label}:{hashlib.sha256(query.lower().encode()).hexdigest()}"
    state = None if refresh else cache.get(key)
    ids: list[str] = state["ids"] if state else []
    exhausted: bool = state["exhausted"] if state else False
    pages_read: int = state["pages"] if state else 0
    wanted = offset + limit
    if len(ids) < wanted and not exhausted:
        try:
            with first_attempt_only(selectors.problem_list(site=site).exists):
                ids, exhausted, pages_read = _search_pages(site, query, ids, pages_read, wanted)
        except SdamgiaUnavailable as exc:
            if not selectors.problem_list(site=site).exists():
                raise
            failure = Staleness(None, exc.message, refresh)
            return _search_stored(site, query, offset, wanted, failure)
        cache.set(
            key, {"ids": ids, "exhausted": exhausted, "pages": pages_read}, SEARCH_CACHE_SECONDS
        )
    return SearchOutcome(
        query=query,
        ids=ids[offset:wanted],
        all_ids=ids,
        total_found=len(ids),
        exhausted=exhausted,
        pages_read=pages_read,
    )


def _search_stored(
    site: Site, query: str, offset: int, wanted: int, failure: Staleness
) -> SearchOutcome:
    """The stored problems holding every keyword of `query` (stems: another ending still
    matches), in id order; `fetched_at` of the failure: the oldest copy shown."""
    found = selectors.problems_holding(site=site, terms=keyword_terms(query))
    rows = list(found.values_list("problem_id", "fetched_at")[:wanted])
    window = rows[offset:]
    total = found.count() if len(rows) == wanted else len(rows)
    oldest = min((fetched_at for _, fetched_at in window), default=None)
    return SearchOutcome(
        query=query,
        ids=[pid for pid, _ in window],
        all_ids=[pid for pid, _ in rows],
        total_found=total,
        exhausted=total <= wanted,
        offline=True,
        stale=replace(failure, fetched_at=oldest),
    )


def _search_pages(
    site: Site, query: str, ids: list[str], pages_read: int, wanted: int
) -> tuple[list[str], bool, int]:
    async def read(client: SdamgiaClient) -> tuple[list[ParsedProblem], list[str], bool, int]:
        seen = list(ids)
        problems: list[ParsedProblem] = []
        page_no = pages_read
        exhausted = False
        while len(seen) < wanted:
            if page_no >= SEARCH_MAX_PAGES:
                exhausted = True
                break
            page_no += 1
            page = await client.search_page(site, query, page_no)
            try:
                listing = parse_search_page(page.text, base_url=site_base_url(site))
            except PageStructureError as exc:
                where = f"search page {page_no} for {query!r}"
                raise SdamgiaBadPage.unreadable(site.label, where, exc) from None
            new = [p for p in listing.problems if p.problem_id and p.problem_id not in seen]
            if not new:
                exhausted = True
                break
            problems.extend(new)
            seen.extend(dict.fromkeys(p.problem_id for p in new))
        return problems, seen, exhausted, page_no

    problems, seen, exhausted, page_no = run_with_client(read)
    problems_store(site=site, parsed=problems)
    return seen, exhausted, page_no


# --- For other apps (they use this app only through its services) ----------------------


def problem_source_url(*, problem: Problem) -> str:
    """The address of `problem` on its site, for a link back to the source."""
    return problem_page_url(Site(subject=problem.subject, exam=problem.exam), problem.problem_id)


def answer_check(*, site: Site, problem_id: str, answer: str, reveal: bool) -> AnswerChecked:
    """`sdamgia_check_answer`: whether `answer` is right for the problem, as the site would
    judge it (`problems.answers`); the right answer only when `reveal`."""
    if not answer.strip():
        raise InvalidInput("answer must not be empty", field="answer")
    read = problem_read(site=site, problem_id=problem_id)
    problem = read.value
    if not problem.answer.strip():
        raise InvalidInput(
            f"problem_id: problem {problem.problem_id} has no short answer on the site (a task "
            "with a detailed solution): it cannot be checked automatically",
            field="problem_id",
        )
    right = answers.answer_correct(answer, problem.answer, condition=problem.condition_text)
    return AnswerChecked(
        problem_id=problem.problem_id,
        verdict="correct" if right else "incorrect",
        answer=problem.answer if reveal else None,
        stale=True if read.stale else None,
        warnings=[read.stale.warning()] if read.stale else None,
    )


def variant_problems_list(*, user_id: int, public_id: str) -> tuple[Variant, list[Problem]]:
    """A variant of `user_id`'s and its stored problems in its order, for other apps (an
    Anki package of a variant): NotFound when it is not theirs, InvalidInput naming
    `variant` when one of its problems is no longer stored."""
    variant = Variant.objects.filter(public_id=public_id, owner_id=user_id).first()
    if variant is None:
        raise NotFound(f"variant: you have no variant {public_id!r}")
    stored = {
        p.problem_id: p
        for p in Problem.objects.filter(
            subject=variant.subject, exam=variant.exam, problem_id__in=variant.problem_ids
        )
    }
    missing = [pid for pid in variant.problem_ids if pid not in stored]
    if missing:
        raise InvalidInput(
            f"variant: problems {', '.join(missing)} of {public_id!r} are no longer stored",
            field="variant",
        )
    return variant, [stored[pid] for pid in variant.problem_ids]
