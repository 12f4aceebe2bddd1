"""Pydantic shapes of the problem tools' structured output (their output schemas).

Every read answers `stale` (true: the stored copy, served because the site could not be
read), `warnings` (why, and how old the copy is) and its `fetched_at`; every fuzzy match
its `verdict` and `differences`. Those fields are in every answer but left out of the
advertised schemas (`SkipJsonSchema`): `tools/list` has a token budget
(tests/test_tools_list.py) they would overrun; the tools' descriptions and README say
what they mean.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

Warnings = Annotated[SkipJsonSchema[list[str]], Field(default_factory=list)]


class StaleOut(BaseModel):
    stale: SkipJsonSchema[bool] = False
    warnings: Warnings


class ConditionOut(BaseModel):
    text: str
    html: str
    figures: list[str]
    formulas: list[str]


class SolutionOut(BaseModel):
    text: str
    html: str
    figures: list[str]
    kind: str  # own | prototype | missing


class CodifierOut(BaseModel):
    code: str
    title: str


class ProblemOut(StaleOut):
    id: str
    subject: str
    exam: str
    type_number: str
    url: str
    condition: ConditionOut
    source_text: str
    solution: SolutionOut
    answer: str
    answers: list[str]
    analogs: list[str]
    codifier: list[CodifierOut]
    categories: list[str]
    fetched_at: str


class BatchErrorOut(BaseModel):
    id: str
    code: str
    message: str


class BatchOut(BaseModel):
    problems: list[ProblemOut]
    errors: list[BatchErrorOut]
    requested: int
    stale: SkipJsonSchema[bool] = False  # some problems are stored copies (each says so)


class BatchListed(BaseModel):
    """BatchOut as tools/list declares it: each problem's shape is declared once, by
    sdamgia_get_problem (the REST schema keeps BatchOut whole)."""

    problems: list[dict[str, Any]] = Field(description="Each as sdamgia_get_problem gives it.")
    errors: list[BatchErrorOut]
    requested: int


class SearchOut(StaleOut):
    query: str
    ids: list[str]
    offset: int
    total_found: int
    exhausted: bool
    offline: SkipJsonSchema[bool] = False  # the site failed: a keyword search of stored problems
    fetched_at: SkipJsonSchema[str | None] = None  # offline: the oldest stored copy shown


class DifferenceOut(BaseModel):
    kind: str  # number | label | word
    query: str
    problem: str
    of: str  # the label a number belongs to (`BC` of `BC = 7`), or ""


class FuzzyMatchOut(BaseModel):
    id: str
    score: float
    # same | same_prototype (its text, other values: not the problem asked) | other; the
    # tool's description tells the model (left out of the schema: its token budget)
    verdict: SkipJsonSchema[str] = "other"
    differences: SkipJsonSchema[list[DifferenceOut]] = Field(default_factory=list)
    snippet: str
    url: str


class FuzzyOut(BaseModel):
    matches: list[FuzzyMatchOut]
    phrases: list[str]
    site_candidates: int
    fetched: int
    local_candidates: int
    fetch_errors: dict[str, str]
    warnings: list[str]
    offline: bool = Field(description="The site was unreachable: the matches are stored problems.")
    site_asked: bool = Field(
        description="False: a stored problem answered without asking the site."
    )


class ImageSearchOut(FuzzyOut):
    recognized_text: str  # the text read off the image (OCR; the tool says so)


class CategoryRefOut(BaseModel):
    id: str
    title: str
    count: int | None


class TopicOut(BaseModel):
    number: str
    title: str
    count: int | None
    is_additional: bool
    categories: list[CategoryRefOut]


class CatalogOut(StaleOut):
    topics: list[TopicOut]
    fetched_at: SkipJsonSchema[str | None] = None


class CategoryOut(StaleOut):
    category_id: str
    title: str
    ids: list[str]
    offset: int
    total: int
    fetched_at: SkipJsonSchema[str | None] = None


class TestOut(StaleOut):
    __test__ = False  # not a pytest class

    test_id: str
    title: str
    ids: list[str]
    ids_hidden: bool
    problem_count: int
    note: str
    fetched_at: SkipJsonSchema[str | None] = None


class AnswerChecked(BaseModel):
    problem_id: str
    verdict: Literal["correct", "incorrect"]
    answer: str | None = None  # the right answer, only when revealed


class VariantMade(BaseModel):
    variant: str  # its id, for sdamgia_variant_pdf and sdamgia_check_variant
    seed: int | None = None  # the bank's draw: the same seed, the same problems
    test_id: str | None = None  # the site's test, when the site's constructor made it
    problem_ids: list[str]


class TaskVerdict(BaseModel):
    number: int
    problem_id: str
    verdict: Literal["correct", "incorrect", "missing", "unchecked"]


class VariantGraded(BaseModel):
    variant: str
    tasks: list[TaskVerdict]
    score: int
    max_score: int


class SheetLink(BaseModel):
    url: str
