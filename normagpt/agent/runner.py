"""The loop: node after node, a checkpoint after each, bounded by the run's caps.

A run is advanced by whoever holds its lease (`owner`, renewed by a heartbeat thread every
third of NORMAGPT_RUN_LEASE_SECONDS while a node works). Each finished node is written in
one transaction — the shared store, the next node and an AgentStep — and only if the lease
and the step count are still ours, so a node's result is kept exactly once. A start that
finds the lease held waits: a holder whose heartbeat goes on is alive (the start returns);
one whose heartbeat stops is dead, and the start takes the run over once the lease lapses
(at once when the holder is a process of this host that no longer runs: `core.holders`)
and goes on from the last checkpoint: the node that was in flight runs again, no finished
node does. So a redelivered task (its worker killed) resumes the run itself, in seconds.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone, translation

from core.heartbeat import Heartbeat
from core.holders import holder_gone, holder_token
from normagpt import turns
from normagpt.agent.context import Budget, CapReached, NodeContext, NodeOutputInvalid
from normagpt.agent.nodes import NODES
from normagpt.agent.store import fallback_answer, findings_all
from normagpt.agent.texts import text_shown
from normagpt.client import CallRecord, LlmClient
from normagpt.exceptions import RunNotFound
from normagpt.models import AgentRun, AgentStep, ClaimCheck, LlmCall, RunEvent

logger = logging.getLogger(__name__)

REVIEW, ASK, END = "review", "ask", "end"
ROUTES: dict[str, dict[str, str]] = {
    "planner": {"default": "executor"},
    "executor": {"default": "judge"},
    "judge": {
        "CONTINUE": "executor",
        "REPLAN": "planner",
        "FINALIZE": "finalizer",
        "HUMAN_REVIEW": REVIEW,
        "ASK": ASK,
    },
    "finalizer": {"default": END},
}
Status = AgentRun.Status


def new_owner() -> str:
    """An advancer's name: the host and process (who works on a run), made unique; a
    process of the same host can tell at once that it stopped (`core.holders`)."""
    return holder_token()


def owner_pid(owner: str) -> int | None:
    """The process id in an advancer's name, if it has one (host:pid:…)."""
    parts = owner.split(":")
    return int(parts[1]) if len(parts) in (3, 4) and parts[1].isdigit() else None


def run_claim(*, run_id: int, owner: str) -> bool:
    """Take the run's lease: free, expired, or already ours. False when another holds it.

    Taking an expired lease from an advancer that never let it go (it died) is an event.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.NORMAGPT_RUN_LEASE_SECONDS)
    before = AgentRun.objects.filter(pk=run_id).values_list("owner", "next_node").first()
    free = Q(owner="") | Q(owner=owner) | Q(heartbeat_at__lt=stale) | Q(heartbeat_at=None)
    # an advancer of this host whose process no longer runs (killed, a closed desktop
    # client) holds it no more: taken at once, not when its lease lapses
    holder = before[0] if before else ""
    gone = holder not in ("", owner) and holder_gone(holder)
    if gone:
        free |= Q(owner=holder)  # still that one's: no other took it meanwhile
    taken = bool(
        AgentRun.objects.filter(pk=run_id, status__in=[Status.QUEUED, Status.RUNNING])
        .filter(free)
        .update(
            owner=owner,
            heartbeat_at=now,
            turn_since=None,
            status=Status.RUNNING,
            started_at=Coalesce(F("started_at"), now),
        )
    )
    if taken and before and before[0] not in ("", owner):
        event_add(
            run_id,
            RunEvent.Kind.TAKEOVER,
            f"the advancer {before[0]} {_why_stalled(gone)}; {owner} took the run over and "
            f"goes on from the node {before[1] or '—'}",
            node=before[1],
        )
    return taken


def event_add(run_id: int, kind: str, message: str, *, node: str = "") -> None:
    """Record an event of the run (a takeover, a failed model call, a cap, a failure), in
    English and in one of the forms a page shows in its language (normagpt.agent.texts)."""
    RunEvent.objects.create(run_id=run_id, kind=kind, node=node[:10], message=message[:2000])
    logger.info("run %s: %s: %s", run_id, kind, message)


def run_release_stalled(run_id: int) -> bool:
    """Let a stalled run go — its advancer's lease lapsed, or its process on this host no
    longer runs — queued again for any advancer, said as a takeover; whether this call did
    (another sweeper, or the advancer coming back, may be first)."""
    row = (
        AgentRun.objects.filter(pk=run_id, status__in=[Status.QUEUED, Status.RUNNING])
        .exclude(owner="")
        .values_list("owner", "next_node", "heartbeat_at")
        .first()
    )
    if row is None:
        return False
    holder, node, beat = row
    lease = settings.NORMAGPT_RUN_LEASE_SECONDS
    gone = holder_gone(holder)
    if not gone and beat is not None and beat >= timezone.now() - timedelta(seconds=lease):
        return False  # it beat meanwhile: alive
    if not AgentRun.objects.filter(pk=run_id, owner=holder, heartbeat_at=beat).update(
        owner="", heartbeat_at=timezone.now()
    ):
        return False
    event_add(
        run_id,
        RunEvent.Kind.TAKEOVER,
        f"the advancer {holder} {_why_stalled(gone)}; queued again, the run goes on from the "
        f"node {node or '—'}",
        node=node,
    )
    return True


def _why_stalled(gone: bool) -> str:
    """Why an advancer is taken for dead, as a takeover event says it."""
    if gone:
        return "stopped (its process no longer runs)"
    lease = settings.NORMAGPT_RUN_LEASE_SECONDS
    return f"did not renew its lease of {lease} s (stopped or crashed)"


def run_take_over(*, run_id: int, owner: str) -> bool:
    """Wait for the run's current holder to show itself alive or dead; whether `owner` took
    the run over (the holder's heartbeat stopped and its lease lapsed).

    A heartbeat seen to move means a live holder: False at once. So does a run that is no
    longer in progress. Waits at most a lease and two heartbeats.
    """
    lease = settings.NORMAGPT_RUN_LEASE_SECONDS
    beat = heartbeat_interval()
    deadline = time.monotonic() + lease + 2 * beat
    seen = None
    while time.monotonic() < deadline:
        row = (
            AgentRun.objects.filter(pk=run_id, status__in=[Status.QUEUED, Status.RUNNING])
            .values_list("heartbeat_at")
            .first()
        )
        if row is None:
            return False  # finished, failed or waiting for review
        if seen is not None and row != seen:
            return False  # the holder beats: alive
        seen = row
        if run_claim(run_id=run_id, owner=owner):
            return True
        time.sleep(min(beat / 2, max(0.05, deadline - time.monotonic())))
    return False


def heartbeat_interval() -> float:
    return max(0.2, settings.NORMAGPT_RUN_LEASE_SECONDS / 3)


def heartbeat(run_id: int, owner: str) -> Heartbeat:
    """The run's lease renewed every third of its length until the block ends."""

    def renew() -> None:
        AgentRun.objects.filter(pk=run_id, owner=owner).update(heartbeat_at=timezone.now())

    return Heartbeat(renew, interval=heartbeat_interval(), name=f"run-{run_id}-heartbeat")


def run_advance(*, run_id: int, llm: LlmClient | None = None, owner: str | None = None) -> AgentRun:
    """Advance the run until it finishes, waits for review or the lease is lost.

    Raises LlmNotConfigured / LlmUnavailable (the run stays at its checkpoint, lease
    released, for a retry); a caller that will not retry calls `run_fail`.
    """
    owner = owner or new_owner()
    turns.run_taken(run_id)
    with turns.turn_lock(turns.user_of(run_id)):
        waits = turns.turn_wait(run_id)
        claimed = not waits and run_claim(run_id=run_id, owner=owner)
    if not claimed and (waits or not run_take_over(run_id=run_id, owner=owner)):
        run = AgentRun.objects.filter(pk=run_id).first()
        if run is None:
            raise RunNotFound(f"run {run_id} does not exist", extra={"run_id": run_id})
        return run  # its turn to come, finished, waiting for review, or advanced by another
    try:
        with heartbeat(run_id, owner):
            client = llm or LlmClient.from_settings()
            while _advance_one(run_id, owner, client):
                pass
    finally:  # let go, and the user's next run waiting its turn started
        turns.turn_handed(
            run_id, lambda: AgentRun.objects.filter(pk=run_id, owner=owner).update(owner="")
        )
    return AgentRun.objects.get(pk=run_id)


def _advance_one(run_id: int, owner: str, llm: LlmClient) -> bool:
    """Run the next node and checkpoint it; whether the loop should go on."""
    run = AgentRun.objects.get(pk=run_id)
    if run.owner != owner or run.status != Status.RUNNING:
        return False
    shared: dict[str, Any] = run.shared
    node_name = run.next_node
    cap = cap_before(run, shared, node_name)
    if cap and node_name != "finalizer":
        if not (findings_all(shared) and budget_left(run)):
            return _finish_incomplete(run, owner, shared, cap)
        event_add(run_id, RunEvent.Kind.CAP, f"{cap}: answered with what was found", node=node_name)
        shared["incomplete_reason"] = cap
        node_name = "finalizer"  # the answer from what was found, marked incomplete
    node = NODES[node_name]
    ctx = _node_context(run, llm)
    started = time.monotonic()
    prep = node.prep(shared)
    try:
        output = node.exec(prep, ctx)
    except CapReached as exc:
        return _finish_incomplete(run, owner, shared, exc.reason)
    except NodeOutputInvalid as exc:  # unreadable after the corrective retry: the run fails
        if AgentRun.objects.filter(pk=run_id, owner=owner, step_count=run.step_count).exists():
            run_fail(run_id=run_id, message=str(exc))  # with what the steps found
        return False
    action = node.post(shared, prep, output)
    target = ROUTES[node_name].get(action, ROUTES[node_name].get("default", END))
    decision = action if node_name == "judge" else ""
    history_add(shared, run.step_count, node_name, output, decision)
    extra: dict[str, Any] = {}
    status = Status.RUNNING
    if target == REVIEW:
        status, target = Status.NEEDS_REVIEW, "judge"
        shared["review"] = {"node": "judge", "reason": output.get("reason", "")}
        extra["review_reason"] = output.get("reason", "")
    elif target == ASK:  # the run waits for the asker's reply, holding no worker
        status, target = Status.AWAITING_INPUT, "judge"
        extra["questions"], extra["asked_at"] = output["questions"], timezone.now()
    elif target == END:
        status, target = Status.COMPLETED, ""
        extra = final_fields(shared)
    if node_name == "judge" and action == "REPLAN":
        shared["scratchpad"]["replans"] += 1
    return _checkpoint(
        run, owner, shared, node=node_name, summary=node.summary(prep), output=output,
        decision=decision, duration=time.monotonic() - started, tokens=ctx.node_tokens,
        next_node=target, status=status, extra=extra,
    )  # fmt: skip


def _node_context(run: AgentRun, llm: LlmClient) -> NodeContext:
    """What the run's next node works with: the model, the run's budget left from what its
    steps spent, where each model call is recorded, and the headers naming run and step."""
    return NodeContext(
        llm=llm,
        budget=Budget(
            settings.NORMAGPT_MAX_LLM_CALLS,
            settings.NORMAGPT_MAX_TOKENS,
            calls=run.llm_calls,
            tokens=run.tokens,
        ),
        record=lambda call: llm_call_record(run_id=run.pk, step_index=run.step_count, call=call),
        vision=settings.NORMAGPT_VISION,
        pages_per_step=settings.NORMAGPT_PAGES_PER_STEP,
        headers={"X-Normagpt-Run": str(run.pk), "X-Normagpt-Step": str(run.step_count)},
    )


def cap_before(run: AgentRun, shared: dict[str, Any], node_name: str) -> str:
    """Which cap, if any, forbids running `node_name` now (the reason, or '')."""
    if run.active_seconds >= settings.NORMAGPT_MAX_SECONDS:
        return f"the cap of {settings.NORMAGPT_MAX_SECONDS} s of work was reached"
    if not budget_left(run):
        return "the LLM budget of the run (calls or tokens) is spent"
    if node_name == "executor" and len(shared["step_results"]) >= settings.NORMAGPT_MAX_STEPS:
        return f"the cap of {settings.NORMAGPT_MAX_STEPS} executed steps was reached"
    replans = shared["scratchpad"]["replans"]
    if node_name == "planner" and replans > settings.NORMAGPT_MAX_REPLANS:
        return f"the cap of {settings.NORMAGPT_MAX_REPLANS} replans was reached"
    return ""


def budget_left(run: AgentRun) -> bool:
    return (
        run.llm_calls < settings.NORMAGPT_MAX_LLM_CALLS
        and run.tokens < settings.NORMAGPT_MAX_TOKENS
        and run.active_seconds < settings.NORMAGPT_MAX_SECONDS
    )


def history_add(
    shared: dict[str, Any], index: int, node: str, output: dict[str, Any], decision: str
) -> None:
    summary = {
        "planner": lambda: f"план: {output.get('goal', '')} ({len(output.get('steps', []))} шагов)",
        "executor": lambda: output.get("summary", ""),
        "judge": lambda: f"{decision}: {output.get('reason', '')}",
        "finalizer": lambda: "ответ готов",
    }[node]()
    shared["execution_history"].append(
        {"index": index, "node": node, "summary": summary[:500], "decision": decision}
    )


def final_fields(shared: dict[str, Any]) -> dict[str, Any]:
    """The run's answer fields; a run with an unconfirmed claim is incomplete, that first."""
    final = shared["final_answer"]
    unanswered = shared.get("unanswered_questions", [])  # the asker's reply never came
    open_questions = final.get("clarifying_questions", [])
    reason = "; ".join(
        filter(None, [final.get("unconfirmed", ""), shared.get("incomplete_reason", "")])
    )
    return {
        "final_answer": final["answer"],
        "sources": final["sources"],
        "answer": {
            "conditions": final.get("conditions", []),
            "clarifying_questions": list(dict.fromkeys(unanswered + open_questions)),
            "dropped_sources": final.get("dropped_sources", []),
        },
        "incomplete": bool(reason),
        "incomplete_reason": reason[:300],
        "finished_at": timezone.now(),
    }


def _finish_incomplete(run: AgentRun, owner: str, shared: dict[str, Any], reason: str) -> bool:
    """End the run with what is known (no model call), marked incomplete."""
    event_add(run.pk, RunEvent.Kind.CAP, f"{reason}: the run stopped")
    shared["incomplete_reason"] = reason
    shared["final_answer"] = fallback_answer(shared, reason)
    shared["status"] = "completed"
    shared["execution_history"].append(
        {
            "index": run.step_count,
            "node": "finalizer",
            "summary": f"остановлен: {reason}",
            "decision": "",
        }
    )
    return _checkpoint(
        run, owner, shared, node="finalizer", summary=f"cap: {reason}",
        output={"stopped": reason}, decision="", duration=0.0, tokens=[0, 0],
        next_node="", status=Status.COMPLETED, extra=final_fields(shared),
    )  # fmt: skip


def _checkpoint(
    run: AgentRun,
    owner: str,
    shared: dict[str, Any],
    *,
    node: str,
    summary: str,
    output: dict[str, Any],
    decision: str,
    duration: float,
    tokens: list[int],
    next_node: str,
    status: str,
    extra: dict[str, Any],
) -> bool:
    """Write the node's result and the store, if the run is still ours at this step.

    Returns whether the loop goes on (still running, checkpoint written).
    """
    with transaction.atomic():
        written = AgentRun.objects.filter(
            pk=run.pk, owner=owner, step_count=run.step_count, status=Status.RUNNING
        ).update(
            shared=shared,
            next_node=next_node,
            step_count=run.step_count + 1,
            status=status,
            heartbeat_at=timezone.now(),
            active_seconds=F("active_seconds") + duration,
            **extra,
        )
        if not written:
            logger.warning("run %s: lease lost before checkpoint %s", run.pk, run.step_count)
            return False
        if "final_answer" in extra:
            checks_store(run.pk, shared["final_answer"].get("checks", []))
        AgentStep.objects.create(
            run_id=run.pk,
            index=run.step_count,
            node=node,
            input_summary=summary[:2000],
            output=output,
            decision=decision,
            duration=duration,
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
        )
    return status == Status.RUNNING


def checks_store(run_id: int, checks: list[dict[str, Any]]) -> None:
    """The claim checks of the run's answer (replacing earlier ones)."""
    ClaimCheck.objects.filter(run_id=run_id).delete()
    ClaimCheck.objects.bulk_create(
        [
            ClaimCheck(
                run_id=run_id,
                index=n,
                origin=check["origin"],
                claim=check["claim"],
                reference=check["reference"][:200],
                document_code=check["document"][:100],
                clause_number=check["clause"][:40],
                page_number=check["page"],
                clause_id=check["clause_id"],
                page_id=check["page_id"],
                verdict=check["verdict"],
                reason=check["reason"],
                details=check["details"],
            )
            for n, check in enumerate(checks)
        ]
    )


def llm_call_record(*, run_id: int, step_index: int, call: CallRecord) -> None:
    """Record one model request and add its tokens and cost to the run at once."""
    cost = Decimal(
        call.prompt_tokens * settings.NORMAGPT_PRICE_INPUT_PER_M
        + call.completion_tokens * settings.NORMAGPT_PRICE_OUTPUT_PER_M
    ) / Decimal(1_000_000)
    LlmCall.objects.create(
        run_id=run_id,
        node=call.node,
        step_index=step_index,
        model=call.model[:100],
        ok=call.ok,
        error=call.error,
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        duration=call.duration,
    )
    if not call.ok:
        event_add(
            run_id, RunEvent.Kind.RETRY, f"the model request failed: {call.error}", node=call.node
        )
    AgentRun.objects.filter(pk=run_id).update(
        llm_calls=F("llm_calls") + 1,
        prompt_tokens=F("prompt_tokens") + call.prompt_tokens,
        completion_tokens=F("completion_tokens") + call.completion_tokens,
        cost_estimate=F("cost_estimate") + cost.quantize(Decimal("0.000001")),
    )


def run_fail(*, run_id: int, message: str) -> None:
    """Mark a run that cannot go on as failed with `message`, keeping its checkpoints and
    attaching what its steps found so far (cited, as an incomplete answer)."""
    with transaction.atomic():
        run = (
            AgentRun.objects.select_for_update()
            .filter(pk=run_id)
            .exclude(status__in=AgentRun.FINISHED)
            .first()
        )
        if run is None:
            return
        event_add(run_id, RunEvent.Kind.FAILED, message, node=run.next_node)
        shared = run.shared or {}
        found: dict[str, Any] = {}
        if shared.get("step_results"):
            with translation.override("ru"):  # the answer's language, the corpus's
                found = fallback_answer(shared, f"запуск прерван: {text_shown(message[:300])}")
        AgentRun.objects.filter(pk=run_id).update(
            status=Status.FAILED,
            error=message[:2000],
            owner="",
            finished_at=timezone.now(),
            **(
                {
                    "final_answer": found["answer"],
                    "sources": found["sources"],
                    "incomplete": True,
                    "incomplete_reason": message[:300],
                }
                if found
                else {}
            ),
        )
        if found:
            checks_store(run_id, found.get("checks", []))
