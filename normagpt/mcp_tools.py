"""MCP tools of the NormaGPT agent on Russian construction norms."""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import date
from typing import Annotated, Literal

import anyio
import anyio.from_thread
from django.contrib.auth.base_user import AbstractBaseUser
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, Field, WithJsonSchema

from core.identity import mcp_caller
from core.registry import ToolRegistry
from core.tooling import Format, call_cancelled_raise, respond, thread_progress
from normagpt import editions, formatting, mcp_content, schemas, selectors, services
from normagpt.exceptions import RunNotAwaitingInput
from normagpt.models import AgentRun
from normagpt.recovery import serving_process_start

registry = ToolRegistry(
    app="normagpt",
    title="NormaGPT",
    description=(
        "An agent that answers questions on Russian construction norms (ГОСТ, СП, СНиП) "
        "from a corpus of norm documents — plan, search, judge, answer — citing the "
        "clauses and pages it rests on."
    ),
    on_serve=serving_process_start,  # no broker: this process advances and resumes runs
)

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.25
# A run id comes from normagpt_ask: its bounds are checked, not advertised.
RunId = Annotated[
    str,
    Field(min_length=1, max_length=32),
    WithJsonSchema({"type": "string", "description": "From normagpt_ask."}),
]
Wait = Annotated[
    int,
    Field(
        ge=0,
        le=300,
        description="Then the run's status.",
    ),
]


class Reply(BaseModel):
    answer: str = Field(min_length=1, max_length=services.REPLY_MAX, description="Your answer.")


AsOf = Annotated[date | None, Field(description="Editions in force that day (default today).")]


def run_wait(
    run_id: int, wait_seconds: int, ctx: Context | None, caller: AbstractBaseUser
) -> AgentRun:
    """Poll the run until it stops working or `wait_seconds` pass, reporting each new node.
    A run that asks the asker a question is answered through the client (MCP elicitation)
    when the client can ask its user and `caller` is the run's owner (only the asker
    replies), and goes on with the reply."""
    report = thread_progress(ctx)
    deadline = time.monotonic() + wait_seconds
    seen = 0
    if report is not None:
        report(0, message="queued")
    while True:
        run = selectors.run_get(run_id=run_id)
        asks_caller = run.status == AgentRun.Status.AWAITING_INPUT and run.user_id == caller.pk
        if asks_caller and ctx is not None:
            answer = elicited(ctx, run, deadline - time.monotonic())
            if answer is not None:
                # answered on another channel, or expired, while the user typed: go on
                with contextlib.suppress(RunNotAwaitingInput):
                    services.run_reply(run_id=run.pk, answer=answer, user=caller)
                continue
        for step in run.steps.all()[seen:]:
            if report is None:
                break
            decision = f" → {step.decision}" if step.decision else ""
            report(step.index + 1, message=f"{step.node}{decision}: {step.input_summary}"[:300])
            seen = step.index + 1
        working = run.status in (AgentRun.Status.QUEUED, AgentRun.Status.RUNNING)
        if not working or time.monotonic() >= deadline:
            return run
        call_cancelled_raise()  # the client cancelled the call: its thread is let go now
        time.sleep(POLL_SECONDS)


def elicited(ctx: Context, run: AgentRun, seconds: float) -> str | None:
    """The user's answer to the run's questions, asked through the client within `seconds`;
    None when the client cannot ask (no elicitation, no back channel), the user declines,
    or no answer comes in time (the run keeps waiting for normagpt_reply)."""
    capabilities = ctx.client_capabilities
    if seconds <= 0 or capabilities is None or capabilities.elicitation is None:
        return None
    message = "\n".join(
        [f"To answer «{run.question[:300]}» the agent needs to know:", *run.questions]
    )

    async def ask() -> str | None:
        with anyio.move_on_after(seconds):
            result = await ctx.elicit(message, Reply)
            return result.data.answer if result.action == "accept" else None
        return None

    try:
        return anyio.from_thread.run(ask)
    except Exception as exc:  # no back channel (a 2026-07-28 session, stateless HTTP): the
        # reply comes by normagpt_reply
        logger.info("run %s: the client could not ask its user: %s", run.public_id, exc)
        return None


def run_respond(run: AgentRun, response_format: str) -> CallToolResult:
    """The run for the model; a failed run is a failed call (`isError: true`)."""
    result = respond(formatting.run_as_dict(run), formatting.run_markdown(run), response_format)
    result.is_error = run.status == AgentRun.Status.FAILED
    return result


@registry.tool(
    name="normagpt_ask",
    title="Ask about construction norms",
    output_model=schemas.RunOut,
    read_only=False,
    open_world=True,
)
def ask(
    question: Annotated[
        str,
        Field(
            min_length=5,
            max_length=2000,
            description="The question on construction norms, in Russian.",
        ),
    ],
    thread: Annotated[
        str | None,
        Field(max_length=32, description="A follow-up: the thread of an earlier answer."),
    ] = None,
    as_of: AsOf = None,
    wait_seconds: Wait = 120,
    response_format: Format = "markdown",
    ctx: Context | None = None,
) -> CallToolResult:
    """Ask the norms agent: it plans, searches the norms, judges and answers with the clauses and pages it rests on.

    A run still working after wait_seconds, or waiting for a person, returns its id and status.
    """
    caller = mcp_caller(ctx)
    run = services.run_create(question=question, user=caller, thread=thread, as_of=as_of)
    run = run_wait(run.pk, wait_seconds, ctx, caller)
    return run_respond(run, response_format)


@registry.tool(
    name="normagpt_get_run",
    title="NormaGPT run",
    read_only=True,
    open_world=False,
)
def get_run(
    run_id: RunId, response_format: Format = "markdown", ctx: Context | None = None
) -> CallToolResult:
    """A run's status, steps so far, and answer with sources once completed, as normagpt_ask gives it."""
    run = selectors.run_get_public(public_id=run_id, viewer=mcp_caller(ctx))
    return run_respond(run, response_format)


@registry.tool(
    name="normagpt_resume",
    title="Resume a NormaGPT run",
    read_only=False,
    open_world=True,
)
def resume(
    run_id: RunId,
    note: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2000,
            description="The reviewer's note: what the agent should know or do.",
        ),
    ],
    decision: Annotated[
        Literal["CONTINUE", "REPLAN", "FINALIZE"] | None,
        Field(
            description=(
                "CONTINUE (next plan step), REPLAN or FINALIZE (answer now); omitted: the "
                "node that asked decides again with the note."
            )
        ),
    ] = None,
    wait_seconds: Wait = 120,
    response_format: Format = "markdown",
    ctx: Context | None = None,
) -> CallToolResult:
    """Resume a run waiting for review (needs_review) with a reviewer's note; the run as normagpt_ask gives it."""
    caller = mcp_caller(ctx)
    run = selectors.run_get_public(public_id=run_id, viewer=caller)
    services.run_resume(run_id=run.pk, note=note, decision=decision)
    run = run_wait(run.pk, wait_seconds, ctx, caller)
    return run_respond(run, response_format)


@registry.tool(
    name="normagpt_search_norms",
    title="Search the norms corpus",
    output_model=schemas.SearchOut,
    read_only=True,
    open_world=False,
)
def search_norms(
    keywords: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=services.KEYWORD_CHARS)]],
        Field(
            min_length=1,
            max_length=12,
            description="Words or phrases in Russian, as norms word them.",
        ),
    ],
    expected_documents: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=100)]],
        Field(
            max_length=8,
            description="Document codes (or their prefixes) to rank first, e.g. 'СП 63'.",
        ),
    ] = [],  # noqa: B006 (pydantic copies defaults)
    limit: Annotated[int, Field(ge=1, le=50, description="How many pages.")] = 10,
    as_of: AsOf = None,
    response_format: Format = "markdown",
) -> CallToolResult:
    """Search the norm documents: ranked pages with clause numbers, snippet and image URL; editions not in force marked."""
    hits = services.pages_search(
        keywords=keywords,
        expected_documents=expected_documents,
        limit=limit,
        as_of=editions.day_of(as_of),
    )
    data = formatting.search_as_dict(keywords, expected_documents, hits)
    if response_format != "markdown":  # the text is the data's JSON: no page written
        return respond(data, "", response_format)
    empty = not hits and not selectors.document_list().exists()
    text = formatting.search_markdown(data["hits"], corpus_empty=empty, searched=data)
    return respond(data, text, response_format)


@registry.tool(
    name="normagpt_reply",
    title="Reply to a NormaGPT run",
    read_only=False,
    open_world=True,
)
def reply(
    run_id: RunId,
    answer: Annotated[
        str,
        Field(
            min_length=1,
            max_length=services.REPLY_MAX,
            description="Your answer to the run's questions.",
        ),
    ],
    wait_seconds: Wait = 120,
    response_format: Format = "markdown",
    ctx: Context | None = None,
) -> CallToolResult:
    """Answer the questions a run asked (awaiting_input); it goes on. The run as normagpt_ask gives it."""
    caller = mcp_caller(ctx)
    run = selectors.run_get_public(public_id=run_id, viewer=caller)
    services.run_reply(run_id=run.pk, answer=answer, user=caller)
    run = run_wait(run.pk, wait_seconds, ctx, caller)
    return run_respond(run, response_format)


mcp_content.register(registry)
