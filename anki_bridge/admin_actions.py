"""Admin actions this app offers to other apps' admins (registered there).

`problems/admin.py` adds `send_problems_to_anki` to ProblemAdmin.actions.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from anki_bridge.problem_cards import PROBLEMS_MAX, problems_add
from core.exceptions import DomainError


@admin.action(description="Send to Anki (one note per problem)")
def send_problems_to_anki(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Any]
) -> None:
    """Notes in the default model for the selected problems (at most 50 per run)."""
    refs = [
        {"subject": p.subject, "exam": p.exam, "id": p.problem_id} for p in queryset[:PROBLEMS_MAX]
    ]
    try:
        result = problems_add(problems=refs)
    except DomainError as exc:
        modeladmin.message_user(request, exc.message, messages.ERROR)
        return
    queued = sum(1 for d in result.details if d.status == "queued")
    for detail in result.details:
        if detail.status == "error":
            modeladmin.message_user(request, detail.error or "failed", messages.ERROR)
    modeladmin.message_user(
        request,
        f"Anki: {result.added} added, {result.skipped} skipped, {queued} queued "
        "(delivered when Anki opens).",
        messages.SUCCESS if result.added or queued else messages.WARNING,
    )
