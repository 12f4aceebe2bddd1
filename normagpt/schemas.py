"""Pydantic schemas: what each node's model output must be, and the tools' structured output."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Decision = Literal["CONTINUE", "REPLAN", "FINALIZE", "HUMAN_REVIEW", "ASK"]
DECISIONS: tuple[str, ...] = ("CONTINUE", "REPLAN", "FINALIZE", "HUMAN_REVIEW", "ASK")


class _Lenient(BaseModel):
    """Model output: unknown keys are ignored, numbers and strings coerced where harmless."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class PlanStep(_Lenient):
    """A search of the corpus (keywords), or a calculation on values found (calculate)."""

    action: str = Field(min_length=1, max_length=500)
    keywords: list[str] = Field(default_factory=list, max_length=12)
    expected_documents: list[str] = Field(default_factory=list, max_length=8)
    calculate: str = Field(default="", max_length=300)

    @model_validator(mode="after")
    def _search_or_calculation(self) -> PlanStep:
        if not self.keywords and not self.calculate:
            raise ValueError("a step needs keywords (a search) or calculate (an expression)")
        return self

    @field_validator("keywords", "expected_documents", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class Plan(_Lenient):
    goal: str = Field(min_length=1, max_length=1000)
    query_domain: str = ""
    steps: list[PlanStep] = Field(min_length=1, max_length=6)


class Finding(_Lenient):
    document: str = Field(min_length=1, max_length=100)
    clause: str = Field(default="", max_length=40)
    page: int = Field(ge=1)
    quote: str = Field(default="", max_length=2000)

    @field_validator("clause", mode="before")
    @classmethod
    def _clause_text(cls, value: Any) -> Any:
        return "" if value is None else str(value).removeprefix("п.").strip()


class StepResult(_Lenient):
    findings: list[Finding] = Field(default_factory=list, max_length=20)
    summary: str = Field(min_length=1, max_length=3000)


class Verdict(_Lenient):
    decision: Decision
    reason: str = Field(min_length=1, max_length=1000)
    questions: list[str] = Field(default_factory=list, max_length=3)  # to the asker, with ASK

    @field_validator("questions", mode="before")
    @classmethod
    def _questions_list(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            return [str(q).strip()[:300] for q in value if str(q).strip()][:3]
        return value

    @model_validator(mode="after")
    def _ask_has_questions(self) -> Verdict:
        if self.decision == "ASK" and not self.questions:
            raise ValueError("decision ASK needs questions: what the asker should answer")
        return self

    @field_validator("decision", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper().replace(" ", "_") if isinstance(value, str) else value


class Source(_Lenient):
    document: str = Field(min_length=1, max_length=100)
    clause: str = Field(default="", max_length=40)
    page: int = Field(ge=1)

    @field_validator("clause", mode="before")
    @classmethod
    def _clause_text(cls, value: Any) -> Any:
        return "" if value is None else str(value).removeprefix("п.").strip()


class FinalAnswer(_Lenient):
    answer: str = Field(min_length=1, max_length=20_000)
    sources: list[Source] = Field(default_factory=list, max_length=30)
    conditions: list[str] = Field(default_factory=list, max_length=20)
    clarifying_questions: list[str] = Field(default_factory=list, max_length=10)


# --- Structured output of the MCP tools ------------------------------------------------


class SourceOut(BaseModel):
    document: str
    clause: str
    page: int
    page_id: int | None = None
    url: str | None = None
    edition: str = ""  # its status on the run's day
    amendment: str = ""  # whose text of the clause holds then


class RunOut(BaseModel):
    run_id: str
    thread: str | None = None  # normagpt_ask(thread=…) asks a follow-up in it
    as_of: str | None = None  # the day the answer is for
    status: str
    question: str
    incomplete: bool = False
    incomplete_reason: str = ""
    answer: str = ""
    sources: list[SourceOut] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)
    clarifying_questions: list[str] = Field(default_factory=list)
    dropped_sources: list[dict[str, Any]] = Field(default_factory=list)
    checks: list[dict[str, Any]] = Field(default_factory=list)  # claim, verdict, reason, clause
    review_reason: str = ""
    error: str = ""
    steps: list[dict[str, Any]] = Field(default_factory=list)
    tokens: int = 0
    llm_calls: int = 0
    cost_estimate_usd: float = 0.0
    url: str | None = None
    working_on: str = ""  # the node at work now (a running run)
    events: list[dict[str, Any]] = Field(default_factory=list)  # at, kind, node, message


class RunListOut(BaseModel):
    runs: list[RunOut]
    next_offset: int | None = None  # `offset` of the next page; None: no more


class ThreadOut(BaseModel):
    thread: str
    title: str
    created_at: str
    updated_at: str
    url: str | None = None
    runs: list[RunOut] = Field(default_factory=list)  # the conversation, oldest first


class ThreadListOut(BaseModel):
    threads: list[ThreadOut]
    next_offset: int | None = None


class SearchHitOut(BaseModel):
    page_id: int
    document: str
    title: str
    replaced: bool
    replaced_by: str | None
    page: int
    pages_after: list[int]  # the pages its clauses found run on to
    clauses: list[str]
    snippet: str
    image_url: str | None
    expected: bool
    rank: float
    # the clauses found on it, best first, each once (a table: «таблица 5.1»; a part with
    # no number is not named)
    found: list[str]
    answers: bool  # a clause found holds what the keywords ask
    lacks: list[str]  # the keywords' words its best clause does not hold


class SearchOut(BaseModel):
    keywords: list[str]
    expected_documents: list[str]
    answered: bool  # some hit answers; false: the corpus holds no clause on it
    searched: list[str]  # the words searched for (question and filler words left out)
    whole_question: bool  # the keywords were a person's question, read down to its words
    hits: list[SearchHitOut]
