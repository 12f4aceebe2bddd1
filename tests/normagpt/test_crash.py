"""Runs survive a worker's death: SIGKILL mid-node, another worker finishes from the checkpoint."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from bench.common import celery_worker_command
from core import background
from normagpt import selectors, services
from normagpt.models import AgentRun
from tests.normagpt.scripted_llm import (
    ANSWER,
    CORROSION_STEP,
    COVER_FINDING,
    COVER_STEP,
    final,
    plan,
    step,
    verdict,
)

pytestmark = pytest.mark.django_db(transaction=True)


def wait_until(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def test_a_killed_worker_s_run_is_finished_by_another_without_repeating_finished_nodes(
    corpus, llm, spawn, redis_url, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    import redis

    settings.NORMAGPT_RUN_LEASE_SECONDS = 2  # as the workers have it
    redis.Redis.from_url(redis_url).flushdb()  # DB of these tests: no stale messages
    llm.play(
        planner=[plan(COVER_STEP, CORROSION_STEP)],
        executor=[
            step(COVER_FINDING),
            {"hang": True},  # the first worker dies inside this call
            step(("СП 28.13330.2017", "5.5.1", 1, "увеличивают на 5 мм")),
        ],
        judge=[verdict("CONTINUE"), verdict("FINALIZE")],
        finalizer=[final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    )
    env = {
        **subprocess_db_env,
        "REDIS_URL": redis_url,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "DJANGO_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "NORMAGPT_RUN_LEASE_SECONDS": "2",
        "NORMAGPT_LLM_TIMEOUT": "60",
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    first = spawn(celery_worker_command("ng1"), **env)
    with background.using_broker(True):
        run = services.run_create(
            question="Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
        )
    wait_until(llm.hanging.is_set, 60, "the first worker to reach the second executor step")
    run.refresh_from_db()
    assert run.step_count == 3  # planner, executor, judge are checkpointed
    first.kill()  # SIGKILL: no warm shutdown, no requeue by the worker itself
    first.wait(timeout=10)
    llm.release()
    wait_until(lambda: run.pk in selectors.runs_stalled(), 30, "the dead worker's lease to expire")

    spawn(celery_worker_command("ng2"), **env)
    wait_until(
        lambda: (
            AgentRun.objects.get(pk=run.pk).is_finished
            or AgentRun.objects.get(pk=run.pk).status == "needs_review"
        ),
        60,
        "the second worker to finish the run",
    )
    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert run.final_answer == ANSWER
    assert [s.node for s in run.steps.order_by("index")] == [
        "planner", "executor", "judge", "executor", "judge", "finalizer",
    ]  # fmt: skip
    per_step = Counter((call.step, call.node) for call in llm.calls if call.run == run.pk)
    assert per_step == {
        (0, "planner"): 1,
        (1, "executor"): 1,
        (2, "judge"): 1,
        (3, "executor"): 2,  # the node in flight when the worker died, and only it, ran again
        (4, "judge"): 1,
        (5, "finalizer"): 1,
    }
