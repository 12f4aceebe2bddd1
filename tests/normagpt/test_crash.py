"""Runs survive a worker's death: SIGKILL mid-node, another worker finishes from the checkpoint."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from bench.common import celery_worker_command
from core import background
from normagpt import selectors, services
from normagpt.agent.runner import owner_pid
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


def worker_env(  # type: ignore[no-untyped-def]
    db_env: dict[str, str], llm, settings, redis_url: str | None, **extra: str
) -> dict[str, str | None]:
    """The environment of a process the test spawns: its database, broker (None: none),
    the scripted model, a 2 s lease, and `extra`."""
    return {
        **db_env,
        "REDIS_URL": redis_url,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "DJANGO_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "NORMAGPT_RUN_LEASE_SECONDS": "2",
        "DJANGO_LOG_LEVEL": "WARNING",
        **extra,
    }


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
    env = worker_env(subprocess_db_env, llm, settings, redis_url, NORMAGPT_LLM_TIMEOUT="60")
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


def script_hanging_at(node: str) -> dict[str, list[object]]:
    """A two-step run whose first call of `node` hangs (its worker dies inside it)."""
    script: dict[str, list[object]] = {
        "planner": [plan(COVER_STEP, CORROSION_STEP)],
        "executor": [
            step(COVER_FINDING),
            step(("СП 28.13330.2017", "5.5.1", 1, "увеличивают на 5 мм")),
        ],
        "judge": [verdict("CONTINUE"), verdict("FINALIZE")],
        "finalizer": [final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    }
    script[node] = [{"hang": True}, *script[node]]
    return script


@pytest.mark.long
def test_without_beat_a_live_worker_takes_over_each_killed_worker_s_run(
    corpus, llm, spawn, redis_url, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    """Two workers and no beat; a run killed inside each kind of node, in an order picked at
    random: the other worker's sweeper takes each run over once the lease lapses, every run
    finishes, and no finished node runs again. (The time from the kill to the next
    checkpoint is measured by bench/normagpt_agent.py.)"""
    import os
    import signal

    import redis

    settings.NORMAGPT_RUN_LEASE_SECONDS = 2  # as the workers have it
    redis.Redis.from_url(redis_url).flushdb()
    env = worker_env(subprocess_db_env, llm, settings, redis_url)
    workers = {w.pid: w for w in (spawn(celery_worker_command(f"k{n}"), **env) for n in (1, 2))}
    import random

    picked = random.Random(13).sample(["planner", "executor", "judge", "finalizer"], k=4)
    for number, node in enumerate(picked):
        llm.restart(**script_hanging_at(node))
        with background.using_broker(True):
            run = services.run_create(question=f"Толщина защитного слоя бетона, случай {number}?")
        wait_until(llm.hanging.is_set, 60, f"a worker to hang in the {node}")
        run.refresh_from_db()
        pid = owner_pid(run.owner)
        assert pid in workers, (run.owner, list(workers))
        os.kill(pid, signal.SIGKILL)
        workers.pop(pid).wait(timeout=10)
        llm.release()
        fresh = spawn(celery_worker_command(f"k{number}r"), **env)  # keep two alive
        workers[fresh.pid] = fresh
        wait_until(
            lambda: AgentRun.objects.get(pk=run.pk).is_finished,  # noqa: B023 (waited here)
            60,
            f"the run killed in the {node} to finish",
        )
        wait_until(
            lambda: AgentRun.objects.get(pk=run.pk).owner == "",  # noqa: B023 (waited here)
            10,
            "the finishing worker to release the lease",
        )
        run.refresh_from_db()
        assert run.status == "completed", run.error
        nodes = [s.node for s in run.steps.order_by("index")]
        assert nodes == ["planner", "executor", "judge", "executor", "judge", "finalizer"]
        calls = Counter((call.step, call.node) for call in llm.calls if call.run == run.pk)
        repeated = {key: n for key, n in calls.items() if n > 1}
        hung_step = {"planner": 0, "executor": 1, "judge": 2, "finalizer": 5}[node]
        assert repeated == {(hung_step, node): 2}  # only the node in flight ran again
        (takeover,) = run.events.filter(kind="takeover")
        assert takeover.node == node
        assert f"{pid}" in takeover.message


def test_without_a_broker_a_restarted_process_resumes_its_run(
    corpus, llm, spawn, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    """`runmcp` over HTTP with no broker advances the run it was asked; SIGKILLed inside a
    node and started again, it takes its run over once the lease lapses and finishes it."""
    import asyncio

    from tests.conftest import MANAGE, PYTHON, free_port, wait_for_http
    from tests.test_mcp_http import http_client

    llm.restart(**script_hanging_at("executor"))
    # no broker: the process advances runs itself
    env = worker_env(subprocess_db_env, llm, settings, None, MCP_HTTP_TOKEN="")
    port = free_port()
    command = [PYTHON, MANAGE, "runmcp", "--transport", "http", "--port", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    first = spawn(command, **env)
    wait_for_http(url, first)

    async def ask() -> None:
        async with http_client(url) as client:
            result = await client.call_tool(
                "normagpt_ask", {"question": QUESTION_NO_BROKER, "wait_seconds": 0}
            )
            assert not result.is_error

    asyncio.run(ask())
    wait_until(llm.hanging.is_set, 60, "the process to hang in the executor")
    run = AgentRun.objects.get(question=QUESTION_NO_BROKER)
    assert owner_pid(run.owner) == first.pid
    first.kill()
    first.wait(timeout=10)
    llm.release()

    again = spawn(command, **env)
    wait_for_http(url, again)
    wait_until(
        lambda: AgentRun.objects.get(pk=run.pk).is_finished, 60, "the restarted process to finish"
    )
    run.refresh_from_db()
    assert run.status == "completed", run.error
    assert [s.node for s in run.steps.order_by("index")] == [
        "planner", "executor", "judge", "executor", "judge", "finalizer",
    ]  # fmt: skip


QUESTION_NO_BROKER = "Какая толщина защитного слоя бетона без брокера задач?"


@pytest.mark.parametrize(
    ("reply", "named"),
    [({"status": 500}, "HTTP 500"), ({"sleep": 30, "content": "{}"}, "timed out")],
)
@pytest.mark.long
def test_with_a_broker_a_model_failing_forever_fails_the_run_in_one_chain(
    corpus, llm, spawn, redis_url, subprocess_db_env, settings, reply, named
) -> None:  # type: ignore[no-untyped-def]
    """500 (or a hang) on every call: `failed` naming it after the node's retries, never
    more calls than the cap, never a second chain (no Celery retry, no sweeper takeover)."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    llm.restart(planner=[reply] * 50)
    env = worker_env(
        subprocess_db_env,
        llm,
        settings,
        redis_url,
        NORMAGPT_LLM_RETRIES="2",
        NORMAGPT_LLM_BACKOFF="0.1",
        NORMAGPT_LLM_TIMEOUT="1",
        NORMAGPT_MAX_LLM_CALLS="24",
    )
    for n in (1, 2):
        spawn(celery_worker_command(f"f{n}"), **env)
    with background.using_broker(True):
        run = services.run_create(question="Толщина защитного слоя бетона при отказе модели?")
    wait_until(lambda: AgentRun.objects.get(pk=run.pk).is_finished, 60, "the run to fail")
    run.refresh_from_db()
    assert run.status == "failed"
    assert named in run.error
    time.sleep(3)  # a lease and more: a second chain would have called again by now
    assert llm.count() == {"planner": 3}  # one chain: the first attempt and 2 retries
    run.refresh_from_db()
    assert run.llm_calls == 3
