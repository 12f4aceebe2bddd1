"""Reads of the corpus and of the agent's runs (no writes, no network)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from core.holders import holder_gone
from normagpt.exceptions import DocumentNotFound, PageNotFound, RunNotFound
from normagpt.models import AgentRun, AgentStep, ClaimCheck, NormClause, NormDocument, NormPage


def runs_visible(viewer: AbstractBaseUser | AnonymousUser) -> QuerySet[AgentRun]:
    """The runs `viewer` may see, the one rule of every channel (pages, REST, MCP): staff
    every run (they review), a user their own, a signed-out visitor none."""
    if not viewer.is_authenticated:
        return AgentRun.objects.none()
    if getattr(viewer, "is_staff", False):
        return AgentRun.objects.all()
    return AgentRun.objects.filter(user_id=viewer.pk)


def _with_steps(runs: QuerySet[AgentRun]) -> QuerySet[AgentRun]:
    return runs.prefetch_related(
        Prefetch("steps", queryset=AgentStep.objects.order_by("index")),
        Prefetch("checks", queryset=ClaimCheck.objects.order_by("index")),
    )


def run_get(*, run_id: int, viewer: AbstractBaseUser | AnonymousUser | None = None) -> AgentRun:
    """The run with this primary key (inside the process: tasks, services) with its steps
    (in order); RunNotFound otherwise — also when `viewer` (if given) may not see it."""
    return _run_seen(viewer, run_id, pk=run_id)


def run_get_public(*, public_id: str, viewer: AbstractBaseUser | AnonymousUser | None) -> AgentRun:
    """The run with this public id — its id everywhere outside the process: URLs, resource
    URIs, tool arguments — with its steps (in order). RunNotFound otherwise, also when
    `viewer` may not see it: another's run is answered as if it did not exist. None is the
    server's operator (a management command), who sees every run."""
    return _run_seen(viewer, public_id, public_id=public_id)


def _run_seen(
    viewer: AbstractBaseUser | AnonymousUser | None, said: object, **lookup: object
) -> AgentRun:
    runs = runs_visible(viewer) if viewer is not None else AgentRun.objects.all()
    run = _with_steps(runs).select_related("thread").filter(**lookup).first()
    if run is None:
        raise RunNotFound(f"run {said} does not exist", extra={"run_id": said})
    return run


def run_list(
    *, status: str | None = None, viewer: AbstractBaseUser | AnonymousUser | None = None
) -> QuerySet[AgentRun]:
    """Runs, newest first; only those `viewer` may see when given."""
    qs = (
        (runs_visible(viewer) if viewer is not None else AgentRun.objects)
        .select_related("thread")
        .order_by("-created_at", "-id")
    )
    if status:
        qs = qs.filter(status=status)
    return qs


def runs_stalled() -> list[int]:
    """Runs an advancer held whose advancer died: their lease expired, or the advancer is
    a process of this host that no longer runs (`core.holders`). Ids, oldest first. A run
    no advancer took yet is no stalled one (`normagpt.turns.unstarted_requeue`)."""
    stale = timezone.now() - timedelta(seconds=settings.NORMAGPT_RUN_LEASE_SECONDS)
    going = AgentRun.objects.filter(status__in=[AgentRun.Status.QUEUED, AgentRun.Status.RUNNING])
    held = going.exclude(owner="")
    expired = held.filter(Q(heartbeat_at__lt=stale) | Q(heartbeat_at=None))
    alive = held.exclude(pk__in=expired).values_list("pk", "owner")
    gone = [pk for pk, owner in alive if holder_gone(owner)]
    return sorted([*expired.values_list("pk", flat=True), *gone])


def runs_waiting_since(before: datetime) -> list[int]:
    """Runs that asked a question before `before` and still wait for the reply."""
    return list(
        AgentRun.objects.filter(status=AgentRun.Status.AWAITING_INPUT, asked_at__lt=before)
        .order_by("id")
        .values_list("pk", flat=True)
    )


def run_is_stalled(*, run: AgentRun) -> bool:
    """Whether a run in progress lost its worker (no heartbeat within the lease, or its
    advancer a process of this host that no longer runs)."""
    if run.status not in (AgentRun.Status.QUEUED, AgentRun.Status.RUNNING):
        return False
    stale = timezone.now() - timedelta(seconds=settings.NORMAGPT_RUN_LEASE_SECONDS)
    return (run.heartbeat_at or run.created_at) < stale or bool(
        run.owner and holder_gone(run.owner)
    )


def document_list() -> QuerySet[NormDocument]:
    return NormDocument.objects.select_related("replaced_by").order_by("code")


def document_get(*, document_id: int) -> NormDocument:
    document = document_list().filter(pk=document_id).first()
    if document is None:
        raise DocumentNotFound(f"document {document_id} does not exist")
    return document


def page_list(*, document_id: int | None = None) -> QuerySet[NormPage]:
    qs = NormPage.objects.select_related("document").order_by("document__code", "number")
    if document_id is not None:
        qs = qs.filter(document_id=document_id)
    return qs


def page_get(*, page_id: int) -> NormPage:
    page = page_list().filter(pk=page_id).first()
    if page is None:
        raise PageNotFound(f"page {page_id} does not exist")
    return page


def clause_span(*, page: NormPage, number: str) -> tuple[int, int] | None:
    """Where clause `number` of the page's document is on the page, from its number to the
    next clause (its start, or the page's end when it runs on): the span in the page's
    text. A clause begun on an earlier page spans this page's top. None when it is not on
    the page."""
    number = number.strip().removeprefix("п.").removeprefix("табл.").strip()
    if not number:
        return None
    units = list(
        NormClause.objects.filter(document_id=page.document_id)
        .order_by("position")
        .values_list("number", "kind", "page__number", "start", "end")
    )
    for index, (unit_number, kind, on, start, end) in enumerate(units):
        if unit_number != number or kind == NormClause.Kind.TEXT:
            continue
        if on == page.number:
            return start, end
        following = units[index + 1] if index + 1 < len(units) else None
        if on == page.number - 1 and (following is None or following[2] >= page.number):
            return 0, following[3] if following and following[2] == page.number else len(page.text)
    return None
