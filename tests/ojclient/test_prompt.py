"""The daily_challenge_brief prompt leads a scripted model to the daily challenge (issue 16)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from tests.ojclient.conftest import Backend, fixture, server
from tests.prompt_script import follow

TWO_SUM = "Two Sum"

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_brief_prompt_reaches_the_daily_challenge_for_its_date(backend: Backend) -> None:
    backend.reply("/api/v1/daily", fixture("daily_legacy_flat_200.json"))

    async def run() -> tuple[list[str], str, str]:
        async with Client(server(), read_timeout_seconds=30) as client:
            prompt = await client.get_prompt("daily_challenge_brief", {"date": "2026-1-5"})
            text = prompt.messages[0].content.text  # type: ignore[union-attr]
            english = await client.get_prompt("daily_challenge_brief", {"language": "en"})
            seen: list[str] = []

            def decide(tool: str, result: Any, values: dict[str, Any]) -> None:
                seen.append(result.content[0].text)

            called = await follow(client, text, decide)
        return called, seen[0], english.messages[0].content.text  # type: ignore[union-attr]

    called, answer, english = anyio.run(run)
    assert called == ["get_daily_challenge"]
    assert TWO_SUM in answer
    assert backend.requests[0].query == "domain=com&date=2026-01-05"
    assert "one hint, not the solution" in english
