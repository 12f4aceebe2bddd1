"""The OJ API's response bodies as pydantic models (the shapes of the `oj-api-rs` backend).

Nullable fields are nullable here too; unknown fields are ignored (the backend adds
fields between versions). A body of the wrong shape raises `OjBadResponse("invalid
JSON: …")` naming the field, never a crash further down.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ojclient.exceptions import OjBadResponse

M = TypeVar("M", bound=BaseModel)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


def _text_id(value: Any) -> Any:
    # Backends differ on ids: LeetCode's are numbers in some versions, strings in others.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


class Problem(_Body):
    id: str
    source: str | None = None
    slug: str | None = None
    title: str | None = None
    title_cn: str | None = None
    difficulty: str | None = None
    ac_rate: float | None = None
    tags: list[str] = Field(default_factory=list)
    link: str | None = None
    content: str | None = None

    _id = field_validator("id", mode="before")(_text_id)

    @field_validator("tags", mode="before")
    @classmethod
    def _null_tags(cls, value: Any) -> Any:
        return [] if value is None else value


class DailyFetching(_Body):
    status: str | None = None
    retry_after: int | None = None


class DailyCompact(_Body):
    """v0.3: `{date, source, problems: [...]}`."""

    date: str | None = None
    source: str | None = None
    problems: list[Problem]


class SimilarItem(_Body):
    source: str | None = None
    id: str | None = None
    title: str | None = None
    difficulty: str | None = None
    link: str | None = None
    similarity: float | None = None

    _id = field_validator("id", mode="before")(_text_id)


class SimilarResponse(_Body):
    rewritten_query: str | None = None
    results: list[SimilarItem]


class ResolveResponse(_Body):
    source: str | None = None
    id: str | None = None
    problem: Problem | None = None

    _id = field_validator("id", mode="before")(_text_id)


class PlatformCounts(_Body):
    source: str
    total: int
    missing_content: int
    not_embedded: int


class PlatformStatus(_Body):
    version: str
    platforms: list[PlatformCounts]

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value


def body_parse(model: type[M], data: Any) -> M:
    """`data` as `model`, or OjBadResponse("invalid JSON: <field>: <rule>")."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False)[:3]:
            where = ".".join(str(part) for part in error["loc"]) or "body"
            problems.append(f"{where}: {error['msg']}")
        raise OjBadResponse("invalid JSON: " + "; ".join(problems)) from None
