"""Pages of the norms agent: ask, watch a run live, read a cited page."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.exceptions import DomainError
from core.text_rule import text_check
from normagpt import selectors, services, threads
from normagpt.agent.texts import decision_shown, node_shown, reasons_shown, text_shown
from normagpt.claims import value_spans
from normagpt.formatting import markdown_html
from normagpt.models import DOCUMENT_UPLOAD_TO, AgentRun, NormDocument

RECENT_RUNS = 20


def _sign_in(request: HttpRequest) -> HttpResponse:
    return redirect(f"{reverse('normagpt:login')}?next={request.path}")


@require_http_methods(["GET", "POST"])
def index(request: HttpRequest) -> HttpResponse:
    """The ask form and the user's recent runs (staff: everyone's); a signed-out visitor
    is sent to sign in (asking spends tokens; runs are their owners')."""
    if not request.user.is_authenticated:
        return _sign_in(request)
    question = ""
    if request.method == "POST":
        question = request.POST.get("question", "")
        try:
            text_check(dict(request.POST.lists()))
            run = services.run_create(
                question=question, user=request.user, as_of=request.POST.get("as_of") or None
            )
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            return redirect("normagpt:run", run_id=run.public_id)
    return render(
        request,
        "normagpt/index.html",
        {
            "runs": selectors.run_list(viewer=request.user)[:RECENT_RUNS],
            "documents": selectors.document_list(),
            "question": question,
            "configured": bool(settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY),
        },
    )


def _run_visible(request: HttpRequest, run_id: str) -> AgentRun:
    """The run; 404 for a run the user may not see (as if absent)."""
    try:
        return selectors.run_get_public(public_id=run_id, viewer=request.user)
    except DomainError as exc:
        raise Http404(exc.message) from exc


def _run_context(request: HttpRequest, run_id: str) -> dict[str, object]:
    """The run as its page shows it (see `_run_visible`)."""
    run = _run_visible(request, run_id)
    shared = run.shared or {}
    pages = {p["page_id"]: p for p in shared.get("retrieved_pages", [])}
    steps = []
    done = list(run.steps.all())
    for step in done:
        shown = [pages[p["page_id"]] for p in step.output.get("pages", []) if p["page_id"] in pages]
        steps.append(
            {
                "step": step,
                "pages": shown,
                "node": node_shown(step.node),
                "summary": text_shown(step.input_summary),
                "decision": decision_shown(step.decision),
            }
        )
    working = run.status == AgentRun.Status.RUNNING and bool(run.owner)
    since = done[-1].created_at if done else run.started_at
    return {
        "run": run,
        "working_on": node_shown(run.next_node) if working else "",
        "working_since": since if working else None,
        "working_seconds": (timezone.now() - since).total_seconds() if working and since else 0,
        "events": [
            {"event": e, "node": node_shown(e.node), "text": text_shown(e.message)}
            for e in run.events.all()
        ],
        "error": text_shown(run.error),
        "checks": list(run.checks.all()),
        "incomplete_reason": reasons_shown(run.incomplete_reason),
        "review_reason": text_shown(run.review_reason),
        "worked_seconds": worked_seconds(run),
        "plan": shared.get("plan"),
        "clarifications": shared.get("clarifications", []),
        "steps": steps,
        "answer_html": markdown_html(run.final_answer) if run.final_answer else "",
        "live": run.status in (AgentRun.Status.QUEUED, AgentRun.Status.RUNNING),
        "may_reply": run.user_id == request.user.pk,  # the questions are the asker's
    }


@require_GET
def run_detail(request: HttpRequest, run_id: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return _sign_in(request)
    return render(request, "normagpt/run.html", _run_context(request, run_id))


@require_http_methods(["GET", "POST"])
def thread_detail(request: HttpRequest, thread_id: str) -> HttpResponse:
    """A conversation: its questions and answers, oldest first, and a follow-up form (the
    new run is given the earlier turns as context)."""
    if not request.user.is_authenticated:
        return _sign_in(request)
    try:
        thread = threads.thread_get_public(public_id=thread_id, viewer=request.user)
    except DomainError as exc:
        raise Http404(exc.message) from exc
    question = ""
    if request.method == "POST":
        question = request.POST.get("question", "")
        try:
            text_check(dict(request.POST.lists()))
            run = services.run_create(question=question, user=request.user, thread=thread_id)
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            return redirect("normagpt:run", run_id=run.public_id)
    turns = [
        {"run": run, "answer_html": markdown_html(run.final_answer) if run.final_answer else ""}
        for run in threads.runs_of(thread)
    ]
    return render(
        request,
        "normagpt/thread.html",
        {"thread": thread, "turns": turns, "question": question},
    )


@require_POST
def run_reply(request: HttpRequest, run_id: str) -> HttpResponse:
    """The asker's answer to the run's questions, from the form on the run's page."""
    if not request.user.is_authenticated:
        return _sign_in(request)
    try:
        text_check(dict(request.POST.lists()))  # before the run is looked up
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("normagpt:run", run_id=run_id)
    run = _run_visible(request, run_id)
    try:
        services.run_reply(run_id=run.pk, answer=request.POST.get("answer", ""), user=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("normagpt:run", run_id=run.public_id)


@require_GET
def run_fragment(request: HttpRequest, run_id: str) -> HttpResponse:
    """The live part of the run page, polled while the run works."""
    if not request.user.is_authenticated:
        return _sign_in(request)
    return render(request, "normagpt/_run_body.html", _run_context(request, run_id))


@require_GET
def page_detail(request: HttpRequest, page_id: int) -> HttpResponse:
    try:
        page = selectors.page_get(page_id=page_id)
    except DomainError as exc:
        raise Http404(exc.message) from exc
    clause = request.GET.get("clause", "").strip()[:40]
    span = selectors.clause_span(page=page, number=clause)
    return render(
        request,
        "normagpt/page.html",
        {"page": page, "clause": clause, "text_html": clause_highlighted(page.text, span)},
    )


def clause_highlighted(text: str, span: tuple[int, int] | None) -> SafeString:
    """The page's text, escaped, with the cited clause marked whole (its `span`: from its
    number to the next clause) and each value in it in bold."""
    if span is None:
        return mark_safe(escape(text))  # noqa: S308 (escaped)
    start, end = span
    inner = text[start:end]
    parts, last = [], 0
    for a, b in value_spans(inner):
        parts += [escape(inner[last:a]), f'<strong class="value">{escape(inner[a:b])}</strong>']
        last = b
    parts.append(escape(inner[last:]))
    marked = f'{escape(text[:start])}<mark id="cited">{"".join(parts)}</mark>{escape(text[end:])}'
    return mark_safe(marked)  # noqa: S308 (every piece of text is escaped)


@require_GET
def document_file(request: HttpRequest, name: str) -> FileResponse:
    """An uploaded norm PDF at its MEDIA_URL (what the admin links to); only known files."""
    document = NormDocument.objects.filter(file=f"{DOCUMENT_UPLOAD_TO}{name}").first()
    if document is None or not document.file:
        raise Http404("no such document file")
    try:
        handle = document.file.open("rb")
    except FileNotFoundError as exc:
        raise Http404("the document file is missing from storage") from exc
    return FileResponse(handle, content_type="application/pdf", filename=name)


@require_GET
def page_image(request: HttpRequest, page_id: int) -> HttpResponseBase:
    """A page's image. A page keeps its id when its document is ingested again, its image
    then the new edition's: a cache keeps it but asks again each time (its ETag names the
    image stored, so the answer is a short 304 until the edition changes)."""
    try:
        page = selectors.page_get(page_id=page_id)
    except DomainError as exc:
        raise Http404(exc.message) from exc
    if not page.image:
        raise Http404("the page has no image")
    tag = '"' + hashlib.sha256(str(page.image.name).encode()).hexdigest()[:20] + '"'
    if tag in request.headers.get("If-None-Match", ""):
        response: HttpResponseBase = HttpResponseNotModified()
    else:
        response = FileResponse(page.image.open("rb"), content_type="image/jpeg")
    response["ETag"] = tag
    response["Cache-Control"] = "public, no-cache"
    return response


def worked_seconds(run: AgentRun) -> float:
    """The run's work: the seconds its nodes counted, or — when none finished (a run that
    failed while retrying the model) — the time from its start to its end (or now)."""
    if run.active_seconds or run.started_at is None:
        return run.active_seconds
    return ((run.finished_at or timezone.now()) - run.started_at).total_seconds()
