"""The four normagpt_* tools through the MCP client (in process)."""

from __future__ import annotations

import pytest
from mcp import Client

from core.mcp_server import build_server
from tests.conftest import text_of
from tests.hints import hints
from tests.normagpt.scripted_llm import (
    ANSWER,
    COVER_FINDING,
    COVER_STEP,
    final,
    plan,
    step,
    straight_script,
    verdict,
)

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
TOOLS = {
    "normagpt_ask": {"question", "thread", "as_of", "wait_seconds", "response_format"},
    "normagpt_get_run": {"run_id", "response_format"},
    "normagpt_resume": {"run_id", "note", "decision", "wait_seconds", "response_format"},
    "normagpt_reply": {"run_id", "answer", "wait_seconds", "response_format"},
    "normagpt_search_norms": {
        "keywords",
        "expected_documents",
        "limit",
        "as_of",
        "response_format",
    },
}


def client() -> Client:
    return Client(build_server(["normagpt"]), read_timeout_seconds=60)


async def test_the_five_tools_with_their_parameters_and_hints() -> None:
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == set(TOOLS)
    for name, params in TOOLS.items():
        assert set(tools[name].input_schema["properties"]) == params, name
        assert tools[name].input_schema["additionalProperties"] is False
        if name in ("normagpt_get_run", "normagpt_resume", "normagpt_reply"):  # normagpt_ask's
            assert tools[name].output_schema is None
            assert "as normagpt_ask gives it" in (tools[name].description or "")
        else:
            assert tools[name].output_schema is not None
    read_only_open_world = {n: (hints(t).read_only, hints(t).open_world) for n, t in tools.items()}
    assert read_only_open_world == {
        "normagpt_ask": (False, True),
        "normagpt_get_run": (True, False),
        "normagpt_resume": (False, True),
        "normagpt_reply": (False, True),
        "normagpt_search_norms": (True, False),
    }


@pytest.mark.django_db(transaction=True)
async def test_a_question_told_with_its_story_is_searched_not_refused() -> None:
    """A person's question runs to several sentences (the held-out benchmark's longest: 260
    characters); a keyword was refused past 200. The bound stays, named with its field."""
    story = (
        "Меняем окна в квартире, рабочие говорят, что стеклопакет может потрескаться при "
        "ударе и осколки разлетятся по комнате. Сколько осколков допускается при разрушении "
        "закаленного стекла в квадрате пятьдесят на пятьдесят миллиметров по нормам, если "
        "стекло толщиной четыре миллиметра?"
    )
    assert len(story) > 200
    async with client() as c:
        found = await c.call_tool("normagpt_search_norms", {"keywords": [story]})
        too_long = await c.call_tool("normagpt_search_norms", {"keywords": ["а" * 1001]})
    assert not found.is_error, text_of(found)
    assert found.structured_content["whole_question"] is True
    assert too_long.is_error
    assert "keywords.0: String should have at most 1000 characters" in text_of(too_long)


async def test_a_run_id_s_unadvertised_bound_is_still_checked() -> None:
    async with client() as c:
        too_long = await c.call_tool("normagpt_get_run", {"run_id": "x" * 33})
    assert too_long.is_error
    assert "run_id: String should have at most 32 characters" in text_of(too_long)


async def test_ask_reports_each_node_and_answers_with_sources(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**straight_script())
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with client() as c:
        result = await c.call_tool(
            "normagpt_ask",
            {"question": QUESTION, "wait_seconds": 30},
            progress_callback=on_progress,
        )
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert ANSWER in text
    assert "- СП 63.13330.2018 (действует), п. 10.3.2, стр. 2" in text  # edition named
    assert "Закрытые помещения" in text
    data = result.structured_content
    assert data["status"] == "completed"
    page_link = f"http://127.0.0.1:8000/normagpt/pages/{data['sources'][0]['page_id']}/"
    page_link += "?clause=10.3.2#cited"  # the page, at the cited clause
    assert data["sources"][0]["url"] == page_link  # absolute: the default SITE_URL
    assert f"стр. 2 — {page_link}" in text
    assert [m.split(":")[0] for m in messages if m != "queued"][-4:] == [
        "planner", "executor", "judge → FINALIZE", "finalizer",
    ]  # fmt: skip


async def test_review_then_resume_through_the_tools(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("HUMAN_REVIEW", "Неясен класс среды.")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    async with client() as c:
        asked = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 30})
        run_id = asked.structured_content["run_id"]
        assert asked.structured_content["status"] == "needs_review"
        assert "Неясен класс среды" in text_of(asked)
        assert f'normagpt_resume(run_id="{run_id}"' in text_of(asked)
        resumed = await c.call_tool(
            "normagpt_resume",
            {
                "run_id": run_id,
                "note": "Сухое помещение.",
                "decision": "FINALIZE",
                "wait_seconds": 30,
            },
        )
        again = await c.call_tool("normagpt_resume", {"run_id": run_id, "note": "ещё"})
        fetched = await c.call_tool(
            "normagpt_get_run", {"run_id": run_id, "response_format": "json"}
        )
    assert resumed.structured_content["status"] == "completed"
    assert ANSWER in text_of(resumed)
    assert again.is_error
    assert "only a run waiting for review can be resumed" in text_of(again)
    assert '"status": "completed"' in text_of(fetched)
    assert [s["node"] for s in fetched.structured_content["steps"]] == [
        "planner", "executor", "judge", "finalizer",
    ]  # fmt: skip


async def test_errors_reach_the_model(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    async with client() as c:
        missing = await c.call_tool("normagpt_get_run", {"run_id": 99999})
        bad = await c.call_tool("normagpt_resume", {"run_id": 1, "note": "x", "decision": "MAYBE"})
        short = await c.call_tool("normagpt_ask", {"question": "?"})
        nothing = await c.call_tool("normagpt_search_norms", {"keywords": ["и", "в"]})
    assert missing.is_error
    assert "run 99999 does not exist" in text_of(missing)
    assert bad.is_error
    assert "decision" in text_of(bad)
    assert short.is_error
    assert "question" in text_of(short)
    assert nothing.is_error
    assert "keywords hold no searchable word" in text_of(nothing)


async def test_an_unconfigured_model_refuses_the_question_naming_the_setting(
    corpus, settings
) -> None:  # type: ignore[no-untyped-def]
    """No run is made that could only fail (issue 28); tests/normagpt/test_not_configured.py
    checks that none is stored."""
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    async with client() as c:
        result = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 20})
    assert result.is_error
    assert "OPENAI_BASE_URL" in text_of(result)
    assert "OPENAI_API_KEY" in text_of(result)


async def test_search_norms_ranks_expected_documents_first_and_marks_replaced(
    corpus, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.SITE_URL = "https://norms.example.org/hub/"
    async with client() as c:
        result = await c.call_tool(
            "normagpt_search_norms",
            {
                "keywords": ["защитный слой бетона"],
                "expected_documents": ["СНиП 52-01"],
                "limit": 5,
            },
        )
    assert not result.is_error, text_of(result)
    hits = result.structured_content["hits"]
    assert hits[0]["document"] == "СНиП 52-01-2003"
    assert hits[0]["replaced"] is True
    assert hits[0]["replaced_by"] == "СП 63.13330.2018"
    site = "https://norms.example.org/hub"
    assert hits[0]["image_url"] == f"{site}/normagpt/pages/{hits[0]['page_id']}/image/"
    links = [line.strip() for line in text_of(result).splitlines() if "://" in line]
    assert links == [f"{site}/normagpt/pages/{hit['page_id']}/" for hit in hits]  # each its own
    assert "(REPLACED by СП 63.13330.2018)" in text_of(result)
    assert {h["document"] for h in hits[1:]} >= {"СП 63.13330.2018"}
    assert "7.3.1" in hits[0]["clauses"]


async def test_looking_at_a_run_whose_worker_died_never_starts_it_the_sweep_does(
    corpus, llm, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    import anyio
    from asgiref.sync import sync_to_async
    from django.db import connection
    from django.utils import timezone

    from core import background
    from core.identity import stdio_caller
    from normagpt import services
    from normagpt.models import AgentRun

    llm.play(**straight_script())
    dead = timezone.now() - timedelta(hours=1)

    def orphan() -> AgentRun:
        with monkeypatch.context() as patch:
            patch.setattr(background, "start", lambda *args, **kwargs: None)  # never started
            run = services.run_create(question=QUESTION, user=stdio_caller())
        AgentRun.objects.filter(pk=run.pk).update(
            status="running", owner="dead-worker", heartbeat_at=dead
        )
        connection.close()  # this executor thread outlives the test
        return run

    def row(run_id: int) -> tuple[str, str, object]:
        try:
            return AgentRun.objects.values_list("status", "owner", "heartbeat_at").get(pk=run_id)
        finally:
            connection.close()

    def sweep() -> list[int]:
        try:
            return services.runs_recover()
        finally:
            connection.close()

    run = await sync_to_async(orphan)()
    async with client() as c:
        for _ in range(3):  # reads never write: the run is left as it was
            looked = await c.call_tool("normagpt_get_run", {"run_id": run.public_id})
            assert looked.structured_content["status"] == "running"
        assert await sync_to_async(row)(run.pk) == ("running", "dead-worker", dead)
        assert llm.count() == {}
        assert await sync_to_async(sweep)() == [run.pk]  # what every sweeper thread does
        for _ in range(100):
            result = await c.call_tool("normagpt_get_run", {"run_id": run.public_id})
            if result.structured_content["status"] != "running":
                break
            await anyio.sleep(0.1)
    assert result.structured_content["status"] == "completed"
    assert ANSWER in text_of(result)
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 1, "finalizer": 1}


def test_links_by_whole_number_ids_are_the_reversed_paths() -> None:
    """The pattern reversed once per URLconf gives what `reverse` gives, for any id."""
    from django.urls import reverse

    from normagpt.formatting import url_or_none

    for name in ("normagpt:page", "normagpt:page-image"):
        for pk in (1, 7, 7_000_000_001, 123456789012):
            assert url_or_none(name, pk) == reverse(name, args=[pk])
    assert url_or_none("normagpt:no-such-page", 3) is None
