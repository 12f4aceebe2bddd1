"""`problems_search_fuzzy`: find problems by a (possibly OCR-damaged) condition text.

Each match carries what differs from the query — numbers, labels, words of the data, the
question asked and the answer's unit (`problems.differences`) — and a verdict: `same`,
`ambiguous` (it holds the query, and so does another stored problem of another text: the
query does not tell them apart), `same_prototype` (the text with other values) or `other`
(another text, or another question). First the stored problems (`problems.index`): a
confident match — a high score, well ahead of the runner-up, a query of enough telling
words, all of them in it in order, and `same` — is the answer, without asking the site
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

from core import background
from core.exceptions import DomainError, InvalidInput, UpstreamError
from problems import index
from problems.client import SdamgiaClient, gather_settled, run_with_client, site_base_url
from problems.differences import QUESTION, compare, verdict_of
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
from problems.outcomes import FuzzyMatch, FuzzyOutcome, Progress
from problems.parsing import PageStructureError, parse_search_page
from problems.repair import (
    Anchor,
    anchors,
    anchors_held,
    phrase_prose,
    phrase_whole,
    phrases_build,
    words_repair,
)
from problems.services import problems_store
from problems.subjects import Site
from problems.tokens import Token, stored_tokens, tokens

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
POOL = 50  # stored candidates (scoring FIT_FLOOR or more) compared with the query to find
FIT_FLOOR = 0.5  # those that hold it: a short fragment scores low against a long problem


def problems_search_fuzzy(
    *,
    site: Site,
    condition_text: str,
    threshold: float = 0.6,
    limit: int = 20,
    progress: Progress | None = None,
    refresh: bool = False,
    read: bool = False,
) -> FuzzyOutcome:
    """Problems whose condition matches `condition_text`, best first, with scores 0..1.

    `refresh`: ask the site even when a stored problem matches confidently. `read`: the
    text was read off a photo (a label's look-alike letters are no difference).
    """
    text = condition_text.strip()
    if not 10 <= len(text) <= 1000:
        raise InvalidInput("condition_text must be 10–1000 characters", field="condition_text")
    if not 0 <= threshold <= 1:
        raise InvalidInput("threshold must be between 0 and 1", field="threshold")
    if not 1 <= limit <= 50:
        raise InvalidInput("limit must be between 1 and 50", field="limit")
    query = Query.from_text(text)
    asked = tokens(text, read=read)
    pinned = anchors(words_repair(text, edits=False))
    generic = len(pinned) < TELLING
    local: list[tuple[Candidate, float]] = []
    if not refresh:
        local = _stored(site, query, text, generic=generic, threshold=0, limit=limit)
        found, fits = _compared(asked, local, limit, floor=0 if generic else FIT_FLOOR)
        if _confident(pinned, local, found):
            outcome = FuzzyOutcome(site_asked=False, local_candidates=index.size(site), fits=fits)
            outcome.matches = _listed(found, threshold, limit)
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
    floor = 0 if generic else min(threshold, FIT_FLOOR)
    ranked = _stored(site, query, text, generic=generic, threshold=floor, limit=limit)
    found, outcome.fits = _compared(asked, ranked, limit, floor=floor)
    outcome.matches = _listed(found, threshold, limit)
    outcome.local_candidates = index.size(site)
    return outcome


def _stored(
    site: Site, query: Query, text: str, *, generic: bool, threshold: float, limit: int
) -> list[tuple[Candidate, float]]:
    """The stored candidates, ranked (`index.search`, POOL at least); a generic query's
    (fewer than TELLING telling words) with the problems holding its text whole, which no
    rare term finds (`index.holding`), whatever their score."""
    ranked = index.search(site, query, threshold=threshold, limit=max(limit, POOL))
    if not generic:
        return ranked
    seen = {c.key for c, _ in ranked}
    holding = index.holding(site, matching_form(text), limit=POOL)
    ranked += [(c, score(query, c)) for c in holding if c.key not in seen]
    return sorted(ranked, key=lambda pair: (-pair[1], pair[0].key))  # as `matching.rank`


def _confident(
    pinned: list[Anchor], ranked: Sequence[tuple[Candidate, float]], found: dict[object, FuzzyMatch]
) -> bool:
    """Whether the best stored match is the answer: its score, its lead over the runner-up
    of another text (a problem stored twice under two numbers is one answer), a query of
    TELLING words or more (`Найдите угол B. Ответ дайте в градусах.` is in a hundred
    problems), every one of them in it, in order (`repair.anchors`), and verdict `same`:
    no difference (a sibling with another number, label or word, a problem asking another
    quantity or unit is another problem), and no other stored text holding the query."""
    if not ranked or ranked[0][1] < CONFIDENT:
        return False
    best, top = ranked[0]
    runner_up = next((s for c, s in ranked[1:] if c.folded != best.folded), 0.0)
    if top - runner_up < MARGIN:
        return False
    if len(pinned) < TELLING or not anchors_held(pinned, best.folded):
        return False
    return best.key in found and found[best.key].verdict == "same"


def _compared(
    asked: list[Token], ranked: Sequence[tuple[Candidate, float]], limit: int, *, floor: float
) -> tuple[dict[object, FuzzyMatch], int]:
    """The first `limit` ranked candidates and every other scoring `floor` or more that
    may hold the query, in rank order, each with what differs from the query and its
    verdict (a row deleted meanwhile is left out); and how many stored texts the query
    fits (`_ambiguity`)."""
    listed = {c.key: (c, s) for c, s in ranked[:limit]}
    more = {c.key: (c, s) for c, s in ranked[limit:] if s >= floor}
    rows = Problem.objects.only(*_FIELDS).in_bulk([*listed, *more])
    mine: set[tuple[str, str]] = {(t.kind, t.key) for t in asked}
    found = {}
    for key, (_, s) in [*listed.items(), *more.items()]:
        row = rows.get(key)
        if row is not None and (key in listed or _may_hold(asked, mine, row)):
            found[key] = _match(asked, row, s)
    texts = {key: c.folded for key, (c, _) in [*listed.items(), *more.items()]}
    return found, _ambiguity(found, texts)


_FIELDS = ("subject", "exam", "problem_id", "condition_text", "source_text")  # what a match shows


def _may_hold(asked: list[Token], mine: set[tuple[str, str]], problem: Problem) -> bool:
    """Whether `problem` has HELD of the query's tokens anywhere (a match holding the query
    has them in place): the others need no comparison to be left out of `_ambiguity`."""
    theirs = {(t.kind, t.key) for t in stored_tokens(_text(problem))} & mine
    return sum(t.glued or (t.kind, t.key) in theirs for t in asked) >= HELD * len(asked)


def _listed(found: dict[object, FuzzyMatch], threshold: float, limit: int) -> list[FuzzyMatch]:
    """The first `limit` matches scoring `threshold` or more: those holding the query first
    (`same`, `ambiguous`), those asking another quantity or unit last, by score within
    each (a generic query's holders score low against a long problem)."""
    kept = [match for match in found.values() if match.score >= threshold]
    return sorted(kept, key=_standing)[:limit]  # stable: by score within a standing


def _standing(match: FuzzyMatch) -> int:
    if match.verdict in ("same", "ambiguous"):
        return 0
    return 2 if any(d.kind in QUESTION for d in match.differences) else 1


def _ambiguity(found: dict[object, FuzzyMatch], texts: dict[object, str]) -> int:
    """How many texts the query fits. A match holding the query (nothing different, most of
    it in place) fits. One text fitting is `same`, whatever its score (a query of a part
    of it); two or more — a fragment, a generic sentence the query does not tell apart —
    are each `ambiguous`, unless exactly one of them is the whole query and `same` (the
    others hold it and more: `other`). A problem stored twice under two numbers is one
    text."""
    holders = {key: match for key, match in found.items() if match.holds}
    fitting = {texts[key] for key in holders}
    whole = {texts[key] for key, m in holders.items() if m.whole and m.verdict == "same"}
    for key, match in holders.items():
        if len(fitting) == 1 or texts[key] in whole:
            match.verdict = "same" if len(fitting) == 1 or len(whole) == 1 else "ambiguous"
        else:
            match.verdict = "other" if len(whole) == 1 else "ambiguous"
    return 1 if len(fitting) == 1 or len(whole) == 1 else len(fitting)


def _match(asked: list[Token], problem: Problem, score: float) -> FuzzyMatch:
    """A match of `problem` to the query's tokens: its differences and verdict."""
    comparison = compare(asked, list(stored_tokens(_text(problem))))
    verdict = verdict_of(comparison, score, close=CLOSE, held=HELD)
    holds = not (comparison.differences or comparison.extra) and comparison.coverage >= HELD
    whole = holds and comparison.covered >= HELD
    return FuzzyMatch(problem, score, verdict, comparison.differences, holds, whole)


def _text(problem: Problem) -> str:
    return " ".join(part for part in (problem.source_text, problem.condition_text) if part)


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
    (`_answers`): the first page of up to three phrases of intact, telling words,
    concurrently; then one phrase of all the intact words, one of its Russian words alone
    (`repair.phrase_prose`: for a site that does not search a formula's text), shorter
    phrases of the others, and the second page of every phrase whose first page was full;
    then the second page of those of the second round. Whole problems on those pages are
    stored; the site failing is a warning, not an error.
    `outcome.phrases`: every phrase sent.
    """
    words = words_repair(text)
    pinned = anchors(words)
    first = phrases_build(words, count=3) or distinctive_phrases(text)
    more = [
        phrase_whole(words),
        phrase_prose(words),
        *phrases_build(words, count=2, size=4, skip=first),
    ]
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
    return _shown_ids(site, outcome, asked, pages, failures)


def _shown_ids(
    site: Site,
    outcome: FuzzyOutcome,
    asked: list[tuple[str, int]],
    pages: dict[tuple[str, int], ListingPage],
    failures: list[BaseException],
) -> list[str]:
    """The problem ids the pages showed, in order; the phrases sent and, when no page came
    and every failure was the site's, `offline`, recorded on `outcome`."""
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
