"""Use cases of the norms agent: asking, resuming after review; the corpus lives in `ingest`.

The loop itself is `normagpt.agent.runner.run_advance`, run by the task `normagpt.run_advance`:
a service that puts a run to work starts it with `normagpt.turns.run_start` (on a worker
with a broker, on this process's pool without one) once the run is committed, and the run
takes its turn among its user's (`normagpt.turns`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core import background
from core.exceptions import InvalidInput
from core.text_rule import text_check
from normagpt import editions, selectors, threads, turns
from normagpt.agent.runner import event_add, run_advance, run_fail, run_release_stalled
from normagpt.agent.store import store_new
from normagpt.client import NOT_CONFIGURED, llm_configured
from normagpt.exceptions import (
    DocumentNotFound,
    IngestRunning,
    LlmNotConfigured,
    RunNotAwaitingInput,
    RunNotFound,
    RunNotResumable,
    RunNotYours,
)
from normagpt.indexing import document_index
from normagpt.ingest import (
    corpus_analyze,
    document_ingest,
    document_save,
    document_texts_ingest,
    ingests_expire,
)
from normagpt.ingest.lease import lease_held
from normagpt.models import AgentRun, NormDocument, RunEvent, Thread
from normagpt.parsing import code_key
from normagpt.search import ClauseHit, SearchHit, clauses_search, pages_search
from normagpt.terms import terms_recount

__all__ = [
    "ClauseHit",
    "SearchHit",
    "clauses_search",
    "corpus_analyze",
    "corpus_reindex",
    "document_ingest",
    "document_ingest_start",
    "document_save",
    "document_texts_ingest",
    "ingests_expire",
    "pages_search",
    "run_advance",
    "run_create",
    "run_fail",
    "run_reply",
    "run_resume",
    "runs_recover",
]

logger = logging.getLogger(__name__)

INGEST_TASK = "normagpt.document_ingest"
QUESTION_MIN, QUESTION_MAX = 5, 2000
REPLY_MAX = 2000
NOTE_MAX = 2000  # a reviewer's note, on every channel
# a search's keyword may be a person's whole question told with its story (a few
# sentences): the same bound over MCP and REST
KEYWORD_CHARS = 1000
RESUME_DECISIONS = {"CONTINUE": "executor", "REPLAN": "planner", "FINALIZE": "finalizer"}


@transaction.atomic
def run_create(
    *, question: str, user: Any = None, thread: str | None = None, as_of: Any = None
) -> AgentRun:
    """A new run for `question`, queued; it starts working once it is committed. In the
    `thread` named (one of the user's), it is given the earlier turns as context; without
    one it starts a thread of its own. ThreadNotFound for a thread the user may not see.
    The answer is for the day `as_of` (a date or YYYY-MM-DD; default today, or in a thread
    the day of its last turn): the editions in force then, with the amendments by then."""
    if as_of is None and thread:  # a follow-up is about the same day as the turn before
        as_of = (
            AgentRun.objects.filter(thread__public_id=thread)
            .order_by("-created_at", "-id")
            .values_list("as_of", flat=True)
            .first()
        )
    day = editions.day_of(as_of)
    explicit = as_of is not None and as_of != ""  # a run without one follows the calendar
    question = " ".join(question.split())
    if not QUESTION_MIN <= len(question) <= QUESTION_MAX:
        raise InvalidInput(
            f"question must be {QUESTION_MIN}–{QUESTION_MAX} characters", field="question"
        )
    if not llm_configured():  # no run that could only fail
        raise LlmNotConfigured(NOT_CONFIGURED)
    owner = user if user is not None and user.is_authenticated else None
    conversation = (
        threads.thread_get_public(public_id=thread, viewer=user)
        if thread
        else Thread.objects.create(user=owner, title=question[: threads.TITLE_CHARS])
    )
    if conversation.user_id is not None:
        owner = conversation.user  # staff asking in a user's thread ask for that user
    context = threads.context_text(threads.turns(conversation))
    run = AgentRun.objects.create(
        question=question,
        user=owner,
        thread=conversation,
        as_of=day if explicit else None,
        shared=store_new(question, context, day),
        next_node="planner",
    )
    conversation.save(update_fields=["updated_at"])
    turns.run_start(run.pk)
    return run


def runs_recover() -> list[int]:
    """Start again every run whose lease expired (its advancer died), queue again every run
    no worker took in time, and start the runs whose turn came (`normagpt.turns`); their
    ids. Marks failed every ingestion whose process stopped (`ingests_expire`) on the way.

    A stalled run is let go once (`run_release_stalled`: another process's sweep finds it
    queued anew) and started again, going on from its last checkpoint.
    """
    ingests_expire()
    runs_expire_waiting()
    started = []
    for run_id in selectors.runs_stalled():
        if not run_release_stalled(run_id):
            continue  # another sweeper let it go first, or its advancer beat meanwhile
        logger.warning("run %s: its advancer stopped; resuming from its last checkpoint", run_id)
        turns.run_start(run_id)
        started.append(run_id)
    return sorted([*started, *turns.unstarted_requeue(), *turns.turns_due()])


@transaction.atomic
def run_resume(*, run_id: int, note: str, decision: str | None = None) -> AgentRun:
    """Go on with a run waiting for review, the reviewer's note added to its store.

    Without `decision` the node that asked for review runs again (the judge decides anew,
    or the node whose output was invalid tries again); CONTINUE / REPLAN / FINALIZE pick
    the next node instead. RunNotResumable unless the run waits for review.
    """
    run = _run_locked(run_id)
    if run.status != AgentRun.Status.NEEDS_REVIEW:
        raise RunNotResumable(
            f"run {run.public_id} is {run.status}; only a run waiting for review can be resumed"
        )
    note = note.strip()
    if not note:
        raise InvalidInput("note must not be empty: say what the agent should know", field="note")
    if len(note) > NOTE_MAX:
        raise InvalidInput(f"note must be at most {NOTE_MAX} characters", field="note")
    shared = run.shared
    next_node = shared.get("review", {}).get("node") or run.next_node or "planner"
    if decision:
        decision = decision.strip().upper()
        if decision not in RESUME_DECISIONS:
            raise InvalidInput(
                f"decision must be one of {', '.join(RESUME_DECISIONS)}", field="decision"
            )
        next_node = RESUME_DECISIONS[decision]
        plan = shared.get("plan")
        if next_node == "executor" and (
            not plan or plan["current_step_index"] >= len(plan["steps"])
        ):
            raise InvalidInput(
                "decision CONTINUE: the plan has no steps left; use REPLAN or FINALIZE",
                field="decision",
            )
    if next_node == "executor" and not shared.get("plan"):
        next_node = "planner"
    shared["scratchpad"]["reviewer_notes"].append(note)
    shared["execution_history"].append(
        {
            "index": run.step_count,
            "node": "review",
            "summary": note[:500],
            "decision": decision or "",
        }
    )
    shared.pop("review", None)
    shared["status"] = "executing"
    run.shared = shared
    run.next_node = next_node
    run.status = AgentRun.Status.RUNNING
    run.review_note = "\n".join(filter(None, [run.review_note, note]))
    run.owner = ""
    run.heartbeat_at = timezone.now()  # queued again now: not stalled until the lease passes
    run.save()
    turns.run_start(run.pk)
    return run


@transaction.atomic
def run_reply(*, run_id: int, answer: str, user: Any) -> AgentRun:
    """Go on with a run that asked the asker questions (awaiting_input), `answer` added to
    the question every node reads; the judge decides again from its checkpoint (no
    finished node runs again). RunNotAwaitingInput unless the run waits for a reply.

    Only the run's owner replies (`user`; None is the server's operator, a command): the
    questions are the asker's, so staff, who may read and resume any run, get RunNotYours.
    """
    run = _run_locked(run_id)
    if user is not None and run.user_id != user.pk:
        raise RunNotYours(
            f"run {run.public_id} is another user's: only its owner answers its questions",
            extra={"run_id": run.public_id},
        )
    if run.status != AgentRun.Status.AWAITING_INPUT:
        raise RunNotAwaitingInput(
            f"run {run.public_id} is {run.status}; only a run that asked you a question "
            "(awaiting_input) takes a reply"
        )
    text_check({"answer": answer})  # every channel: an elicited answer is no tool argument
    answer = " ".join(answer.split())
    if not 1 <= len(answer) <= REPLY_MAX:
        raise InvalidInput(
            f"answer must be 1–{REPLY_MAX} characters: reply to the run's questions",
            field="answer",
        )
    shared = run.shared
    asked = "; ".join(run.questions)
    shared.setdefault("clarifications", []).append({"questions": run.questions, "answer": answer})
    shared["user_query"] += f"\nУточнение пользователя (на вопрос «{asked}»): {answer}"
    shared["execution_history"].append(
        {"index": run.step_count, "node": "user", "summary": answer[:500], "decision": ""}
    )
    shared["status"] = "judging"
    moved = AgentRun.objects.filter(pk=run.pk, status=AgentRun.Status.AWAITING_INPUT).update(
        shared=shared,
        status=AgentRun.Status.RUNNING,
        next_node="judge",
        questions=[],
        asked_at=None,
        owner="",
        heartbeat_at=timezone.now(),  # queued again now: not stalled until the lease passes
    )
    if not moved:  # answered or expired meanwhile (SQLite has no row lock to wait on)
        raise RunNotAwaitingInput(f"run {run.public_id} no longer waits for a reply")
    turns.run_start(run.pk)
    run.refresh_from_db()
    return run


def _run_locked(run_id: int) -> AgentRun:
    """The run, its row locked until the transaction ends; RunNotFound otherwise."""
    run = AgentRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise RunNotFound(f"run {run_id} does not exist", extra={"run_id": run_id})
    return run


def runs_expire_waiting() -> list[int]:
    """Runs whose questions went unanswered for NORMAGPT_INPUT_TIMEOUT: each answers with
    what it found, marked incomplete, and says so; their ids."""
    timeout = settings.NORMAGPT_INPUT_TIMEOUT
    before = timezone.now() - timedelta(seconds=timeout)
    expired = []
    for run_id in selectors.runs_waiting_since(before):
        with transaction.atomic():
            run = (
                AgentRun.objects.select_for_update()
                .filter(pk=run_id, status=AgentRun.Status.AWAITING_INPUT, asked_at__lt=before)
                .first()
            )
            if run is None:
                continue  # replied to, or expired by another process meanwhile
            shared = run.shared
            shared["incomplete_reason"] = (
                f"no reply to the run's questions within {timeout} s: answered with what was found"
            )
            shared["unanswered_questions"] = run.questions
            moved = AgentRun.objects.filter(
                pk=run.pk, status=AgentRun.Status.AWAITING_INPUT
            ).update(
                shared=shared,
                status=AgentRun.Status.RUNNING,
                next_node="finalizer",
                asked_at=None,
                owner="",
                heartbeat_at=timezone.now(),
            )
            if not moved:
                continue
            event_add(
                run.pk,
                RunEvent.Kind.CAP,
                f"no reply to the run's questions within {timeout} s: answered with what was found",
                node="judge",
            )
            turns.run_start(run.pk)
        expired.append(run_id)
    return expired


def corpus_reindex(
    *, codes: list[str] | None = None, progress: Callable[[str, int], None] | None = None
) -> tuple[int, int]:
    """Split the stored pages of the named documents (all when none) into clauses again,
    then count every search stem anew; (documents, distinct stems). DocumentNotFound for a
    code the corpus does not hold."""
    documents = NormDocument.objects.order_by("code")
    if codes:
        found = {code_key(code): code for code in codes}
        documents = documents.filter(code_key__in=list(found))
        missing = set(found) - set(documents.values_list("code_key", flat=True))
        if missing:
            names = ", ".join(found[key] for key in sorted(missing))
            raise DocumentNotFound(f"no document {names} in the corpus")
    count = 0
    for document_id, code in documents.values_list("pk", "code"):
        clauses = document_index(document_id=document_id, count_terms=False)
        count += 1
        if progress is not None:
            progress(code, clauses)
    return count, terms_recount()


@transaction.atomic
def document_ingest_start(*, document_id: int) -> None:
    """Mark the document's PDF `pending` and have it ingested in the background (going on
    from the pages an ingestion that stopped had rendered). IngestRunning while a live
    process ingests it."""
    document = NormDocument.objects.select_for_update().filter(pk=document_id).first()
    if document is None:
        raise DocumentNotFound(f"document {document_id} does not exist")
    if lease_held(document):
        raise IngestRunning(
            f"{document.code} is being ingested ({document.ingest_done} of "
            f"{document.ingest_total} pages rendered): wait for it to finish"
        )
    NormDocument.objects.filter(pk=document_id).update(
        ingest_status=NormDocument.Ingest.PENDING, ingest_error=""
    )
    background.start(INGEST_TASK, document_id)
