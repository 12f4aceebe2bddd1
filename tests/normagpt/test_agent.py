"""The agent loop against the scripted model: the judge's four decisions, repairs, caps, faults."""

from __future__ import annotations

import json

import pytest

from core.exceptions import InvalidInput
from normagpt import formatting, services
from normagpt.agent.runner import run_advance
from normagpt.exceptions import LlmUnavailable, RunNotFound, RunNotResumable
from normagpt.models import AgentRun, AgentStep, LlmCall
from tests.normagpt.scripted_llm import (
    ANSWER,
    CORROSION_STEP,
    COVER_FINDING,
    COVER_STEP,
    final,
    plan,
    step,
    straight_script,
    verdict,
)

pytestmark = pytest.mark.django_db

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"


def ask() -> AgentRun:
    run = services.run_create(question=QUESTION)
    return run_advance(run_id=run.pk)


def nodes(run: AgentRun) -> list[str]:
    return [f"{s.node}:{s.decision}" if s.decision else s.node for s in run.steps.order_by("index")]


def test_straight_to_finalize_answers_with_checked_sources(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**straight_script())
    run = ask()
    assert run.status == "completed"
    assert not run.incomplete
    assert nodes(run) == ["planner", "executor", "judge:FINALIZE", "finalizer"]
    assert run.final_answer == ANSWER
    [source] = run.sources
    page = corpus[0].pages.get(number=2)
    assert source == {
        "document": "СП 63.13330.2018",
        "clause": "10.3.2",
        "page": 2,
        "page_id": page.pk,
        "edition": "действует",  # the edition's status on the run's day (no dates known)
        "amendment": "",  # no amendment changed the clause
    }
    assert run.answer["conditions"] == ["Закрытые помещения, нормальная влажность"]
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 1, "finalizer": 1}
    # tokens of every call recorded, on the run and per call
    assert run.llm_calls == 4
    assert run.tokens == 4 * 120
    assert LlmCall.objects.filter(run=run, ok=True).count() == 4
    assert float(run.cost_estimate) > 0
    # the executor read the page text of the search hits, expected document first
    executor_prompt = next(c for c in llm.calls if c.node == "executor").messages[1]["content"]
    assert "10.3.2 Минимальная толщина защитного слоя" in executor_prompt
    assert executor_prompt.index("СП 63.13330.2018") < executor_prompt.index("СП 28.13330.2017")
    store = run.shared
    assert store["status"] == "completed"
    assert store["plan"]["current_step_index"] == 1
    assert set(store) >= {
        "user_query",
        "plan",
        "scratchpad",
        "execution_history",
        "step_results",
        "final_answer",
    }


def test_continue_then_finalize_runs_the_second_step(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(COVER_STEP, CORROSION_STEP)],
        executor=[
            step(COVER_FINDING),
            step(("СП 28.13330.2017", "5.5.1", 1, "увеличивают не менее чем на 5 мм")),
        ],
        judge=[verdict("CONTINUE", "Нужна агрессивная среда."), verdict("FINALIZE")],
        finalizer=[
            final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2), ("СП 28.13330.2017", "5.5.1", 1))
        ],
    )
    run = ask()
    assert nodes(run) == [
        "planner", "executor", "judge:CONTINUE", "executor", "judge:FINALIZE", "finalizer",
    ]  # fmt: skip
    assert [s["document"] for s in run.sources] == ["СП 63.13330.2018", "СП 28.13330.2017"]
    assert llm.count() == {"planner": 1, "executor": 2, "judge": 2, "finalizer": 1}
    second = [c for c in llm.calls if c.node == "executor"][1].messages[1]["content"]
    assert "5.5.1 В слабоагрессивной среде" in second


def test_replan_makes_a_new_plan_that_knows_the_failed_one(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(("Ищем не то", ["кирпичная кладка"], [])), plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("REPLAN", "Поиск не нашёл ничего о бетоне."), verdict("FINALIZE")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    run = ask()
    assert nodes(run) == [
        "planner", "executor", "judge:REPLAN", "planner", "executor", "judge:FINALIZE", "finalizer",
    ]  # fmt: skip
    # the empty search did not call the model; the second planner saw the judge's reason
    assert llm.count()["executor"] == 1
    second_plan = [c for c in llm.calls if c.node == "planner"][1].messages[1]["content"]
    assert "Поиск не нашёл ничего о бетоне" in second_plan
    assert run.shared["scratchpad"]["replans"] == 1
    assert run.status == "completed"


def test_human_review_waits_then_resumes_with_the_reviewers_note(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("HUMAN_REVIEW", "Неясен класс среды."), verdict("FINALIZE")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    run = ask()
    assert run.status == "needs_review"
    assert run.review_reason == "Неясен класс среды."
    assert llm.count()["finalizer"] == 0
    with pytest.raises(InvalidInput, match="note must not be empty"):
        services.run_resume(run_id=run.pk, note="  ")
    with pytest.raises(InvalidInput, match="no steps left"):
        services.run_resume(run_id=run.pk, note="x", decision="CONTINUE")
    with pytest.raises(RunNotFound):
        services.run_resume(run_id=run.pk + 999, note="x")
    resumed = services.run_resume(run_id=run.pk, note="Помещение сухое, нормальная влажность.")
    assert resumed.status == "running"
    run = run_advance(run_id=run.pk)
    assert run.status == "completed"
    assert nodes(run) == [
        "planner",
        "executor",
        "judge:HUMAN_REVIEW",
        "judge:FINALIZE",
        "finalizer",
    ]
    second_judge = [c for c in llm.calls if c.node == "judge"][1].messages[1]["content"]
    assert "Помещение сухое" in second_judge
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 2, "finalizer": 1}
    with pytest.raises(RunNotResumable):
        services.run_resume(run_id=run.pk, note="again")


def test_broken_json_is_repaired_or_asked_again(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    fenced_trailing_comma = '```json\n{"decision": "FINALIZE", "reason": "ok",}\n```'
    llm.play(
        planner=['Вот план: {"goal": "x", "steps": []}', plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[fenced_trailing_comma],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    run = ask()
    assert run.status == "completed"
    counts = llm.count()
    assert counts["planner"] == 2  # the first plan had no steps: asked again with the error
    assert counts["judge"] == 1  # fenced JSON with a trailing comma is repaired, not re-asked
    retry = [c for c in llm.calls if c.node == "planner"][1].messages
    assert retry[-1]["role"] == "user"
    assert "steps" in retry[-1]["content"]
    assert retry[-2]["role"] == "assistant"


def test_garbage_twice_fails_the_run_at_once(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    """Unreadable after the corrective retry: `failed`, not a review a note could not mend."""
    llm.play(planner=["я не умею JSON"], executor=["нет"], judge=["нет"], finalizer=["нет"])
    run = ask()
    assert run.status == "failed"
    assert run.error.startswith("the planner's output was invalid twice: ")  # English: the API's
    assert llm.count() == {"planner": 2}
    assert run.events.get(kind="failed").message == run.error
    assert run.review_reason == ""
    with pytest.raises(RunNotResumable):
        services.run_resume(run_id=run.pk, note="Попробуй ещё раз.")


def test_the_step_cap_ends_the_run_with_what_was_found(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_MAX_STEPS = 2
    llm.play(
        planner=[plan(COVER_STEP, CORROSION_STEP, COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("CONTINUE")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    run = ask()
    assert run.status == "completed"
    assert run.incomplete
    assert "2 executed steps" in run.incomplete_reason
    assert llm.count() == {"planner": 1, "executor": 2, "judge": 2, "finalizer": 1}
    finalizer_prompt = next(c for c in llm.calls if c.node == "finalizer").messages[1]["content"]
    assert "2 executed steps" in finalizer_prompt


def test_replan_cap(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_MAX_REPLANS = 1
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("REPLAN")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    run = ask()
    assert run.incomplete
    assert "1 replans" in run.incomplete_reason
    assert llm.count()["planner"] == 2
    (cap,) = run.events.filter(kind="cap")
    assert cap.message == "the cap of 1 replans was reached: answered with what was found"


def test_citations_not_retrieved_in_the_run_are_dropped_and_said_so(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    script = straight_script()
    script["finalizer"] = [
        final(
            ANSWER,
            ("СП 63.13330.2018", "10.3.2", 2),
            ("СП 63.13330.2018", "99.1", 40),  # no such page
            ("ГОСТ 10180-2012", "4.1", 1),  # a real page, but not retrieved in this run
        )
    ]
    llm.play(**script)
    run = ask()
    assert [(s["document"], s["page"]) for s in run.sources] == [("СП 63.13330.2018", 2)]
    assert {(d["document"], d["page"]) for d in run.answer["dropped_sources"]} == {
        ("СП 63.13330.2018", 40),
        ("ГОСТ 10180-2012", 1),
    }
    assert "удалены" in run.final_answer
    assert "ГОСТ 10180-2012" in run.final_answer


def test_a_right_sentence_resting_only_on_a_dropped_source_is_unconfirmed(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    """The plan only calculates: no page is read, yet the answer cites СП 63 п. 10.3.2,
    whose text does hold 20 мм. The source is dropped, and the sentence resting on it is
    not shown as confirmed by what the run found."""
    import json as json_module

    script = straight_script()
    steps = [{"action": "Слой с допуском", "calculate": "20 + 5"}]
    script["planner"] = [json_module.dumps({"goal": "Слой с допуском", "steps": steps})]
    llm.play(**script)
    run = ask()
    (dropped,) = run.answer["dropped_sources"]
    assert dropped["reason"] == "страница не найдена в этом запуске"
    (check,) = run.checks.all()
    assert check.verdict == "unconfirmed"
    assert check.reason == (
        "источник удалён: СП 63.13330.2018, стр. 2 (страница не найдена в этом запуске): "
        "п. 10.3.2 СП 63.13330.2018 в этом запуске не прочитан"
    )
    assert f"*[не подтверждено: {check.reason}]*" in run.final_answer
    assert run.incomplete


def test_a_made_up_clause_on_a_retrieved_page_is_dropped_and_its_sentence_marked(
    corpus, llm
) -> None:  # type: ignore[no-untyped-def]
    script = straight_script()
    answer = (
        "**Не менее 20 мм** (п. 10.3.2 СП 63.13330.2018). "
        "Для агрессивной среды — не менее 50 мм (п. 77.7.7 СП 63.13330.2018)."
    )
    script["finalizer"] = [
        final(
            answer,
            ("СП 63.13330.2018", "10.3.2", 2),
            ("СП 63.13330.2018", "77.7.7", 2),  # the page was retrieved; the clause is invented
            ("СП 63.13330.2018", "10.3.2", 2),  # the same source twice
        )
    ]
    llm.play(**script)
    run = ask()
    assert [(s["clause"], s["page"]) for s in run.sources] == [("10.3.2", 2)]
    (dropped,) = run.answer["dropped_sources"]
    assert dropped["clause"] == "77.7.7"
    assert dropped["reason"] == "пункта 77.7.7 нет на странице 2"
    lead, _, body = run.final_answer.partition("\n\n")
    assert lead.startswith("**Не всё подтверждено нормами:** 1 из 2 утверждений")
    first, second = body.split("\n")[0].split(" Для ")
    assert "не подтверждено" not in first  # it rests on a clause that is on the page
    assert "*[не подтверждено: пункта 77.7.7 нет в СП 63.13330.2018]*" in second
    assert "пункта 77.7.7 нет на странице 2" in run.final_answer
    assert run.incomplete
    assert run.incomplete_reason.startswith("1 из 2 утверждений")
    checks = list(run.checks.order_by("index").values_list("origin", "clause_number", "verdict"))
    assert checks == [
        ("finding", "10.3.2", "confirmed"),
        ("answer", "10.3.2", "confirmed"),
        ("answer", "77.7.7", "unconfirmed"),
    ]


def test_a_clause_missing_from_the_clause_list_but_in_the_page_text_holds(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    from normagpt.models import NormPage

    page = NormPage.objects.get(document__code="СП 63.13330.2018", number=2)
    page.clauses = []  # the extractor missed it; the text still has it
    page.save()
    llm.play(**straight_script())
    run = ask()
    assert [s["clause"] for s in run.sources] == ["10.3.2"]
    assert run.answer["dropped_sources"] == []


def test_a_calculate_step_computes_without_a_model_call_and_the_answer_sees_it(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    import json as json_module

    steps = [
        {"action": a, "keywords": k, "expected_documents": d} for a, k, d in [COVER_STEP]
    ] + [{"action": "Слой с допуском", "calculate": "20 + 5"},
         {"action": "Опасное выражение", "calculate": "__import__('os').system('true')"}]  # fmt: skip
    script = straight_script()
    script["planner"] = [json_module.dumps({"goal": "Слой с допуском", "steps": steps})]
    script["judge"] = [verdict("CONTINUE"), verdict("CONTINUE"), verdict("FINALIZE")]
    llm.play(**script)
    run = ask()
    assert run.status == "completed", run.error
    executors = list(run.steps.filter(node="executor").order_by("index"))
    assert executors[1].output["summary"] == "Расчёт: 20 + 5 = 25"
    assert executors[1].output["calculation"]["result"] == 25
    assert executors[2].output["summary"].startswith("Расчёт не выполнен: «__import__")
    assert llm.count()["executor"] == 1  # the calculations asked no model
    finalizer_prompt = next(c for c in llm.calls if c.node == "finalizer").messages[1]["content"]
    assert "Расчёт: 20 + 5 = 25" in finalizer_prompt


def test_a_plan_step_needs_keywords_or_a_calculation() -> None:
    from pydantic import ValidationError

    from normagpt.schemas import PlanStep

    with pytest.raises(ValidationError, match=r"keywords .* or calculate"):
        PlanStep.model_validate({"action": "ничего"})


def test_429_then_success_is_retried(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    script = straight_script()
    script["planner"] = [{"status": 429}, {"status": 503}, *script["planner"]]
    llm.play(**script)
    run = ask()
    assert run.status == "completed"
    assert llm.count()["planner"] == 3
    calls = list(LlmCall.objects.filter(run=run, node="planner").order_by("id"))
    assert [c.ok for c in calls] == [False, False, True]
    assert "HTTP 429" in calls[0].error


def test_a_timeout_is_retried_and_a_dead_model_fails_the_run(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_LLM_TIMEOUT = 0.5
    script = straight_script()
    script["judge"] = [{"sleep": 1.5, "content": verdict("FINALIZE")}, verdict("FINALIZE")]
    llm.play(**script)
    run = ask()
    assert run.status == "completed"
    assert llm.count()["judge"] == 2
    assert "timed out" in LlmCall.objects.filter(run=run, ok=False).get().error

    settings.NORMAGPT_LLM_RETRIES = 1
    llm.play(planner=[{"sleep": 1.5, "content": "{}"}])
    stuck = services.run_create(question=QUESTION)
    with pytest.raises(LlmUnavailable, match="timed out"):
        run_advance(run_id=stuck.pk)
    stuck.refresh_from_db()
    assert stuck.status == "running"
    assert stuck.owner == ""
    assert stuck.step_count == 0


def test_vision_sends_page_images(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_VISION = True
    llm.play(**straight_script())
    ask()
    content = next(c for c in llm.calls if c.node == "executor").messages[1]["content"]
    assert isinstance(content, list)
    images = [part for part in content if part["type"] == "image_url"]
    assert images
    assert images[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert "10.3.2 Минимальная" not in json.dumps(content, ensure_ascii=False)


def test_a_checkpoint_after_every_node(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(**straight_script())
    run = ask()
    steps = list(AgentStep.objects.filter(run=run).order_by("index"))
    assert [s.index for s in steps] == [0, 1, 2, 3]
    assert all(s.prompt_tokens == 100 and s.completion_tokens == 20 for s in steps)
    assert steps[1].output["pages"][0]["document"] == "СП 63.13330.2018"
    assert run.step_count == 4
    assert run.next_node == ""


def test_continue_with_no_step_left_finalizes(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    script = straight_script()
    script["judge"] = [verdict("continue")]  # lower case is accepted too
    llm.play(**script)
    run = ask()
    assert nodes(run) == ["planner", "executor", "judge:FINALIZE", "finalizer"]
    assert run.steps.get(node="judge").output["note"].startswith("no plan steps left")
    assert not run.incomplete


def test_a_model_failing_past_the_node_s_retries_fails_the_run_with_its_error_and_findings(
    corpus, llm, settings
) -> None:  # type: ignore[no-untyped-def]
    """One chain of attempts (the client's retries), then `failed` naming HTTP 500, with
    what the earlier steps found attached; no Celery retry, no second chain."""
    from normagpt.tasks import run_advance_task

    settings.NORMAGPT_LLM_RETRIES = 2
    settings.NORMAGPT_LLM_BACKOFF = 0.01
    script = straight_script()
    script["judge"] = [{"status": 500}] * 10  # the model breaks after the first step
    llm.play(**script)
    run = services.run_create(question=QUESTION)
    assert run_advance_task.apply(args=[run.pk]).get() == "failed"
    run.refresh_from_db()
    assert run.status == "failed"
    assert "HTTP 500" in run.error
    assert "after 3 attempts" in run.error
    assert llm.count() == {"planner": 1, "executor": 1, "judge": 3}
    assert run.incomplete
    assert "Не менее 20 мм" in run.final_answer or "10.3.2" in run.final_answer
    assert [s["clause"] for s in run.sources] == ["10.3.2"]
    events = [(e.kind, e.node) for e in run.events.all()]
    assert events == [("retry", "judge")] * 3 + [("failed", "judge")]
    assert "HTTP 500" in run.events.get(kind="failed").message
    shown = formatting.run_as_dict(run)["events"]
    assert [e["kind"] for e in shown] == ["retry", "retry", "retry", "failed"]


def test_retries_are_calls_the_run_s_cap_counts_before_each(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    from normagpt.tasks import run_advance_task

    settings.NORMAGPT_LLM_RETRIES = 10
    settings.NORMAGPT_LLM_BACKOFF = 0.01
    settings.NORMAGPT_MAX_LLM_CALLS = 4
    script = straight_script()
    script["judge"] = [{"status": 500}] * 20
    llm.play(**script)
    run = services.run_create(question=QUESTION)
    assert run_advance_task.apply(args=[run.pk]).get() == "failed"
    run.refresh_from_db()
    assert run.llm_calls == 4  # never past the cap
    assert sum(llm.count().values()) == 4
    assert "HTTP 500" in run.error
    assert "the run's LLM budget is spent" in run.error


def test_a_model_that_hangs_fails_the_run_within_the_retry_budget(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    from normagpt.tasks import run_advance_task

    settings.NORMAGPT_LLM_TIMEOUT = 0.3
    settings.NORMAGPT_LLM_RETRIES = 1
    settings.NORMAGPT_LLM_BACKOFF = 0.01
    llm.play(planner=[{"sleep": 5, "content": "{}"}] * 3)
    run = services.run_create(question=QUESTION)
    assert run_advance_task.apply(args=[run.pk]).get() == "failed"
    run.refresh_from_db()
    assert run.status == "failed"
    assert "timed out" in run.error
    assert LlmCall.objects.filter(run=run).count() == 2


def test_without_a_broker_a_dead_model_fails_the_run_at_once(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    from normagpt.tasks import run_advance_task

    settings.NORMAGPT_LLM_RETRIES = 0
    llm.play(planner=[{"status": 503}])
    run = services.run_create(question=QUESTION)
    assert run_advance_task(run.pk) == "failed"  # called directly, as the in-process pool does
    run.refresh_from_db()
    assert run.status == "failed"
    assert "HTTP 503" in run.error


@pytest.mark.django_db(transaction=True)
def test_resume_command(corpus, llm, capsys) -> None:  # type: ignore[no-untyped-def]
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from core import background

    call_command("normagpt_resume", "--list")
    assert capsys.readouterr().out == "No run is waiting for review.\n"
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("HUMAN_REVIEW", "Неясен класс среды.")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    run = services.run_create(question=QUESTION)  # no broker: it works on this process's pool
    assert background.drain(timeout=30)
    run.refresh_from_db()
    assert run.status == "needs_review"
    call_command("normagpt_resume", "--list")
    assert f"{run.public_id}\t" in capsys.readouterr().out
    call_command("normagpt_resume", run.public_id, "--note", "Сухо.", "--decision", "FINALIZE")
    out = capsys.readouterr().out
    assert f"run {run.public_id}: completed" in out
    assert ANSWER in out
    with pytest.raises(CommandError, match="only a run waiting for review"):
        call_command("normagpt_resume", run.public_id, "--note", "ещё")
    with pytest.raises(CommandError, match=f"run {run.pk} does not exist"):
        call_command("normagpt_resume", str(run.pk), "--note", "ещё")  # not by its pk
