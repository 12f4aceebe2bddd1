"""Issue 31, asking back: the judge asks the asker, the run waits holding no worker, and a
reply (in process, over REST, on the run's page, over MCP or by MCP elicitation) resumes it
from its checkpoint with the answer in context; no finished node runs again. A question
left unanswered past NORMAGPT_INPUT_TIMEOUT ends the run with what it found, saying so."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.test import Client as PageClient
from django.utils import timezone
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestParams, ElicitResult

from core import background
from core.exceptions import InvalidInput
from core.mcp_server import build_server
from normagpt import formatting, services
from normagpt.agent.runner import run_advance
from normagpt.exceptions import RunNotAwaitingInput, RunNotResumable, RunNotYours
from normagpt.models import AgentRun, RunEvent
from tests.conftest import orm, text_of
from tests.normagpt.scripted_llm import (
    ANSWER,
    COVER_FINDING,
    COVER_STEP,
    final,
    plan,
    step,
    verdict,
)
from tests.normagpt.test_web import api

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
ASKED = "В какой среде эксплуатируется плита: сухое помещение или агрессивная среда?"
REPLY = "Сухое отапливаемое помещение, нормальная влажность."


def ask_verdict() -> str:
    return json.dumps(
        {"decision": "ASK", "reason": "Толщина зависит от среды.", "questions": [ASKED]},
        ensure_ascii=False,
    )


def asking_script() -> dict[str, list[str]]:
    return {
        "planner": [plan(COVER_STEP)],
        "executor": [step(COVER_FINDING)],
        "judge": [ask_verdict(), verdict("FINALIZE")],
        "finalizer": [final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    }


def nodes(run: AgentRun) -> list[str]:
    return [f"{s.node}:{s.decision}" if s.decision else s.node for s in run.steps.order_by("index")]


def prompt_of(llm, node: str, index: int = -1) -> str:  # type: ignore[no-untyped-def]
    return [c for c in llm.calls if c.node == node][index].messages[1]["content"]


def heartbeats(run: AgentRun) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == f"run-{run.pk}-heartbeat"]


@pytest.mark.django_db
def test_a_run_asks_waits_holding_nothing_and_goes_on_from_its_checkpoint(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**asking_script())
    run = run_advance(run_id=services.run_create(question=QUESTION).pk)
    assert run.status == "awaiting_input"
    assert run.questions == [ASKED]
    assert run.asked_at is not None
    assert (run.owner, heartbeats(run)) == ("", [])  # no lease, no thread: nothing holds it
    assert nodes(run) == ["planner", "executor", "judge:ASK"]
    shown = formatting.run_as_dict(run)
    assert (shown["status"], shown["clarifying_questions"]) == ("awaiting_input", [ASKED])
    text = formatting.run_markdown(run)
    assert ASKED in text
    assert f'normagpt_reply(run_id="{run.public_id}", answer=...)' in text

    with pytest.raises(InvalidInput) as empty:
        services.run_reply(run_id=run.pk, answer="   ", user=None)
    assert empty.value.field == "answer"
    with pytest.raises(RunNotResumable):  # a question is answered, not reviewed
        services.run_resume(run_id=run.pk, note="Сухо.")

    replied = services.run_reply(run_id=run.pk, answer=f"  {REPLY} ", user=None)
    assert (replied.status, replied.next_node, replied.questions) == ("running", "judge", [])
    run = run_advance(run_id=run.pk)
    assert run.status == "completed", run.error
    assert not run.incomplete
    assert nodes(run) == ["planner", "executor", "judge:ASK", "judge:FINALIZE", "finalizer"]
    # the planner and the executor ran once: nothing finished before the question ran again
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 2, "finalizer": 1}
    assert REPLY in prompt_of(llm, "judge")
    assert ASKED in prompt_of(llm, "judge")
    assert REPLY not in prompt_of(llm, "judge", 0)
    assert REPLY in prompt_of(llm, "finalizer")
    assert run.shared["clarifications"] == [{"questions": [ASKED], "answer": REPLY}]
    assert ASKED not in run.answer["clarifying_questions"]  # answered: no longer open
    with pytest.raises(RunNotAwaitingInput):
        services.run_reply(run_id=run.pk, answer="ещё", user=None)


@pytest.mark.django_db
def test_ask_without_questions_is_asked_again_as_invalid_output(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    bare_ask = json.dumps({"decision": "ASK", "reason": "Неясно."}, ensure_ascii=False)
    script = asking_script()
    script["judge"] = [bare_ask, ask_verdict()]
    llm.play(**script)
    run = run_advance(run_id=services.run_create(question=QUESTION).pk)
    assert run.status == "awaiting_input"
    assert llm.count()["judge"] == 2  # the corrective retry named what was missing
    retry = [c for c in llm.calls if c.node == "judge"][-1].messages
    assert "decision ASK needs questions" in json.dumps(retry, ensure_ascii=False)


@pytest.mark.django_db(transaction=True)
def test_a_question_left_unanswered_ends_the_run_with_what_was_found(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_INPUT_TIMEOUT = 60
    llm.play(**asking_script())
    run = run_advance(run_id=services.run_create(question=QUESTION).pk)
    assert run.status == "awaiting_input"
    assert services.runs_recover() == []  # within the timeout: it waits
    assert AgentRun.objects.get(pk=run.pk).status == "awaiting_input"
    AgentRun.objects.filter(pk=run.pk).update(asked_at=timezone.now() - timedelta(seconds=61))
    services.runs_recover()  # the sweeper's turn: the run answers with what it has
    assert background.drain(timeout=30)
    run = AgentRun.objects.get(pk=run.pk)
    assert run.status == "completed", run.error
    assert run.incomplete
    assert "no reply to the run's questions within 60 s" in run.incomplete_reason
    assert run.answer["clarifying_questions"][0] == ASKED  # still open, said with the answer
    assert run.final_answer
    assert nodes(run) == ["planner", "executor", "judge:ASK", "finalizer"]
    assert RunEvent.objects.filter(run=run, kind="cap", message__contains="no reply").exists()
    with pytest.raises(RunNotAwaitingInput):  # too late
        services.run_reply(run_id=run.pk, answer=REPLY, user=None)


@pytest.mark.django_db(transaction=True)
def test_the_owner_replies_over_rest_and_others_cannot(corpus, llm, user, staff) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    other = get_user_model().objects.create_user("other", password="x")
    llm.play(**asking_script())
    created = api(user).post("/api/normagpt/runs/", {"question": QUESTION}, format="json")
    run_id = created.json()["run_id"]
    assert background.drain(timeout=30)  # no broker: the run worked on this process's pool
    url = f"/api/normagpt/runs/{run_id}/"
    waiting = api(user).get(url).json()
    assert (waiting["status"], waiting["clarifying_questions"]) == ("awaiting_input", [ASKED])
    listed = api(user).get("/api/normagpt/runs/?status=awaiting_input").json()["runs"]
    assert [r["run_id"] for r in listed] == [run_id]

    reply = f"{url}reply/"
    assert api(other).post(reply, {"answer": REPLY}, format="json").status_code == 404
    blank = api(user).post(reply, {"answer": ""}, format="json")
    assert blank.status_code == 400
    assert blank.json()["code"] == "invalid_input"
    assert "answer" in json.dumps(blank.json())
    accepted = api(user).post(reply, {"answer": REPLY}, format="json")
    assert accepted.status_code == 202, accepted.content
    assert accepted.json()["status"] == "running"
    assert background.drain(timeout=30)
    done = api(user).get(url).json()
    assert done["status"] == "completed"
    assert done["answer"] == ANSWER
    assert [s["node"] for s in done["steps"]] == [
        "planner", "executor", "judge", "judge", "finalizer",
    ]  # fmt: skip
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 2, "finalizer": 1}
    again = api(user).post(reply, {"answer": REPLY}, format="json")
    assert again.status_code == 409
    assert again.json()["code"] == "run_not_awaiting_input"


@pytest.mark.django_db(transaction=True)
def test_the_run_page_shows_the_questions_and_takes_the_reply(client, user, corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**asking_script())
    run = services.run_create(question=QUESTION, user=user)
    assert background.drain(timeout=30)
    client.force_login(user)
    page = client.get(f"/normagpt/runs/{run.public_id}/").content.decode()
    assert 'id="questions"' in page
    assert ASKED in page
    assert f'action="/normagpt/runs/{run.public_id}/reply/"' in page
    empty = client.post(f"/normagpt/runs/{run.public_id}/reply/", {"answer": " "}, follow=True)
    assert 'role="alert"' in empty.content.decode()
    assert AgentRun.objects.get(pk=run.pk).status == "awaiting_input"
    sent = client.post(f"/normagpt/runs/{run.public_id}/reply/", {"answer": REPLY})
    assert sent.status_code == 302
    assert background.drain(timeout=30)
    page = client.get(f"/normagpt/runs/{run.public_id}/").content.decode()
    assert 'id="questions"' not in page
    assert 'id="clarifications"' in page
    assert REPLY in page
    assert "Не менее 20 мм" in page  # the answer
    assert AgentRun.objects.get(pk=run.pk).status == "completed"


def mcp_client(**kwargs) -> Client:  # type: ignore[no-untyped-def]
    return Client(build_server(["normagpt"]), read_timeout_seconds=60, **kwargs)


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_over_mcp_the_run_asks_and_normagpt_reply_resumes_it(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**asking_script())
    async with mcp_client() as c:
        asked = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 30})
        data = asked.structured_content
        assert data is not None, text_of(asked)
        assert (data["status"], data["clarifying_questions"]) == ("awaiting_input", [ASKED])
        assert ASKED in text_of(asked)
        run_id = data["run_id"]
        assert f'normagpt_reply(run_id="{run_id}"' in text_of(asked)
        blank = await c.call_tool("normagpt_reply", {"run_id": run_id, "answer": ""})
        replied = await c.call_tool(
            "normagpt_reply", {"run_id": run_id, "answer": REPLY, "wait_seconds": 30}
        )
        again = await c.call_tool("normagpt_reply", {"run_id": run_id, "answer": REPLY})
    assert blank.is_error
    assert "answer" in text_of(blank)
    assert not replied.is_error, text_of(replied)
    assert replied.structured_content["status"] == "completed"  # type: ignore[index]
    assert ANSWER in text_of(replied)
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 2, "finalizer": 1}
    assert REPLY in prompt_of(llm, "judge")
    assert again.is_error
    assert "only a run that asked you a question" in text_of(again)


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_a_client_that_can_ask_its_user_answers_within_the_same_call(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**asking_script())
    asked: list[str] = []

    async def user_answers(
        context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"answer": REPLY})

    # a client on the initialize handshake (2025-11-25): the server may ask it mid-call
    async with mcp_client(elicitation_callback=user_answers, mode="legacy") as c:
        result = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 30})
    assert not result.is_error, text_of(result)
    assert result.structured_content["status"] == "completed", text_of(result)  # type: ignore[index]
    [message] = asked
    assert ASKED in message
    assert QUESTION in message
    assert REPLY in prompt_of(llm, "judge")
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 2, "finalizer": 1}


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("mode", "action"),
    [("legacy", "decline"), ("legacy", "cancel"), ("auto", "accept")],
    ids=["declined", "cancelled", "no-mid-call-requests-on-2026-07-28"],
)
async def test_unasked_or_unanswered_the_run_waits_for_normagpt_reply(  # type: ignore[no-untyped-def]
    corpus, llm, mode, action
) -> None:
    llm.play(**asking_script())
    asked: list[str] = []

    async def user(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        content = {"answer": REPLY} if action == "accept" else None
        return ElicitResult(action=action, content=content)

    async with mcp_client(elicitation_callback=user, mode=mode) as c:
        result = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 30})
    assert not result.is_error, text_of(result)
    assert result.structured_content["status"] == "awaiting_input", text_of(result)  # type: ignore[index]
    assert "normagpt_reply" in text_of(result)
    assert len(asked) == (mode == "legacy")


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_an_elicited_answer_holding_a_nul_is_refused_naming_it(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    """The client's elicited answer is no tool argument, yet it meets the same text rule:
    refused naming `answer`, the run still waiting, nothing of it stored."""
    llm.play(**asking_script())

    async def user(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": "ОТВЕТ_ДАН\u0000"})

    async with mcp_client(elicitation_callback=user, mode="legacy") as c:
        result = await c.call_tool("normagpt_ask", {"question": QUESTION, "wait_seconds": 30})
    assert result.is_error
    assert "answer: text contains a NUL character" in text_of(result)
    run = await orm(lambda: AgentRun.objects.get())
    assert run.status == "awaiting_input"
    assert "ОТВЕТ_ДАН" not in json.dumps(run.shared, ensure_ascii=False)


@pytest.mark.django_db
def test_the_judge_asks_at_most_max_asks_times_then_answers(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_MAX_ASKS = 1
    script = asking_script()
    script["judge"] = [ask_verdict(), ask_verdict()]  # it would ask again after the reply
    llm.play(**script)
    run = run_advance(run_id=services.run_create(question=QUESTION).pk)
    services.run_reply(run_id=run.pk, answer=REPLY, user=None)
    run = run_advance(run_id=run.pk)
    assert run.status == "completed", run.error
    assert nodes(run) == ["planner", "executor", "judge:ASK", "judge:FINALIZE", "finalizer"]


def test_a_verdict_without_questions_or_with_too_many_is_read() -> None:
    from normagpt.schemas import Verdict

    none = Verdict.model_validate({"decision": "FINALIZE", "reason": "ok", "questions": None})
    assert none.questions == []
    many = Verdict.model_validate(
        {"decision": "ASK", "reason": "?", "questions": ["1?", "2?", "3?", "4?"]}
    )
    assert many.questions == ["1?", "2?", "3?"]


def waiting_run(owner) -> AgentRun:  # type: ignore[no-untyped-def]
    """A run of `owner` waiting for its asker's reply (no model needed)."""
    return AgentRun.objects.create(
        question=QUESTION,
        user=owner,
        status=AgentRun.Status.AWAITING_INPUT,
        questions=[ASKED],
        asked_at=timezone.now(),
        shared={"user_query": QUESTION, "execution_history": []},
        next_node="judge",
    )


@pytest.mark.django_db
def test_only_the_owner_replies_staff_included_over_rest_and_the_page(user, staff) -> None:  # type: ignore[no-untyped-def]
    """Issue 54, item 4: the questions are the asker's; staff may read the run, not answer."""
    run = waiting_run(user)
    refused = api(staff).post(
        f"/api/normagpt/runs/{run.public_id}/reply/", {"answer": REPLY}, format="json"
    )
    assert refused.status_code == 403, refused.content
    assert refused.json()["code"] == "run_not_yours"
    assert "only its owner" in refused.json()["message"]
    with pytest.raises(RunNotYours):
        services.run_reply(run_id=run.pk, answer=REPLY, user=staff)
    client = PageClient()
    client.force_login(staff)
    page = client.get(f"/normagpt/runs/{run.public_id}/").content.decode()
    assert ASKED in page  # staff see the questions
    assert 'id="questions"' not in page  # and no form to answer them
    assert "ответить может только он" in page
    posted = client.post(f"/normagpt/runs/{run.public_id}/reply/", {"answer": REPLY}, follow=True)
    assert "only its owner answers its questions" in posted.content.decode()
    assert AgentRun.objects.get(pk=run.pk).status == "awaiting_input"


@pytest.mark.anyio
@pytest.mark.django_db(transaction=True)
async def test_over_mcp_staff_cannot_answer_another_s_run(settings) -> None:  # type: ignore[no-untyped-def]
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    owner = await sync_to_async(users.create_user)("asker", password="pw-123456")
    await sync_to_async(users.create_superuser)("operator", password="pw-123456")
    settings.MCP_STDIO_USER = "operator"  # the in-process caller: staff, not the owner
    run = await sync_to_async(waiting_run)(owner)
    async with mcp_client() as c:
        seen = await c.call_tool("normagpt_get_run", {"run_id": run.public_id})
        refused = await c.call_tool(
            "normagpt_reply", {"run_id": run.public_id, "answer": REPLY, "wait_seconds": 0}
        )
    assert not seen.is_error  # staff read it
    assert refused.is_error
    assert "only its owner answers its questions" in text_of(refused)
    status = await sync_to_async(lambda: AgentRun.objects.get(pk=run.pk).status)()
    assert status == "awaiting_input"
