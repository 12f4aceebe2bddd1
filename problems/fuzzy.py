"""`problems_search_fuzzy`: find problems by a (possibly OCR-damaged) condition text.

Each match carries what differs from the query — numbers, labels, words that change the
task (`problems.differences`) — and a verdict: `same`, `same_prototype` (the text with
other values) or `other`. First the stored problems (`problems.index`): a confident match
— a high score, well ahead of the runner-up, a query of enough telling words, all of them
in it in order, and nothing different — is the answer, without asking the site
(`refresh=True` always asks). Otherwise the candidates are the
site's search with 1–3 distinctive phrases of the text (the union of the first pages),
plus every problem of the site already in the database. Candidates not yet stored are
fetched — in chunks by the Celery workers when one answers, else here with bounded
concurrency (`core.background.gather`) — and stored, so the next search is local.
Scoring is `problems.matching`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from core import background
from core.exceptions import DomainError, InvalidInput, UpstreamError
from problems import index
from problems.client import SdamgiaClient, gather_settled, run_with_client, site_base_url
from problems.differences import Difference, Token, Verdict, compare, tokens, verdict_of
from problems.entities import ListingPage
from problems.exceptions import SdamgiaBadPage
from problems.matching import (
    Candidate,
    Query,
    distinctive_phrases,
    matching_form,
    score,
)
from problems.models import Problem
from problems.parsing import PageStructureError, parse_search_page
from problems.repair import (
    Anchor,
    anchors,
    anchors_held,
    phrase_whole,
    phrases_build,
    words_repair,
)
from problems.services import Progress, problems_store
from problems.subjects import Site

logger = logging.getLogger(__name__)

FETCH_TASK = "problems.fetch_chunk"
CHUNK_SIZE = 5  # problems per task when workers share the fetching
FANOUT_TIMEOUT = 120.0  # seconds to wait for the workers; later chunks count as failed
ROUNDS = 4  # of site searches at most (see _site_candidates)
PAGES = 3  # of one phrase at most
THIN = 0.8  # a problem shown this good, holding the query's anchors, ends the search rounds
CONFIDENT = 0.85  # a stored match this good …
MARGIN = 0.03  # … and this far ahead of the runner-up answers without the site …
TELLING = 4  # … when the query holds this many telling words (numbers, labels, long words)
CLOSE = 0.8  # a match this good, or holding HELD of the query's tokens in place, is the
HELD = 0.75  # query's text (`same` or `same_prototype`); below both, `other`


@dataclass
class FuzzyMatch:
    problem: Problem
    score: float
    verdict: Verdict = "other"
    differences: list[Difference] = field(default_factory=list)

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
    site_asked: bool = True  # False: a confident stored match answered


def problems_search_fuzzy(
    *,
    site: Site,
    condition_text: str,
    threshold: float = 0.6,
    limit: int = 20,
    progress: Progress | None = None,
    refresh: bool = False,
) -> FuzzyOutcome:
    """Problems whose condition matches `condition_text`, best first, with scores 0..1.

    `refresh`: ask the site even when a stored problem matches confidently.
    """
    text = condition_text.strip()
    if not 10 <= len(text) <= 1000:
        raise InvalidInput("condition_text must be 10–1000 characters", field="condition_text")
    if not 0 <= threshold <= 1:
        raise InvalidInput("threshold must be between 0 and 1", field="threshold")
    if not 1 <= limit <= 50:
        raise InvalidInput("limit must be between 1 and 50", field="limit")
    query = Query.from_text(text)
    asked = tokens(text)
    local: list[tuple[Candidate, float]] = []
    if not refresh:
        local = index.search(site, query, threshold=0, limit=max(limit, 10))
        if _confident(text, asked, local):
            outcome = FuzzyOutcome(site_asked=False, local_candidates=index.size(site))
            kept = [(c, s) for c, s in local if s >= threshold][:limit]
            outcome.matches = _matches(asked, kept)
            return outcome
    outcome = FuzzyOutcome()
    site_ids = _site_candidates(site, query, text, outcome, [c for c, _ in local[:3]])
    stored = set(
        Problem.objects.filter(subject=site.subject, exam=site.exam, problem_id__in=site_ids)
        .exclude(search_text="")
        .values_list("problem_id", flat=True)
    )
    missing = [pid for pid in site_ids if pid not in stored]
    if missing:
        outcome.fetch_errors = _fetch_missing(site, missing, progress)
        outcome.fetched = len(missing) - len(outcome.fetch_errors)
    ranked = index.search(site, query, threshold=threshold, limit=limit)
    outcome.matches = _matches(asked, ranked)
    outcome.local_candidates = index.size(site)
    return outcome


def _confident(text: str, asked: list[Token], ranked: Sequence[tuple[Candidate, float]]) -> bool:
    """Whether the best stored match is the answer: its score, its lead over the runner-up
    of another text (a problem stored twice under two numbers is one answer), a query of
    TELLING words or more (`Найдите угол B. Ответ дайте в градусах.` is in a hundred
    problems), every one of them in it, in order (`repair.anchors`), and no difference
    (a sibling of the prototype with another number, label or function is another
    problem)."""
    if not ranked or ranked[0][1] < CONFIDENT:
        return False
    best, top = ranked[0]
    runner_up = next((s for c, s in ranked[1:] if c.folded != best.folded), 0.0)
    if top - runner_up < MARGIN:
        return False
    pinned = anchors(words_repair(text, edits=False))
    if len(pinned) < TELLING or not anchors_held(pinned, best.folded):
        return False
    matches = _matches(asked, ranked[:1])
    return bool(matches) and matches[0].verdict == "same"


def _matches(asked: list[Token], ranked: Sequence[tuple[Candidate, float]]) -> list[FuzzyMatch]:
    """The ranked candidates' rows, each with what differs from the query (a row deleted
    meanwhile is left out)."""
    rows = Problem.objects.in_bulk([c.key for c, _ in ranked])
    return [_match(asked, rows[c.key], s) for c, s in ranked if c.key in rows]


def _match(asked: list[Token], problem: Problem, score: float) -> FuzzyMatch:
    """A match of `problem` to the query's tokens: its differences and verdict."""
    text = " ".join(part for part in (problem.source_text, problem.condition_text) if part)
    comparison = compare(asked, tokens(text))
    verdict = verdict_of(comparison, score, close=CLOSE, held=HELD)
    return FuzzyMatch(problem, score, verdict, comparison.differences)


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


def _site_candidates(
    site: Site, query: Query, text: str, outcome: FuzzyOutcome, stored: Sequence[Candidate] = ()
) -> list[str]:
    """The problems the site's search shows for phrases of the repaired query.

    In rounds, until a problem shown (or one of the best `stored`) answers the query
    (`_answers`): the first page of up
    to three phrases of intact, telling words, concurrently; then one phrase of all the
    intact words, shorter phrases of the others, and the second page of every phrase
    whose first page was full; then the second page of those of the second round. Whole
    problems on those pages are stored; the site failing is a warning, not an error.
    `outcome.phrases`: every phrase sent.
    """
    words = words_repair(text)
    pinned = anchors(words)
    first = phrases_build(words, count=3) or distinctive_phrases(text)
    more = [phrase_whole(words), *phrases_build(words, count=2, size=4, skip=first)]
    rounds = [[(phrase, 1) for phrase in first], [(phrase, 1) for phrase in more]]
    asked: list[tuple[str, int]] = []
    pages: dict[tuple[str, int], ListingPage] = {}
    failures: list[BaseException] = []
    full: list[tuple[str, int]] = []  # pages asked last round that were full: the next
    for number in range(ROUNDS):
        todo = rounds[number] if number < len(rounds) else []
        todo = [(p[:500], n) for p, n in todo if len(p) >= 3] + [(p, n + 1) for p, n in full]
        todo = [key for key in dict.fromkeys(todo) if key not in pages and key not in asked]
        if not todo:
            break
        found, failed = _search_pages(site, todo, outcome)
        pages.update(found)
        failures += failed
        asked += todo
        full = [
            (p, n)
            for (p, n), page in found.items()
            if n < PAGES and len(page.ids) >= 10 and page.ids != _ids(pages.get((p, n - 1)))
        ]  # a page the same as the one before it is the last, repeated
        if any(not p.condition_text for page in found.values() for p in page.problems):
            break  # pages of numbers only: the problems are fetched, then ranked
        shown = [
            Candidate.from_normalized(None, matching_form(p.condition_text))
            for page in pages.values()
            for p in page.problems
        ]
        if _answers(query, pinned, [*stored, *shown]):
            break
    outcome.phrases = list(dict.fromkeys(phrase for phrase, _ in asked))
    if asked and not pages and all(isinstance(f, UpstreamError) for f in failures):
        outcome.offline = True
        outcome.warnings.append(
            f"offline: {site.label}.sdamgia.ru could not be reached; the matches come from "
            "the problems stored here"
        )
    unique = list(dict.fromkeys(pid for page in pages.values() for pid in page.ids))
    outcome.site_candidates = len(unique)
    return unique


def _ids(page: ListingPage | None) -> list[str]:
    return page.ids if page else []


def _answers(query: Query, pinned: list[Anchor], candidates: Sequence[Candidate]) -> bool:
    """Whether a candidate is likely the one: a good score (THIN) and the query's anchors
    in it, in order (`repair.anchors_held`)."""
    return any(
        score(query, candidate) >= THIN and anchors_held(pinned, candidate.folded)
        for candidate in candidates
    )


def _search_pages(
    site: Site, asked: Sequence[tuple[str, int]], outcome: FuzzyOutcome
) -> tuple[dict[tuple[str, int], ListingPage], list[BaseException]]:
    """The search pages asked ((phrase, page number)), concurrently, and what failed; stores
    the problems they show. A failure is also a warning of `outcome`."""

    async def search_all(client: SdamgiaClient) -> list[ListingPage | BaseException]:
        async def one(phrase: str, number: int) -> ListingPage:
            page = await client.search_page(site, phrase, number)
            try:
                return parse_search_page(page.text, base_url=site_base_url(site))
            except PageStructureError as exc:
                where = f"search page for {phrase!r}"
                raise SdamgiaBadPage.unreadable(site.label, where, exc) from None

        return await gather_settled([one(phrase, number) for phrase, number in asked])

    pages: dict[tuple[str, int], ListingPage] = {}
    failures: list[BaseException] = []
    for key, result in zip(asked, run_with_client(search_all) if asked else [], strict=True):
        if isinstance(result, ListingPage):
            problems_store(site=site, parsed=result.problems)
            pages[key] = result
            continue
        failures.append(result)
        why = result.message if isinstance(result, DomainError) else "unexpectedly"
        outcome.warnings.append(f"site search for {key[0]!r} failed: {why}")
    return pages, failures
