"""`resources/list` offers something to attach (issue 28, item 5): the problems fetched
most recently, the norm documents added most recently and the caller's own runs, newest
first, at most MCP_RESOURCES_LISTED — never another user's run. Through the SDK client."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from mcp import Client

from core.identity import stdio_caller
from core.mcp_server import build_server
from normagpt.models import AgentRun, NormDocument
from problems.models import Problem
from tests.conftest import orm

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]


def seed() -> dict[str, str]:
    now = timezone.now()
    old = Problem.objects.create(
        subject="math", exam="ege", problem_id="27340", type_number="1",
        condition_text="Найдите значение выражения.", fetched_at=now - timedelta(days=2),
    )  # fmt: skip
    new = Problem.objects.create(
        subject="rus", exam="oge", problem_id="1001", condition_text="Укажите номер.",
        fetched_at=now - timedelta(hours=1),
    )  # fmt: skip
    document = NormDocument.objects.create(code="СП 63.13330.2018", title="Бетонные конструкции")
    mine = AgentRun.objects.create(question="Толщина защитного слоя?", user=stdio_caller())  # type: ignore[misc]
    other = get_user_model().objects.create_user("someone-else")
    theirs = AgentRun.objects.create(question="Чужой вопрос", user=other)
    return {
        "old": f"sdamgia://{old.subject}/{old.exam}/problem/{old.problem_id}",
        "new": f"sdamgia://{new.subject}/{new.exam}/problem/{new.problem_id}",
        "document": f"norms://document/{document.pk}",
        "mine": f"normagpt://run/{mine.public_id}",
        "theirs": f"normagpt://run/{theirs.public_id}",
    }


async def test_recent_problems_documents_and_own_runs_are_listed_newest_first() -> None:
    uris = await orm(seed)
    async with Client(build_server(["problems", "normagpt"])) as client:
        listed = (await client.list_resources()).resources
        offered = [str(r.uri) for r in listed]
        assert offered == [uris["mine"], uris["document"], uris["new"], uris["old"]]
        assert uris["theirs"] not in offered
        problem = next(r for r in listed if str(r.uri) == uris["old"])
        assert problem.title == "СДАМ ГИА math EGE №27340, задание 1"
        assert problem.description == "Найдите значение выражения."
        run = await client.read_resource(uris["mine"])
        assert run.contents[0].text.startswith(f"Run {uris['mine'].rsplit('/', 1)[1]} — ")  # type: ignore[union-attr]


async def test_the_list_is_bounded(settings) -> None:  # type: ignore[no-untyped-def]
    settings.MCP_RESOURCES_LISTED = 2
    uris = await orm(seed)
    async with Client(build_server(["problems", "normagpt"])) as client:
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
    assert listed == [uris["mine"], uris["document"]]
