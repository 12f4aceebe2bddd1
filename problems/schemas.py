"""Pydantic shapes of the problem tools: the input types the MCP tools and the REST API
both validate with (one schema for both), and the structured output (output schemas).

Input: ids and task numbers are ASCII digits. A pattern of digits alone would let other
scripts' digits through («١٢٣», fullwidth «１２３»: pydantic's regex is Unicode-aware), and
they would be sent to the site as ids.

Every read answers `stale` (true: the stored copy, served because the site could not be
read), `warnings` (why, and how old the copy is) and its `fetched_at`; every fuzzy match
its `verdict` and `differences`. Those fields are in every answer but left out of the
advertised schemas (`SkipJsonSchema`): `tools/list` has a token budget
(tests/test_tools_list.py) they would overrun; the tools' descriptions and README say
what they mean.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

# --- Input ------------------------------------------------------------------------------

SEED_MAX = 2**62  # a seed given (one drawn has 48 bits)
COUNT_MAX = 20  # problems of one task number in a variant
TASKS_RULE = (
    f'{{"task number": count}} (task numbers of 1–3 digits 0-9, counts 1–{COUNT_MAX}) or "full"'
)


def shown(value: object) -> str:
    """A value as the caller sent it (JSON), cut short, for an error message."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _ascii_digits(value: str) -> str:
    if not value.isascii():
        raise PydanticCustomError(
            "ascii_digits", "must be ASCII digits 0-9, got {got}", {"got": shown(value)}
        )
    return value


def _tasks_checked(value: object, handler: ValidatorFunctionWrapHandler) -> object:
    """One error naming the rule, not one per branch of the union."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError(
            "tasks", "must be {rule}, got {got}", {"rule": TASKS_RULE, "got": shown(value)}
        ) from None


DigitsId = Annotated[str, Field(pattern=r"^\d{1,20}$"), AfterValidator(_ascii_digits)]
TaskNumber = Annotated[str, Field(pattern=r"^\d{1,3}$"), AfterValidator(_ascii_digits)]
Tasks = Annotated[
    dict[TaskNumber, Annotated[int, Field(ge=1, le=COUNT_MAX)]] | Literal["full"],
    WrapValidator(_tasks_checked),
    Field(description='{"task number": count}, or "full": one of each task.'),
]
ProblemIds = Annotated[
    list[DigitsId],
    Field(min_length=1, max_length=50, description="Problem numbers, 1–50 of them."),
]
Seed = Annotated[int | None, Field(ge=0, le=SEED_MAX, description="Same seed, same problems.")]
Source = Literal["bank", "site"]


class BatchGet(BaseModel):
    """`sdamgia_batch_get_problems`'s arguments (subject and exam aside), as REST receives them."""

    model_config = ConfigDict(extra="forbid")

    problem_ids: ProblemIds
    refresh: bool = False


class MakeVariant(BaseModel):
    """`sdamgia_make_variant`'s arguments (subject and exam aside), as REST receives them."""

    model_config = ConfigDict(extra="forbid")

    tasks: Tasks
    seed: Seed = None
    source: Source = Field(
        default="bank",
        description="bank: drawn from the stored problems; site: the site's constructor",
    )


# --- Output -----------------------------------------------------------------------------

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
    kind: str  # own | prototype | missing | hidden (sdamgia_random_problem unrevealed)


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
    kind: str  # number | label | word | asked (the question) | unit (the answer's unit or form)
    query: str
    problem: str
    of: str  # the label a number belongs to (`BC` of `BC = 7`), or ""


class FuzzyMatchOut(BaseModel):
    id: str
    score: float
    # same | ambiguous (it holds the query, as other stored problems do) | same_prototype
    # (its text, other values: not the problem asked) | other (another text, or another
    # question or unit); the tool's description tells the model (left out of the schema:
    # its token budget)
    verdict: SkipJsonSchema[str] = "other"
    differences: SkipJsonSchema[list[DifferenceOut]] = Field(default_factory=list)
    snippet: str
    url: str


class FuzzyOut(BaseModel):
    matches: list[FuzzyMatchOut]
    fits: SkipJsonSchema[int] = 0  # problems of distinct texts that hold the query: 2+, ambiguous
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
    # only when judged on the stored copy because the site could not be read
    stale: SkipJsonSchema[bool | None] = None
    warnings: SkipJsonSchema[list[str] | None] = None


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
    url: str  # the web link, for a browser where the web server runs
    resource: str  # sdamgia://variant/{id}/pdf: `resources/read` gives the PDF
    size: int  # bytes
    embedded: bool  # the PDF is in the answer too (an application/pdf resource)
