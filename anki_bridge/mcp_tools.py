"""MCP tools of the Anki bridge (contract: seed 002), plus `anki.add_problems`."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import AfterValidator, Field, WithJsonSchema

from anki_bridge import (
    mcp_content,
    mcp_packages,
    problem_cards,
    review,
    scheduling,
    schemas,
    search,
    services,
    takeover,
)
from anki_bridge.schemas import NoteInput, ProblemRef
from core.identity import mcp_caller
from core.registry import ToolRegistry
from core.tooling import respond_json

registry = ToolRegistry(
    app="anki_bridge",
    title="Anki flashcards",
    description=(
        "Flashcards in the user's Anki through AnkiConnect: read a note model, add notes "
        "(with images and deduplication), read notes back, and an external search."
    ),
    on_serve=takeover.notes_takeover_due,  # what a killed server left goes now, in the background
)


Deck = str | None  # omitted: ANKI_DEFAULT_DECK
Model = Annotated[str | None, Field(description="Note type.")]  # omitted: ANKI_DEFAULT_MODEL


ANKI_ID_MAX = 2**63 - 1  # Anki's ids (notes, cards) are 64-bit integers


def _anki_id(value: int) -> int:
    if value > ANKI_ID_MAX:
        raise ValueError(f"an Anki id is at most {ANKI_ID_MAX} (64 bits)")
    return value


# an id checked before Anki sees it (its bound named in the error, not advertised)
AnkiId = Annotated[int, Field(ge=1), AfterValidator(_anki_id)]


@registry.tool(name="greet", title="Greet", read_only=True, open_world=False)
def greet(
    name: Annotated[str, Field(description="The user's name, e.g. «Алиса».", min_length=1)],
) -> str:
    """Test ping: a greeting, to check that the MCP server is connected."""
    return services.greeting_make(name=name)


@registry.tool(
    name="anki.model_info",
    title="Anki model info",
    output_model=schemas.ModelInfo,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def model_info(model: Model = None) -> CallToolResult:
    """A note model's fields (in order), card templates (Front/Back) and CSS; a missing default model is created."""
    structure = services.model_info_get(model=model)
    return respond_json(schemas.ModelInfo.model_validate(structure.as_dict()))


@registry.tool(
    name="anki.decks",
    title="Anki decks",
    output_model=schemas.DeckList,
    read_only=True,
    open_world=True,
)
def decks() -> CallToolResult:
    """The deck tree with today's counts per deck (a parent's include its subdecks')."""
    return respond_json(services.decks_list())


@registry.tool(
    name="anki.stats",
    title="Anki statistics",
    output_model=schemas.DeckStats,
    read_only=True,
    open_world=True,
)
def stats(
    deck: Annotated[
        str | None,
        Field(description="A deck, with its subdecks; default: the whole collection."),
    ] = None,
) -> CallToolResult:
    """Study statistics: cards by state, studied today, retention over 7 and 30 days, due on each of the next 14 days."""
    return respond_json(services.stats_get(deck=deck))


@registry.tool(
    name="anki.add_from_model",
    title="Add notes (fitted to the model)",
    output_model=schemas.AddNotesResult,
    read_only=False,
    open_world=True,
)
def add_from_model(
    items: Annotated[
        list[NoteInput | dict[str, Any]],
        Field(min_length=1, max_length=500),
        WithJsonSchema(schemas.NOTES_JSON_SCHEMA),
    ],
    deck: Deck = None,
    model: Model = None,
    ctx: Context | None = None,
) -> CallToolResult:
    """Add notes fitted to the model's current fields; creates the deck if needed.

    Images (`images[]`, data:image values) are resized and stored as media. Detail status: ok, duplicate, queued (Anki closed: sent when it opens) or error.
    """
    owner = mcp_caller(ctx).pk  # the caller's notes and dedup keys
    return respond_json(
        services.notes_add_from_model(items=items, deck=deck, model=model, owner=owner)
    )


@registry.tool(
    name="anki.note_info",
    title="Read Anki notes",
    output_model=schemas.NoteInfoResult,
    read_only=True,
    open_world=True,
)
def note_info(
    noteIds: Annotated[
        list[AnkiId],
        Field(min_length=1, max_length=500, description="Anki note ids."),
    ],
) -> CallToolResult:
    """Notes by id, in request order (null: no such note): model, deck, tags, fields, cards, their schedules."""
    notes = services.notes_info_get(note_ids=noteIds)
    return respond_json(schemas.NoteInfoResult.model_validate({"notes": notes}))


@registry.tool(
    name="anki.find_notes",
    title="Find Anki notes",
    output_model=schemas.FoundNotes,
    read_only=True,
    open_world=True,
)
def find_notes(
    query: Annotated[
        str,
        Field(
            min_length=1,
            description="Anki search syntax, e.g. 'deck:Физика tag:механика'.",
        ),
    ],
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> CallToolResult:
    """Find notes with an Anki search, oldest first, a page at a time; long fields shortened (and named)."""
    return respond_json(services.notes_find(query=query, limit=limit, offset=offset))


@registry.tool(
    name="anki.delete_notes",
    title="Delete Anki notes",
    output_model=schemas.DeleteNotesResult,
    read_only=False,
    destructive=True,
    idempotent=True,
    open_world=True,
)
def delete_notes(
    note_ids: Annotated[
        list[AnkiId],
        Field(min_length=1, max_length=100),
    ],
    confirm_token: Annotated[
        str | None,
        Field(description="From the first call."),
    ] = None,
    ctx: Context | None = None,
) -> CallToolResult:
    """Delete notes in two steps: the first call deletes nothing, returns the notes and a confirm_token; show them to the user, and only on their yes call again with the token."""
    user = mcp_caller(ctx)
    return respond_json(
        services.notes_delete(note_ids=note_ids, confirm_token=confirm_token, user_id=user.pk)
    )


CardIds = Annotated[list[AnkiId], Field(min_length=1, max_length=500)]


@registry.tool(
    name="anki.reschedule",
    title="Set the due date of Anki cards",
    output_model=schemas.RescheduleResult,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def reschedule(
    card_ids: Annotated[CardIds, Field(description="Card ids (anki.note_info lists them).")],
    days: Annotated[int, Field(ge=0, le=36500, description="Due in this many days; 0: today.")],
) -> CallToolResult:
    """Set cards due in a number of days, as Anki's «Set due date» does (new cards become review cards)."""
    return respond_json(services.cards_reschedule(card_ids=card_ids, days=days))


@registry.tool(
    name="anki.suspend",
    title="Suspend Anki cards",
    output_model=schemas.CardsChanged,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def suspend(card_ids: CardIds) -> CallToolResult:
    """Suspend cards: no reviews until unsuspended."""
    return respond_json(scheduling.cards_suspend(card_ids=card_ids))


@registry.tool(
    name="anki.unsuspend",
    title="Unsuspend Anki cards",
    output_model=schemas.CardsChanged,
    shape_of="anki.suspend",
    read_only=False,
    idempotent=True,
    open_world=True,
)
def unsuspend(card_ids: CardIds) -> CallToolResult:
    """Unsuspend cards; the result as anki.suspend gives it."""
    return respond_json(scheduling.cards_unsuspend(card_ids=card_ids))


@registry.tool(
    name="anki.forget",
    title="Forget Anki cards",
    output_model=schemas.CardsChanged,
    shape_of="anki.suspend",
    read_only=False,
    destructive=True,
    idempotent=True,
    open_world=True,
)
def forget(card_ids: CardIds) -> CallToolResult:
    """Reset cards to new (Anki's «Forget»); the result as anki.suspend gives it."""
    return respond_json(scheduling.cards_forget(card_ids=card_ids))


@registry.tool(
    name="anki.update_note",
    title="Edit an Anki note",
    output_model=schemas.NoteUpdated,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def update_note(
    note_id: AnkiId,
    fields: Annotated[
        dict[str, str] | None,
        Field(description="Field name → new value; names exactly as anki.note_info gives them."),
    ] = None,
    tags: Annotated[list[str] | None, Field(description="All of the note's tags.")] = None,
    ctx: Context | None = None,
) -> CallToolResult:
    """Change fields and/or replace the tags of a note, read back to check."""
    user = mcp_caller(ctx)
    return respond_json(
        services.note_update(note_id=note_id, fields=fields, tags=tags, user_id=user.pk)
    )


Session = Annotated[str, Field(description="From anki.review_start.")]
Card = AnkiId


@registry.tool(
    name="anki.review_start",
    title="Start an Anki review",
    output_model=schemas.ReviewStarted,
    read_only=False,
    open_world=True,
)
def review_start(
    deck: Annotated[str, Field(min_length=1, description="The deck (its subdecks too).")],
    include_new: Annotated[
        bool, Field(description="New cards too, as the deck's options allow.")
    ] = False,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    ctx: Context | None = None,
) -> CallToolResult:
    """Review a deck in Anki's order. Loop: review_next, the learner answers, review_reveal, review_rate."""
    user = mcp_caller(ctx)
    return respond_json(
        review.session_start(user=user, deck=deck, include_new=include_new, limit=limit)
    )


@registry.tool(
    name="anki.review_next",
    title="Next card to review",
    output_model=schemas.ReviewCardOut,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def review_next(session: Session, ctx: Context | None = None) -> CallToolResult:
    """The card to show, front only: ask the learner before revealing. done: none left."""
    seen = review.card_next_seen(user=mcp_caller(ctx), session=session)
    return respond_json(seen.shown, [(image.data, image.mime_type) for image in seen.images])


@registry.tool(
    name="anki.review_reveal",
    title="Reveal the answer",
    output_model=schemas.ReviewRevealed,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def review_reveal(session: Session, card: Card, ctx: Context | None = None) -> CallToolResult:
    """The back of the card shown, once the learner answered, and each rating's next interval."""
    seen = review.card_reveal_seen(user=mcp_caller(ctx), session=session, card=card)
    return respond_json(seen.shown, [(image.data, image.mime_type) for image in seen.images])


@registry.tool(
    name="anki.review_rate",
    title="Rate a reviewed card",
    output_model=schemas.ReviewRated,
    read_only=False,
    open_world=True,
)
def review_rate(
    session: Session,
    card: Card,
    ease: Annotated[
        int, Field(strict=True, ge=1, le=4, description="1 again, 2 hard, 3 good, 4 easy.")
    ],
    ctx: Context | None = None,
) -> CallToolResult:
    """Rate a revealed card once, through Anki's scheduler."""
    user = mcp_caller(ctx)
    return respond_json(review.card_rate(user=user, session=session, card=card, ease=ease))


@registry.tool(
    name="anki.add_notes",
    title="Add notes (exact fields)",
    output_model=schemas.AddNotesResult,
    shape_of="anki.add_from_model",
    read_only=False,
    open_world=True,
)
def add_notes(
    notes: Annotated[
        list[NoteInput],
        Field(min_length=1, max_length=500),
        WithJsonSchema(
            {
                **schemas.NOTES_JSON_SCHEMA,
                "description": "As anki.add_from_model's items; field names must match the model.",
            }
        ),
    ],
    deck: Deck = None,
    model: Model = None,
    ctx: Context | None = None,
) -> CallToolResult:
    """Low-level add: fields sent as given (names must match the model); no model lookup, no deck creation.

    An image target_field that is no field of the note fails the call. The result as anki.add_from_model gives it.
    """
    owner = mcp_caller(ctx).pk
    return respond_json(services.notes_add(notes=notes, deck=deck, model=model, owner=owner))


@registry.tool(
    name="search",
    title="External search",
    output_model=schemas.SearchResponse,
    read_only=True,
    open_world=True,
)
def search_tool(
    query: Annotated[str, Field(min_length=1, max_length=2000, description="What to search for.")],
    limit: Annotated[
        int | None, Field(ge=1, le=100, description="Results per page (optional).")
    ] = None,
    cursor: Annotated[
        str | None,
        Field(max_length=2000, description="nextCursor of the previous page, passed as is."),
    ] = None,
) -> CallToolResult:
    """Search the configured external service; nextCursor pages on."""
    return respond_json(search.search_run(query=query, limit=limit, cursor=cursor))


@registry.tool(
    name="anki.add_problems",
    title="СДАМ ГИА problems → Anki",
    output_model=schemas.AddNotesResult,
    shape_of="anki.add_from_model",
    read_only=False,
    idempotent=True,
    open_world=True,
)
def add_problems(
    problems: Annotated[
        list[ProblemRef],
        Field(min_length=1, max_length=50),
        WithJsonSchema(
            {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {"type": "object"},
                "description": "{subject, exam (ege or oge), id}, e.g. "
                "{subject: 'math', exam: 'ege', id: '27340'}.",
            }
        ),
    ],
    deck: Deck = None,
    tags: Annotated[list[str], Field(max_length=20, description="Extra tags.")] = [],  # noqa: B006
    ctx: Context | None = None,
) -> CallToolResult:
    """Make flashcards from СДАМ ГИА problems in the model «Поля для ChatGPT».

    Prompt: condition, figures; Response: answer, solution; Context; Sources: URL. The result as anki.add_from_model gives it.
    """
    owner = mcp_caller(ctx).pk
    return respond_json(
        problem_cards.problems_add(problems=problems, deck=deck, tags=tags, owner=owner)
    )


mcp_content.register(registry)  # before the packages: the resources keep their order
mcp_packages.register(registry)

# Any Anki call of a server that runs on looks for what a dead sender left (throttled).
registry.specs[:] = [
    replace(spec, fn=takeover.taking_over(spec.fn)) if spec.name.startswith("anki.") else spec
    for spec in registry.specs
]
registry.resources[:] = [
    replace(spec, fn=takeover.taking_over(spec.fn)) for spec in registry.resources
]
