"""Issue 31, threads: a follow-up is asked in its thread with the earlier questions, answers
and sources as context (bounded in tokens, newest first), over the pages, REST and MCP; the
thread's page shows the conversation; threads are their user's."""

from __future__ import annotations

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from mcp import Client

from core import background
from core.mcp_server import build_server
from normagpt import services, threads
from normagpt.agent.runner import run_advance
from normagpt.exceptions import ThreadNotFound
from normagpt.models import AgentRun, Thread
from tests.conftest import text_of
from tests.normagpt.scripted_llm import ANSWER, COVER_FINDING, COVER_STEP, final, plan, step
from tests.normagpt.scripted_llm import verdict as judged
from tests.normagpt.test_web import api

FIRST = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
FOLLOW_UP = "А для фундамента?"


def script() -> dict[str, list[str]]:
    return {
        "planner": [plan(COVER_STEP)],
        "executor": [step(COVER_FINDING)],
        "judge": [judged("FINALIZE")],
        "finalizer": [final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    }


def planner_prompts(llm) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.messages[1]["content"] for c in llm.calls if c.node == "planner"]


@pytest.mark.django_db
def test_a_follow_up_is_given_the_earlier_question_answer_and_sources(corpus, llm, user) -> None:  # type: ignore[no-untyped-def]
    llm.play(**script())
    asked = services.run_create(question=FIRST, user=user, as_of=date(2020, 5, 1))
    first = run_advance(run_id=asked.pk)
    assert first.status == "completed"
    assert first.thread is not None
    assert first.thread.title == FIRST
    assert first.thread.user == user
    follow = services.run_create(question=FOLLOW_UP, user=user, thread=first.thread.public_id)
    assert follow.thread_id == first.thread_id
    assert follow.as_of == date(2020, 5, 1)  # about the same day as the turn before
    run_advance(run_id=follow.pk)
    opening, following = planner_prompts(llm)
    assert "Ранее в этой беседе" not in opening  # a new thread starts from nothing
    for said in (FIRST, ANSWER, "СП 63.13330.2018 п. 10.3.2, стр. 2", f"Новый вопрос: {FOLLOW_UP}"):
        assert said in following, said
    assert following.index(FIRST) < following.index(FOLLOW_UP)
    executor = [c.messages[1]["content"] for c in llm.calls if c.node == "executor"][1]
    assert ANSWER in executor  # every node reads the question with its context
    # a question with no thread starts its own
    other = services.run_create(question=FIRST, user=user)
    assert other.thread_id != first.thread_id
    assert other.as_of is None  # no day given: it follows the calendar, and so do follow-ups
    later = services.run_create(question=FOLLOW_UP, user=user, thread=other.thread.public_id)  # type: ignore[union-attr]
    assert later.as_of is None


@pytest.mark.django_db
def test_another_users_thread_is_not_found_naming_the_field(corpus, llm, user) -> None:  # type: ignore[no-untyped-def]
    llm.play(**script())
    mine = services.run_create(question=FIRST, user=user)
    stranger = get_user_model().objects.create_user("stranger", password="pw-123456")
    for thread in (mine.thread.public_id, "no-such-thread"):  # type: ignore[union-attr]
        with pytest.raises(ThreadNotFound) as refused:
            services.run_create(question=FOLLOW_UP, user=stranger, thread=thread)
        assert refused.value.extra["field"] == "thread"
        assert f"thread {thread} does not exist" in refused.value.message
    assert AgentRun.objects.filter(user=stranger).count() == 0
    assert Thread.objects.filter(user=stranger).count() == 0  # nothing made by a refusal


def test_the_context_keeps_the_newest_turns_within_its_token_budget() -> None:
    earlier = [
        {"run": str(n), "question": f"Вопрос номер {n}?", "answer": "Ответ. " * 40, "sources": []}
        for n in range(10)
    ]
    text = threads.context_text(earlier, budget_tokens=1000)
    assert len(text) <= 1000 * threads.CHARS_PER_TOKEN + 100
    assert "Вопрос номер 9?" in text  # the newest first
    assert "Вопрос номер 0?" not in text
    assert text.index("Вопрос номер 8?") < text.index("Вопрос номер 9?")  # read in order
    one_long = threads.context_text(earlier[-1:], budget_tokens=100)
    assert one_long.startswith("Ранее в этой беседе")
    assert len(one_long) <= 100 * threads.CHARS_PER_TOKEN + 100
    assert threads.context_text([]) == ""


@pytest.mark.django_db(transaction=True)
def test_the_thread_page_shows_both_turns_and_takes_a_follow_up(client, user, corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**script())
    client.force_login(user)
    first = client.post("/normagpt/", {"question": FIRST, "as_of": "2020-05-01"})
    assert first.status_code == 302
    assert background.drain(timeout=30)
    run = AgentRun.objects.get(user=user)
    assert run.as_of == date(2020, 5, 1)
    page = client.get(f"/normagpt/runs/{run.public_id}/").content.decode()
    thread_url = f"/normagpt/threads/{run.thread.public_id}/"  # type: ignore[union-attr]
    assert f'href="{thread_url}"' in page
    asked = client.post(thread_url, {"question": FOLLOW_UP})
    assert asked.status_code == 302
    assert background.drain(timeout=30)
    conversation = client.get(thread_url).content.decode()
    assert conversation.count('class="card turn"') == 2
    assert conversation.index(FIRST) < conversation.index(FOLLOW_UP)
    assert conversation.count("Не менее 20 мм") == 2  # each turn's answer
    assert ANSWER in planner_prompts(llm)[1]
    stranger = get_user_model().objects.create_user("stranger", password="pw-123456")
    client.force_login(stranger)
    assert client.get(thread_url).status_code == 404
    assert client.post(thread_url, {"question": FOLLOW_UP}).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_rest_asks_in_a_thread_and_reads_it_back(corpus, llm, user) -> None:  # type: ignore[no-untyped-def]
    llm.play(**script())
    first = api(user).post("/api/normagpt/runs/", {"question": FIRST}, format="json").json()
    assert background.drain(timeout=30)
    thread = first["thread"]
    assert thread
    follow = api(user).post(
        "/api/normagpt/runs/", {"question": FOLLOW_UP, "thread": thread}, format="json"
    )
    assert follow.status_code == 202, follow.content
    assert follow.json()["thread"] == thread
    assert background.drain(timeout=30)
    read = api(user).get(f"/api/normagpt/threads/{thread}/").json()
    assert [r["question"] for r in read["runs"]] == [FIRST, FOLLOW_UP]
    assert [r["status"] for r in read["runs"]] == ["completed", "completed"]
    assert read["url"] == f"http://127.0.0.1:8000/normagpt/threads/{thread}/"
    listed = api(user).get("/api/normagpt/threads/").json()["threads"]
    assert [t["thread"] for t in listed] == [thread]
    stranger = get_user_model().objects.create_user("stranger", password="pw-123456")
    hidden = api(stranger).get(f"/api/normagpt/threads/{thread}/")
    assert hidden.status_code == 404
    assert hidden.json()["code"] == "thread_not_found"
    refused = api(stranger).post(
        "/api/normagpt/runs/", {"question": FOLLOW_UP, "thread": thread}, format="json"
    )
    assert refused.status_code == 404
    assert refused.json()["extra"]["field"] == "thread"
    assert api(stranger).get("/api/normagpt/threads/").json() == {
        "threads": [],
        "next_offset": None,
    }


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_over_mcp_a_follow_up_names_the_thread_of_the_first_answer(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**script())
    async with Client(build_server(["normagpt"]), read_timeout_seconds=60) as c:
        first = await c.call_tool("normagpt_ask", {"question": FIRST, "wait_seconds": 30})
        thread = first.structured_content["thread"]  # type: ignore[index]
        follow = await c.call_tool(
            "normagpt_ask", {"question": FOLLOW_UP, "thread": thread, "wait_seconds": 30}
        )
        unknown = await c.call_tool("normagpt_ask", {"question": FOLLOW_UP, "thread": "nope"})
    assert follow.structured_content["status"] == "completed", text_of(follow)  # type: ignore[index]
    assert follow.structured_content["thread"] == thread  # type: ignore[index]
    assert ANSWER in planner_prompts(llm)[1]
    assert unknown.is_error
    assert "thread nope does not exist" in text_of(unknown)
