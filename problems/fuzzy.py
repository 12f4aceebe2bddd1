"""`problems_search_fuzzy`: find problems by a (possibly OCR-damaged) condition text.

Candidates: the site's search with 1–3 distinctive phrases of the text (the union of the
first pages), plus every problem of the site already in the database. Candidates not yet
stored are fetched — in chunks by the Celery workers when one answers, else here with
bounded concurrency (`core.background.gather`) — and stored, so the next search is local.
Scoring is `problems.matching`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import Count, Max

from core import background
from core.exceptions import DomainError, InvalidInput, UpstreamError
from problems.client import SdamgiaClient, gather_settled, run_with_client, site_base_url
from problems.entities import ListingPage
from problems.exceptions import SdamgiaBadPage
from problems.matching import Candidate, Query, distinctive_phrases, rank
from problems.models import Problem
from problems.parsing import PageStructureError, parse_search_page
from problems.services import Progress, problems_store
from problems.subjects import Site

logger = logging.getLogger(__name__)

FETCH_TASK = "problems.fetch_chunk"
CHUNK_SIZE = 5  # problems per task when workers share the fetching
FANOUT_TIMEOUT = 120.0  # seconds to wait for the workers; later chunks count as failed


@dataclass
class FuzzyMatch:
    problem: Problem
    score: float

    @property
    def snippet(self) -> str:
        text = self.problem.condition_text
        return text if len(text) <= 180 else text[:177].rstrip() + "…"


@dataclass
class FuzzyOutcome:
    matches: list[FuzzyMatch] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    site_candidates: int = 0
    fetched: int = 0
    fetch_errors: dict[str, str] = field(default_factory=dict)
    local_candidates: int = 0
    warnings: list[str] = field(default_factory=list)
    offline: bool = False  # the site could not be asked: the matches are the stored corpus's


def problems_search_fuzzy(
    *,
    site: Site,
    condition_text: str,
    threshold: float = 0.6,
    limit: int = 20,
    progress: Progress | None = None,
) -> FuzzyOutcome:
    """Problems whose condition matches `condition_text`, best first, with scores 0..1."""
    text = condition_text.strip()
    if not 10 <= len(text) <= 1000:
        raise InvalidInput("condition_text must be 10–1000 characters", field="condition_text")
    if not 0 <= threshold <= 1:
        raise InvalidInput("threshold must be between 0 and 1", field="threshold")
    if not 1 <= limit <= 50:
        raise InvalidInput("limit must be between 1 and 50", field="limit")
    outcome = FuzzyOutcome(phrases=distinctive_phrases(text))
    site_ids = _site_candidates(site, outcome)
    stored = set(
        Problem.objects.filter(subject=site.subject, exam=site.exam, problem_id__in=site_ids)
        .exclude(search_text="")
        .values_list("problem_id", flat=True)
    )
    missing = [pid for pid in site_ids if pid not in stored]
    if missing:
        outcome.fetch_errors = _fetch_missing(site, missing, progress)
        outcome.fetched = len(missing) - len(outcome.fetch_errors)
    candidates = site_index(site)
    outcome.local_candidates = len(candidates)
    ranked = rank(Query.from_text(text), candidates, threshold=threshold, limit=limit)
    rows = Problem.objects.in_bulk([c.key for c, _ in ranked])
    outcome.matches = [FuzzyMatch(rows[c.key], s) for c, s in ranked if c.key in rows]
    return outcome


def _fetch_missing(site: Site, ids: Sequence[str], progress: Progress | None) -> dict[str, str]:
    """Fetch and store `ids` (on the workers or here); per id that failed, why."""
    chunks = background.chunks(list(dict.fromkeys(ids)), CHUNK_SIZE)
    answers = background.gather(
        FETCH_TASK,
        [(site.subject, site.exam, chunk) for chunk in chunks],
        sizes=[len(chunk) for chunk in chunks],
        timeout=FANOUT_TIMEOUT,
        progress=progress,
    )
    errors: dict[str, str] = {}
    for chunk, answer in zip(chunks, answers, strict=True):
        if answer.error:
            errors.update({pid: f"problem {pid}: {answer.error}" for pid in chunk})
        else:
            errors.update({pid: message for pid, message in answer.value.items() if message})
    return errors


def _site_candidates(site: Site, outcome: FuzzyOutcome) -> list[str]:
    """The union of the first result page of each phrase, searched concurrently.

    Whole problems on those pages are stored; the site failing is a warning, not an error.
    """
    phrases = [phrase[:500] for phrase in outcome.phrases if len(phrase) >= 3]

    async def search_all(client: SdamgiaClient) -> list[ListingPage | BaseException]:
        async def first_page(phrase: str) -> ListingPage:
            page = await client.search_page(site, phrase, 1)
            try:
                return parse_search_page(page.text, base_url=site_base_url(site))
            except PageStructureError as exc:
                where = f"search page for {phrase!r}"
                raise SdamgiaBadPage.unreadable(site.label, where, exc) from None

        return await gather_settled([first_page(phrase) for phrase in phrases])

    ids: list[str] = []
    results = run_with_client(search_all) if phrases else []
    for phrase, result in zip(phrases, results, strict=True):
        if isinstance(result, DomainError):
            outcome.warnings.append(f"site search for {phrase!r} failed: {result.message}")
        elif isinstance(result, ListingPage):
            problems_store(site=site, parsed=result.problems)
            ids.extend(result.ids)
        else:
            outcome.warnings.append(f"site search for {phrase!r} failed unexpectedly")
    if results and all(isinstance(r, UpstreamError) for r in results):
        outcome.offline = True
        outcome.warnings.append(
            f"offline: {site.label}.sdamgia.ru could not be reached; the matches come from "
            "the problems stored here"
        )
    unique = list(dict.fromkeys(ids))
    outcome.site_candidates = len(unique)
    return unique


class _SiteIndex:
    """Matching forms of every stored problem of a site, rebuilt when the rows change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple[int, object], list[Candidate]]] = {}

    def get(self, site: Site) -> list[Candidate]:
        qs = Problem.objects.filter(subject=site.subject, exam=site.exam).exclude(search_text="")
        stats = qs.aggregate(n=Count("id"), last=Max("fetched_at"), top=Max("id"))
        version = (stats["n"], (stats["last"], stats["top"]))
        with self._lock:
            cached = self._cache.get(site.label)
            if cached and cached[0] == version:
                return cached[1]
        rows = qs.values_list("id", "search_text")
        candidates = [Candidate.from_normalized(pk, text) for pk, text in rows]
        with self._lock:
            self._cache[site.label] = (version, candidates)
        return candidates


site_index = _SiteIndex().get
