"""Pydantic shapes of seed 002: the inputs every adapter validates and the tools' outputs."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, PrivateAttr, model_validator

TARGET_FIELD_DEFAULT = "Back"
MAX_SIDE_DEFAULT = 768


class ImageSpec(BaseModel):
    """An image to put into a note field (seed 002 `ImageSpec`)."""

    model_config = ConfigDict(extra="forbid")

    image_base64: str | None = Field(None, description="Base64 or a data: URL.")
    image_url: AnyHttpUrl | None = None
    url: AnyHttpUrl | None = None  # image_url's short alias
    target_field: str = Field(
        TARGET_FIELD_DEFAULT,
        min_length=1,
        description="The field that shows it.",
    )
    filename: str | None = Field(None, max_length=200)  # default: a UUID .jpg
    max_side: int = Field(
        MAX_SIDE_DEFAULT,
        ge=16,
        le=4096,
    )
    # Set by the hub, never by a caller (not in the schema): the text a field shows in place
    # of the image's `<img src="{filename}">` when the image cannot be loaded (a problem's
    # formula: its plain alt, never a broken image).
    _stand_in: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _has_a_source(self) -> ImageSpec:
        if not self.image_base64 and self.image_url is None and self.url is None:
            raise ValueError("an image needs image_base64 or image_url (or url)")
        return self

    @property
    def source_url(self) -> str | None:
        chosen = self.image_url or self.url
        return str(chosen) if chosen is not None else None

    @property
    def stand_in(self) -> str | None:
        return self._stand_in

    def with_stand_in(self, text: str) -> ImageSpec:
        """This image, shown as `text` where it cannot be loaded."""
        self._stand_in = text
        return self


class NoteInput(BaseModel):
    """One note to add (seed 002 `NoteInput`)."""

    model_config = ConfigDict(extra="forbid")

    fields: dict[str, str] = Field(description="Field → value (HTML).")
    tags: list[str] = Field(default_factory=list)
    images: list[ImageSpec] = Field(default_factory=list)
    dedup_key: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        description="Used again: no second note (safe retries).",
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
        description="Fields cut to 500 characters.",
    )


class FoundNotes(BaseModel):
    total: int
    offset: int
    has_more: bool
    notes: list[FoundNote]


class DeleteNotesResult(BaseModel):
    deleted: list[int]
    would_delete: list[NoteInfo] | None = None  # the first step: what the token deletes
    missing: list[int] | None = None  # ids Anki does not hold
    confirm_token: str | None = None  # again with the same note_ids: they are deleted


class RescheduleResult(BaseModel):
    due_in_days: int
    rescheduled: list[int]
    missing: list[int] | None = None


class CardsChanged(BaseModel):
    changed: list[int]  # read back from Anki; a card given, held and not here was so already
    missing: list[int] | None = None  # ids Anki does not hold


class CardSchedule(BaseModel):
    card: int
    state: str  # new, learning, review or relearning
    queue: str | None = None  # suspended or buried
    due: str | None = Field(None, description="A date; new: #position; learning: UTC time.")
    interval: int  # days
    ease: int | None = None  # %
    reps: int
    lapses: int
    stability: float | None = Field(None, description="FSRS, days; the next two in %.")
    difficulty: int | None = None
    retrievability: int | None = None


class ScheduledNote(NoteInfo):
    schedule: list[CardSchedule]


class NoteInfoResult(BaseModel):
    notes: list[ScheduledNote | None]


class DeckCounts(BaseModel):
    """A deck as Anki's deck list shows it: a parent's counts include its subdecks'."""

    name: str
    id: int
    level: int  # depth: 0 top-level
    new: int
    learning: int
    review: int
    due_today: int  # learning + review
    total: int


class DeckList(BaseModel):
    decks: list[DeckCounts]


class CardStates(BaseModel):
    new: int
    learning: int  # learning or relearning
    review: int
    suspended: int
    total: int


class Retention(BaseModel):
    reviews: int
    passed: int  # not answered Again
    rate: float | None = None


class DeckStats(BaseModel):
    deck: str | None = None  # with its subdecks; absent: the whole collection
    cards: CardStates
    studied_today: int  # cards answered today (rated:1)
    retention_7_days: Retention
    retention_30_days: Retention
    due_by_day: list[int] = Field(description="[0]: today, with the overdue.")


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


class ReviewStarted(BaseModel):
    session: str
    deck: str
    cards: int
    learning: int
    review: int
    new: int
    expires_at: datetime


class ReviewCardOut(BaseModel):
    """The card to show (its front only), or, with `done`, the end of the session."""

    session: str
    card: int | None = None
    kind: str | None = None  # learning, review or new
    position: int | None = None
    remaining: int  # after this one (done: revealed, not rated yet)
    deck: str | None = None
    front: str | None = None
    done: bool = False
    rated: dict[str, int] | None = None  # done: the ratings given


class ReviewRevealed(BaseModel):
    session: str
    card: int
    back: str
    next_intervals: dict[str, str] | None = None  # as Anki's buttons say them


class ReviewRated(BaseModel):
    session: str
    card: int
    ease: int
    remaining: int


class NoteUpdated(BaseModel):
    note_id: int
    changed: list[str]  # the fields whose value changed
    tags: list[str] | None = None  # the note's tags now, when given
    change: int  # its journal entry (NoteChange)


# The schema a client is shown for a list of notes (`items`, `notes`): the shape in one
# sentence rather than a schema per key of a note and of its images, which cost about
# 250 tokens in each of three tools on every `tools/list` (issue 54, item 6). Arguments
# are still validated as `NoteInput` (unknown keys, types and bounds named per field).
NOTES_JSON_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "maxItems": 500,
    "items": {"type": "object"},
    "description": (
        "Notes: {fields: {name: HTML}, tags, images: [{image_base64 or image_url, "
        "target_field (Back), filename, max_side (768)}], dedup_key (sent again: no "
        "second note)}, or flat fields; names in any case."
    ),
}
