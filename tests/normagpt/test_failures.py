"""Failures bounded (issue 24, item 3): one time budget per node, unreadable output fails.

All of a node's model attempts share NORMAGPT_NODE_BUDGET: a model trickling its answer
ends the run `failed` within the budget (not 4 attempts x NORMAGPT_LLM_TIMEOUT); output
unreadable after the corrective retry ends it `failed` with a reason (Russian on a Russian page). Timings are
asserted only as generous upper bounds (the suite runs beside CPU hogs).
"""

from __future__ import annotations

import time

import httpx
import pytest
from django.utils import translation

from core.exceptions import UpstreamError
from core.http import Upstream, UpstreamClient
from core.http_shared import UpstreamTransport
from normagpt import services
from normagpt.agent.runner import run_advance
from normagpt.agent.texts import text_shown
from normagpt.client import LlmClient, NodeBudget
from normagpt.exceptions import LLM_SERVICE, LlmUnavailable
from normagpt.models import AgentRun, LlmCall, RunEvent
from tests.normagpt.scripted_llm import (
    CORROSION_STEP,
    COVER_FINDING,
    COVER_STEP,
    plan,
    step,
    verdict,
)
from tests.upstream_servers import answer, never, scripted, trickle

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
SLACK = 10  # seconds past a budget a test allows (scheduling, a loaded machine)


def llm_client(base_url: str, *, timeout: float, budget: float, retries: int = 3) -> LlmClient:
    return LlmClient(
        base_url=f"{base_url}/v1",
        api_key="k",
        model="m",
        timeout=timeout,
        retries=retries,
        backoff=0.01,
        json_mode=False,
        node_budget=budget,
    )


def chat(llm: LlmClient, budget: NodeBudget | None = None) -> str:
    return llm.chat([{"role": "user", "content": "?"}], node="executor", budget=budget).text


def failed_run(question: str = QUESTION) -> tuple[AgentRun, float]:
    """A run advanced as the Celery task does (failing it past the model's errors)."""
    from normagpt.tasks import run_advance_task

    run = services.run_create(question=question)
    started = time.monotonic()
    assert run_advance_task.apply(args=(run.pk,)).get() == "failed"
    took = time.monotonic() - started
    run.refresh_from_db()
    return run, took


# --- the client: every attempt's deadline is cut to what is left of the node's budget ---


def test_the_attempt_deadline_shrinks_to_the_node_s_budget() -> None:
    """Budget 2 s, timeout 30 s, a model that never answers: cut in about 2 s, not 30."""
    with never() as server:
        started = time.monotonic()
        with pytest.raises(LlmUnavailable) as caught:
            chat(llm_client(server.url, timeout=30, budget=2))
        took = time.monotonic() - started
    assert took < 2 + SLACK
    assert "the node's budget of 2 s was spent" in caught.value.message
    assert caught.value.message.startswith("the model server failed for the executor: ")
    assert caught.value.service == LLM_SERVICE


def test_a_trickled_body_is_cut_at_the_budget_not_at_the_timeout() -> None:
    with trickle() as server:
        started = time.monotonic()
        with pytest.raises(LlmUnavailable, match=r"the request timed out after 2 s$"):
            chat(llm_client(server.url, timeout=30, budget=2, retries=0))
        took = time.monotonic() - started
    assert took < 2 + SLACK


def test_no_backoff_sleeps_past_the_budget() -> None:
    """A Retry-After of 30 s with 3 s of budget: no sleep, the error names the budget."""
    busy = answer(429, b'{"error": {"message": "busy"}}', headers={"Retry-After": "30"})
    with scripted([busy]) as server:
        started = time.monotonic()
        with pytest.raises(LlmUnavailable) as caught:
            chat(llm_client(server.url, timeout=30, budget=3))
        took = time.monotonic() - started
        assert len(server.requests) == 1
    assert took < 3 + SLACK
    assert "HTTP 429" in caught.value.message
    assert "the node's budget of 3 s was spent" in caught.value.message


def test_a_spent_budget_starts_no_attempt() -> None:
    """The node's later call (the corrective retry) is not sent once the budget is gone."""
    with never() as server:
        spent = NodeBudget(seconds=5, ends=time.monotonic() - 1)
        with pytest.raises(LlmUnavailable) as caught:
            chat(llm_client(server.url, timeout=30, budget=5), spent)
        assert server.requests == []
    assert caught.value.message == (
        "the model server was not asked for the executor: the node's budget of 5 s was spent"
    )


def test_an_upstream_transport_can_give_one_request_a_shorter_deadline() -> None:
    """core.http: with `timeout_is_deadline` a request's httpx timeout is its total
    deadline (a trickled body included); without it the upstream's deadline stands."""
    with trickle() as server:
        upstream = Upstream(service="Trickle", deadline=2.0)
        with UpstreamClient(upstream) as client:
            for honoured, limit in [(True, "0.5"), (False, "2")]:
                transport = UpstreamTransport(client, timeout_is_deadline=honoured)
                with httpx.Client(transport=transport) as http:
                    with pytest.raises(UpstreamError, match=f"did not answer within {limit} s"):
                        http.get(server.url, timeout=0.5)
                    with pytest.raises(UpstreamError, match="did not answer within 2 s"):
                        http.get(server.url, timeout=60)  # never longer than the upstream's


# --- the agent: the run fails within the budget, with an event and the reason -----------


@pytest.mark.django_db
def test_a_trickling_model_fails_the_run_within_the_node_s_budget(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_NODE_BUDGET = 4
    settings.NORMAGPT_LLM_TIMEOUT = 3
    settings.NORMAGPT_LLM_RETRIES = 3
    llm.play(planner=[{"trickle": 1.0, "content": plan(COVER_STEP)}])
    run, took = failed_run()
    assert run.status == "failed"
    assert took < 4 + SLACK
    assert "the node's budget of 4 s was spent" in run.error
    assert run.events.filter(kind=RunEvent.Kind.FAILED, node="planner").exists()
    assert LlmCall.objects.filter(run=run, ok=False).count() >= 1
    assert not LlmCall.objects.filter(run=run, ok=True).exists()


@pytest.mark.django_db
def test_the_corrective_retry_shares_the_node_s_budget(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    """An unreadable answer that took most of the budget leaves the corrective retry only
    the rest of it: the run fails within the budget, naming it."""
    settings.NORMAGPT_NODE_BUDGET = 3
    settings.NORMAGPT_LLM_TIMEOUT = 5
    llm.play(
        planner=[
            {"sleep": 2, "content": "я не умею JSON"},
            {"sleep": 10, "content": plan(COVER_STEP)},
        ]
    )
    run, took = failed_run()
    assert run.status == "failed"
    assert took < 3 + SLACK
    assert "the node's budget of 3 s was spent" in run.error
    assert run.events.filter(kind=RunEvent.Kind.FAILED).exists()


@pytest.mark.django_db
def test_unreadable_output_twice_fails_the_run_with_a_russian_reason_and_the_findings(  # type: ignore[no-untyped-def]
    corpus, llm
) -> None:
    llm.play(
        planner=[plan(COVER_STEP, CORROSION_STEP)],
        executor=[step(COVER_FINDING), "это не JSON", '{"findings": "нет"}'],
        judge=[verdict("CONTINUE")],
    )
    run = run_advance(run_id=services.run_create(question=QUESTION).pk)
    assert run.status == "failed"
    assert run.error.startswith("the executor's output was invalid twice: ")  # the API's
    with translation.override("ru"):  # and a page's, in Russian
        shown = text_shown(run.error)
    assert shown.startswith("ответ модели для узла «исполнитель» дважды не удалось прочитать: ")
    assert "findings" in run.error  # the validation error of the second answer
    assert llm.count() == {"planner": 1, "executor": 3, "judge": 1}
    event = run.events.get(kind=RunEvent.Kind.FAILED)
    assert (event.node, event.message) == ("executor", run.error)
    assert run.owner == ""
    assert run.finished_at is not None
    assert run.incomplete  # what the first step found is attached, as run_fail does
    assert [s["clause"] for s in run.sources] == ["10.3.2"]
