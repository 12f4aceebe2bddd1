"""MCP tools of the Anki bridge (contract: seed 002)."""

from typing import Annotated

from pydantic import Field

from anki_bridge import services
from config.mcp_registry import ToolRegistry

registry = ToolRegistry(
    app="anki_bridge",
    title="Anki flashcards",
    description=(
        "Flashcards in the user's Anki through AnkiConnect: read a note model, add notes "
        "(with images and deduplication), read notes back, and an external search."
    ),
)


@registry.tool(name="greet", title="Greet", read_only=True, open_world=False)
def greet(
    name: Annotated[str, Field(description="The user's name, e.g. «Алиса».", min_length=1)],
) -> str:
    """Test ping: answers with a greeting to check that the MCP server is connected."""
    return services.greeting_make(name=name)
