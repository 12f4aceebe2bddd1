"""Pydantic shapes of the problem tools' structured output (their output schemas)."""

from __future__ import annotations

from pydantic import BaseModel, Field


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


class ProblemOut(BaseModel):
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


class SearchOut(BaseModel):
    query: str
    ids: list[str]
    offset: int
    total_found: int
    exhausted: bool


class FuzzyMatchOut(BaseModel):
    id: str
    score: float
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
    recognized_text: str = Field(description="The text read off the image (OCR).")


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


class CatalogOut(BaseModel):
    topics: list[TopicOut]


class CategoryOut(BaseModel):
    category_id: str
    title: str
    ids: list[str]
    offset: int
    total: int


class TestOut(BaseModel):
    __test__ = False  # not a pytest class

    test_id: str
    title: str
    ids: list[str]
    ids_hidden: bool
    problem_count: int
    note: str
