"""What the use cases answer: plain result types, made by the services, read by the formatters.

They live apart from the code that makes them so that `formatting` (an adapter) needs only
this module and the models, and the services never import their formatters back: the
catalog, the fuzzy and the photo search and the batch fetch each build one of these, and
the MCP tools, the API and the admin render it through `problems.formatting`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from problems.differences import Difference, Verdict
from problems.models import Category, Problem
from problems.stored import Staleness

Progress = Callable[[int, int], None]  # (done, total), reported as long work goes on


@dataclass
class BatchItem:
    problem_id: str
    problem: Problem | None = None
    error: str = ""
    error_code: str = ""
    stale: Staleness | None = None  # the stored copy, served because the site failed


@dataclass
class SearchOutcome:
    query: str
    ids: list[str] = field(default_factory=list)  # the requested window
    all_ids: list[str] = field(default_factory=list)  # every id read so far
    total_found: int = 0  # ids collected so far
    exhausted: bool = False  # the site has no more pages
    pages_read: int = 0
    offline: bool = False  # the site failed: a keyword search of the stored problems
    stale: Staleness | None = None


@dataclass
class CategoryOutcome:
    category: Category
    ids: list[str]  # the requested window, in listing order
    total: int  # ids known in the listing
    complete: bool  # the whole listing was read


@dataclass
class FuzzyMatch:
    problem: Problem
    score: float
    verdict: Verdict = "other"
    differences: list[Difference] = field(default_factory=list)
    holds: bool = False  # nothing differs and it holds `fuzzy.HELD` of the query's tokens …
    whole: bool = False  # … and the query HELD of its own: the query is all of it

    @property
    def snippet(self) -> str:
        text = self.problem.condition_text
        return text if len(text) <= 180 else text[:177].rstrip() + "…"


@dataclass
class FuzzyOutcome:
    matches: list[FuzzyMatch] = field(default_factory=list)
    fits: int = 0  # stored problems (distinct texts) the query fits: 1, `same`; 2+, `ambiguous`
    phrases: list[str] = field(default_factory=list)
    site_candidates: int = 0
    fetched: int = 0
    fetch_errors: dict[str, str] = field(default_factory=dict)
    local_candidates: int = 0
    warnings: list[str] = field(default_factory=list)
    offline: bool = False  # the site could not be asked: the matches are the stored corpus's
    site_asked: bool = True  # False: a confident stored match answered


@dataclass
class PhotoOutcome:
    recognized_text: str
    search: FuzzyOutcome
