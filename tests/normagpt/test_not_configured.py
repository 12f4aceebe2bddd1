"""A question asked with no language model set is refused with the settings to set, and no
run is made that could only fail (issue 28: `normagpt_ask` made a failed run)."""

from __future__ import annotations

import pytest
from mcp import Client

from core.mcp_server import build_server
from normagpt.models import AgentRun
from tests.conftest import orm, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"


async def test_normagpt_ask_without_a_model_names_the_settings_and_makes_no_run(settings) -> None:  # type: ignore[no-untyped-def]
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""
    async with Client(build_server(["normagpt"])) as client:
        result = await client.call_tool("normagpt_ask", {"question": QUESTION})
    assert result.is_error
    assert "the language model is not configured: set OPENAI_BASE_URL" in text_of(result)
    assert await orm(AgentRun.objects.count) == 0
