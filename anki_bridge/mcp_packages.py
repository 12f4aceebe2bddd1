"""`anki.export_package` and the `anki://package/{id}` resource (issue 53).

A stdio client needs no web server: a package up to ANKI_PACKAGE_EMBED_MAX bytes comes
embedded in the answer (an `application/apkg` blob), a larger one as a link to the
resource, which any client reads over the same connection.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field, WithJsonSchema

from anki_bridge import packages, problem_cards
from anki_bridge.schemas import NOTES_JSON_SCHEMA, NoteDetail, NoteInput
from core.exceptions import InvalidInput
from core.identity import mcp_caller
from core.links import absolute_url, link_path
from core.registry import ToolRegistry
from core.tooling import file_attach, respond_json

PACKAGE_URI = "anki://package/{id}"


class PackageMade(BaseModel):
    package: str  # its id: the resource anki://package/{id}
    name: str  # the file name to save it under
    deck: str
    notes: int
    cards: int
    media: int
    size: int
    embedded: bool  # the file is in this answer; else read `resource`
    resource: str
    url: str  # the REST download, for programs with the user's token
    expires_at: str
    details: list[NoteDetail] = Field(default_factory=list)  # only notes left out or warned


def register(registry: ToolRegistry) -> None:
    registry.tool(
        name="anki.export_package",
        title="Export an Anki package",
        output_model=PackageMade,
        read_only=False,
        open_world=True,
    )(export_package)
    registry.resource(
        PACKAGE_URI, name="anki_package", title="Anki package", mime_type=packages.MIME
    )(package_resource)


def export_package(
    items: Annotated[
        list[NoteInput | dict[str, Any]] | None,
        Field(max_length=500),
        WithJsonSchema(
            {**NOTES_JSON_SCHEMA, "description": "As anki.add_from_model; or give variant."}
        ),
    ] = None,
    variant: Annotated[
        str | None,
        Field(max_length=32, description="A variant (sdamgia_make_variant): a card per problem."),
    ] = None,
    deck: str | None = None,  # omitted: ANKI_DEFAULT_DECK
    model: Annotated[
        str | None, Field(description="Basic, Cloze…; omitted: ANKI_DEFAULT_MODEL.")
    ] = None,
    ctx: Context | None = None,
) -> CallToolResult:
    """Notes as an .apkg file for AnkiDroid, AnkiMobile or Anki, no running Anki needed.

    Embedded when small, else a resource link.
    """
    user = mcp_caller(ctx)
    if (items is None) == (variant is None):
        raise InvalidInput("give either items or variant", field="items")
    if variant is not None:
        built = problem_cards.variant_package_build(
            user_id=int(user.pk or 0), variant=variant, deck=deck
        )
    else:
        built = packages.package_build(items=items or [], deck=deck, model=model)
    return package_respond(built, packages.package_store(built=built, owner_id=int(user.pk or 0)))


def package_respond(built: packages.BuiltPackage, stored: Any) -> CallToolResult:
    uri = PACKAGE_URI.format(id=stored.public_id)
    embedded = stored.size <= settings.ANKI_PACKAGE_EMBED_MAX
    made = PackageMade(
        package=stored.public_id,
        name=stored.name,
        deck=stored.deck,
        notes=stored.notes,
        cards=stored.cards,
        media=stored.media,
        size=stored.size,
        embedded=embedded,
        resource=uri,
        url=absolute_url(link_path("anki_bridge:package", stored.public_id)),
        expires_at=stored.expires_at.isoformat(timespec="seconds"),
        details=[d for d in built.details if d.status != "ok" or d.warnings],
    )
    return file_attach(
        respond_json(made), data=built.data, uri=uri, mime_type=packages.MIME,
        name=stored.name, embedded=embedded,
    )  # fmt: skip


def package_resource(id: str, caller: AbstractBaseUser) -> bytes:
    """An Anki package of yours (anki.export_package made it): the .apkg file."""
    found = packages.package_get(owner_id=int(caller.pk or 0), public_id=id)
    return packages.package_bytes(found)
