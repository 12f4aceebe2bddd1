"""What the parsers return: plain dataclasses, no Django, no I/O.

`parsing.py` turns the site's HTML into these; services store them in the models and the
formatters render them for MCP and the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SolutionKind = Literal["own", "prototype", "missing"]


@dataclass(frozen=True)
class Codifier:
    """A codifier (КЭС) reference of a problem: `1.2.1`, `Синус, косинус, …`."""

    code: str
    title: str


@dataclass
class ParsedProblem:
    """One problem as the site shows it.

    Text fields are clean text: formula images replaced by their `alt`, soft hyphens
    removed, U+00A0 / U+202F / U+2060 turned into spaces, whitespace collapsed. HTML
    fields are sanitized (no scripts, handlers or hidden styles) with absolute URLs.
    """

    problem_id: str  # the public id of /problem?id=…
    type_number: str = ""  # «Тип 1» → "1", «Задание Д1» → "Д1"; "" when the page has none
    condition_text: str = ""
    condition_html: str = ""
    figures: list[str] = field(default_factory=list)  # absolute URLs of figure images
    formulas: list[str] = field(default_factory=list)  # absolute URLs of formula SVGs
    source_text: str = ""  # shared source text (div.probtext), when the problem has one
    source_html: str = ""
    solution_text: str = ""
    solution_html: str = ""
    solution_figures: list[str] = field(default_factory=list)
    solution_kind: SolutionKind = "missing"  # "prototype": the solution of a prototype
    answer: str = ""  # «Ответ: 0,5» → "0,5"; "" when the block has no answer
    answers: list[str] = field(default_factory=list)  # alternatives split on "|"
    analogs: list[str] = field(default_factory=list)  # deduplicated, itself excluded
    codifier: list[Codifier] = field(default_factory=list)
    internal_id: str = ""  # maindiv{N}: the engine's own id, not the public one


@dataclass
class CatalogCategory:
    category_id: str
    title: str
    count: int | None = None


@dataclass
class CatalogTopic:
    """An exam task type of the catalog with its categories."""

    number: str  # "1", "19", "Д1"; "" when the site gives none
    title: str
    count: int | None = None
    is_additional: bool = False  # after «Дополнительные задания…» or titled «Задания Д…»
    categories: list[CatalogCategory] = field(default_factory=list)


@dataclass
class ListingPage:
    """A page of a category listing or a search: whole problems, in page order."""

    problems: list[ParsedProblem] = field(default_factory=list)
    page: int | None = None  # data-page, when the page says
    total_pages: int | None = None  # data-total, when the page says

    @property
    def ids(self) -> list[str]:
        return [problem.problem_id for problem in self.problems]


@dataclass
class TestPage:
    """A test (variant): its problems in order, or the fact that their numbers are hidden."""

    title: str = ""
    ids: list[str] = field(default_factory=list)
    ids_hidden: bool = False  # teacher-made tests may hide the problem numbers
    problem_count: int = 0
    problems: list[ParsedProblem] = field(default_factory=list)  # when ids are visible
