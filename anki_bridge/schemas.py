"""Pydantic shapes of seed 002: the inputs every adapter validates and the tools' outputs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, model_validator

TARGET_FIELD_DEFAULT = "Back"
MAX_SIDE_DEFAULT = 768


class ImageSpec(BaseModel):
    """An image to put into a note field (seed 002 `ImageSpec`)."""

    model_config = ConfigDict(extra="forbid")

    image_base64: str | None = Field(None, description="The image as base64 or a data: URL.")
    image_url: AnyHttpUrl | None = Field(
        None, description="An http(s) URL of the image (if no image_base64)."
    )
    url: AnyHttpUrl | None = Field(None, description="Short alias of image_url.")
    target_field: str = Field(
        TARGET_FIELD_DEFAULT,
        min_length=1,
        description="The model field that shows the image (any letter case).",
    )
    filename: str | None = Field(
        None, max_length=200, description="Media file name; a UUID .jpg when omitted."
    )
    max_side: int = Field(
        MAX_SIDE_DEFAULT,
        ge=16,
        le=4096,
        description="Longest side in pixels after resizing.",
    )

    @model_validator(mode="after")
    def _has_a_source(self) -> ImageSpec:
        if not self.image_base64 and self.image_url is None and self.url is None:
            raise ValueError("an image needs image_base64 or image_url (or url)")
        return self

    @property
    def source_url(self) -> str | None:
        chosen = self.image_url or self.url
        return str(chosen) if chosen is not None else None


class NoteInput(BaseModel):
    """One note to add (seed 002 `NoteInput`)."""

    model_config = ConfigDict(extra="forbid")

    fields: dict[str, str] = Field(
        description="Field name → value (HTML; data:image/…;base64 values become images)."
    )
    tags: list[str] = Field(default_factory=list, description="Tags of the note.")
    images: list[ImageSpec] = Field(default_factory=list, description="Images to attach.")
    dedup_key: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="A key already used never makes a second note (safe retries).",
    )


NoteStatus = Literal["ok", "duplicate", "queued", "error"]


class NoteDetail(BaseModel):
    index: int
    status: NoteStatus
    noteId: int | None = None
    dedup_key: str | None = None
    warnings: list[str] | None = None
    error: str | None = None


class AddNotesResult(BaseModel):
    """Seed 002 `AddNotesResult`: `queued` notes wait in the journal for Anki to open."""

    added: int
    skipped: int
    details: list[NoteDetail]


class ModelInfo(BaseModel):
    model: str
    fields: list[str]
    templates: dict[str, dict[str, str]]
    styling: str


class NoteInfo(BaseModel):
    noteId: int
    modelName: str | None
    deckName: str | None
    tags: list[str]
    fields: dict[str, str]
    cards: list[int]


class FoundNote(NoteInfo):
    shortened: list[str] | None = Field(
        None,
        description="Fields cut to their first 500 characters (anki.note_info has them whole).",
    )


class FoundNotes(BaseModel):
    total: int = Field(description="Notes the search finds in all.")
    offset: int
    has_more: bool = Field(description="More notes after this page (ask with offset + limit).")
    notes: list[FoundNote]


class DeleteNotesResult(BaseModel):
    deleted: list[int] = Field(description="Notes deleted by this call.")
    would_delete: list[NoteInfo] | None = Field(
        None, description="First step: the notes the token deletes, as Anki holds them now."
    )
    missing: list[int] | None = Field(None, description="Ids Anki does not hold.")
    confirm_token: str | None = Field(
        None, description="First step: call again with it (and the same note_ids) to delete."
    )


class RescheduleResult(BaseModel):
    due_in_days: int
    rescheduled: list[int]
    missing: list[int] | None = None


class NoteInfoResult(BaseModel):
    notes: list[NoteInfo | None]


class DeckCounts(BaseModel):
    """A deck as Anki's deck list shows it: a parent's counts include its subdecks'."""

    name: str
    id: int
    level: int = Field(description="Depth: 0 top-level.")
    new: int
    learning: int
    review: int
    due_today: int = Field(description="learning + review.")
    total: int


class DeckList(BaseModel):
    decks: list[DeckCounts]


class CardStates(BaseModel):
    new: int
    learning: int = Field(description="Learning or relearning.")
    review: int
    suspended: int
    total: int


class Retention(BaseModel):
    reviews: int
    passed: int = Field(description="Not answered Again.")
    rate: float | None = None


class DeckStats(BaseModel):
    deck: str | None = Field(None, description="The deck, with its subdecks (absent: all).")
    cards: CardStates
    studied_today: int = Field(description="Cards answered today (rated:1).")
    retention_7_days: Retention
    retention_30_days: Retention
    due_by_day: list[int] = Field(
        description="Cards due on each of the next 14 days; [0] is today, overdue included."
    )


class SearchResult(BaseModel):
    model_config = ConfigDict(extra="allow")

    title: str | None = None
    url: str | None = None
    snippet: str | None = None
    content: str | None = None
    score: float | None = None


class SearchResponse(BaseModel):
    results: list[SearchResult]
    nextCursor: str | None = None


class ProblemRef(BaseModel):
    """A СДАМ ГИА problem: the subject and exam of its site and its number."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(min_length=1, max_length=60, description="Subject code, e.g. 'math'.")
    exam: str = Field("ege", description="'ege' (default) or 'oge'.")
    id: str = Field(pattern=r"^\d{1,20}$", description="The problem number, e.g. '27340'.")


def details_dump(details: list[NoteDetail]) -> list[dict[str, Any]]:
    return [d.model_dump(exclude_none=True) for d in details]
