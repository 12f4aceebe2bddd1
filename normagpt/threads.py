"""Threads: a follow-up question («а для фундамента?») is asked with the earlier turns of
its conversation — their questions, answers and sources — as context, newest kept first
when they do not all fit in NORMAGPT_THREAD_CONTEXT_TOKENS."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet

from normagpt.exceptions import ThreadNotFound
from normagpt.models import AgentRun, Thread
from normagpt.parsing import clause_label

CHARS_PER_TOKEN = 2  # cl100k on Russian norm prose: about 2 characters a token (measured)
ANSWER_CHARS = 1500  # one earlier answer at most, before the budget
TITLE_CHARS = 200


def threads_visible(viewer: AbstractBaseUser | AnonymousUser) -> QuerySet[Thread]:
    """The threads `viewer` may see, by the runs' rule: staff all, a user their own."""
    if not viewer.is_authenticated:
        return Thread.objects.none()
    if getattr(viewer, "is_staff", False):
        return Thread.objects.all()
    return Thread.objects.filter(user_id=viewer.pk)


def thread_get_public(*, public_id: str, viewer: AbstractBaseUser | AnonymousUser | None) -> Thread:
    """The thread with this public id; ThreadNotFound (naming `thread`) when it does not
    exist or `viewer` may not see it. None is the server's operator, who sees all."""
    threads = threads_visible(viewer) if viewer is not None else Thread.objects.all()
    thread = threads.filter(public_id=public_id).first()
    if thread is None:
        raise ThreadNotFound(
            f"thread {public_id} does not exist: pass a thread id from one of your answers",
            extra={"field": "thread", "thread": public_id},
        )
    return thread


def turns(thread: Thread) -> list[dict[str, Any]]:
    """The thread's answered runs, oldest first: question, answer, sources."""
    runs = thread.runs.exclude(final_answer="").order_by("created_at", "id")
    return [
        {
            "run": run.public_id,
            "question": " ".join(
                [run.question]
                + [
                    f"(уточнение: {c['answer']})"
                    for c in (run.shared or {}).get("clarifications", [])
                ]
            ),
            "answer": run.final_answer,
            "sources": [
                f"{s['document']}"
                + (f" {clause_label(s['clause'])}" if s.get("clause") else "")
                + f", стр. {s['page']}"
                for s in run.sources
            ],
        }
        for run in runs.only("public_id", "question", "final_answer", "sources", "shared")
    ]


def context_text(earlier: list[dict[str, Any]], budget_tokens: int | None = None) -> str:
    """The earlier turns as the nodes read them, within `budget_tokens` (the setting): the
    newest turns first, older ones left out once the budget is spent; '' without any."""
    budget = (budget_tokens or settings.NORMAGPT_THREAD_CONTEXT_TOKENS) * CHARS_PER_TOKEN
    kept: list[str] = []
    for turn in reversed(earlier):
        answer = turn["answer"]
        if len(answer) > ANSWER_CHARS:
            answer = answer[:ANSWER_CHARS] + "…"
        block = f"Вопрос: {turn['question']}\nОтвет: {answer}"
        if turn["sources"]:
            block += "\nИсточники: " + "; ".join(turn["sources"])
        room = budget - sum(map(len, kept))
        if len(block) > room:
            if not kept:  # the last turn alone is over the budget: its start
                kept.append(block[: max(0, room - 1)] + "…")
            break
        kept.append(block)
    if not kept:
        return ""
    head = "Ранее в этой беседе (контекст; отвечай на новый вопрос):"
    return "\n\n".join([head, *reversed(kept)])


def runs_of(thread: Thread) -> QuerySet[AgentRun]:
    """The thread's runs, oldest first (its conversation)."""
    return thread.runs.order_by("created_at", "id")
