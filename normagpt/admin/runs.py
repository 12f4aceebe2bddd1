"""Admin of the agent's runs: each with its steps, claim checks and events; the review
queue, where a reviewer's note sends a run back to work; threads and the model calls."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.admin import CasedAdmin
from core.exceptions import DomainError
from normagpt import services
from normagpt.admin.corpus import ReadOnlyInline
from normagpt.agent.texts import NODES, node_shown, text_shown
from normagpt.formatting import markdown_html, page_url, url_or_none
from normagpt.models import (
    AgentRun,
    AgentStep,
    ClaimCheck,
    LlmCall,
    ReviewQueueRun,
    RunEvent,
    Thread,
)


class ClaimCheckInline(ReadOnlyInline):
    """Every claim of the answer (and the executor's quotes) against the clause it cites."""

    model = ClaimCheck
    fields = ["index", "origin", "verdict", "claim", "reference", "page_link", "reason"]
    readonly_fields = ["index", "origin", "verdict", "claim", "reference", "page_link", "reason"]
    ordering = ["index"]

    @admin.display(description=_("page"))
    def page_link(self, obj: ClaimCheck) -> SafeString:
        url = page_url(obj.page_id, obj.clause_number) if obj.page_id else None
        if not url:
            return format_html("{}", obj.page_number or "—")
        return format_html('<a href="{}">{}</a>', url, obj.page_number)


class AgentStepInline(ReadOnlyInline):
    model = AgentStep
    fields = ["index", "node", "input_summary", "decision", "output", "duration", "tokens"]
    readonly_fields = ["index", "node", "input_summary", "decision", "output", "duration", "tokens"]
    ordering = ["index"]

    @admin.display(description=_("tokens"))
    def tokens(self, obj: AgentStep) -> int:
        return obj.prompt_tokens + obj.completion_tokens


class RunEventInline(ReadOnlyInline):
    """Takeovers, failed model calls, caps, failures: what happened besides the nodes."""

    model = RunEvent
    fields = ["created_at", "kind", "node", "message"]
    readonly_fields = ["created_at", "kind", "node", "message"]
    ordering = ["created_at", "id"]


class ReviewForm(forms.ModelForm):
    reviewer_note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=services.NOTE_MAX,
        help_text="For a run waiting for review: what the agent should know. Saving resumes it.",
    )
    decision = forms.ChoiceField(
        choices=[
            ("", "the node that asked decides again"),
            *[(d, d) for d in services.RESUME_DECISIONS],
        ],
        required=False,
    )

    class Meta:
        model = AgentRun
        fields: list[str] = []


@admin.register(AgentRun)
class AgentRunAdmin(CasedAdmin):
    form = ReviewForm
    list_display = [
        "public_id", "short_question", "user", "status", "incomplete", "llm_calls", "run_tokens",
        "cost_estimate", "created_at",
    ]  # fmt: skip
    list_filter = ["status", "incomplete"]
    list_select_related = ["user"]
    # the id a user quotes (from a page URL, a tool's answer) finds the run
    search_fields = ["=public_id", "question", "final_answer"]
    inlines = [ClaimCheckInline, RunEventInline, AgentStepInline]
    readonly_fields = [
        "question", "status", "page_link", "answer_html", "sources", "incomplete",
        "incomplete_reason", "review_reason", "review_note", "error", "llm_calls", "prompt_tokens",
        "completion_tokens", "cost_estimate", "next_node", "step_count", "created_at",
        "started_at", "finished_at", "user", "thread",
    ]  # fmt: skip

    @admin.display(description=_("tokens"))
    def run_tokens(self, obj: AgentRun) -> int:
        return obj.tokens

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        waiting = obj is not None and obj.status == AgentRun.Status.NEEDS_REVIEW
        return [*(["reviewer_note", "decision"] if waiting else []), *self.readonly_fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description=_("question"))
    def short_question(self, obj: AgentRun) -> str:
        return obj.question if len(obj.question) <= 80 else obj.question[:77] + "…"

    @admin.display(description=_("answer"))
    def answer_html(self, obj: AgentRun) -> SafeString:
        return markdown_html(obj.final_answer)

    @admin.display(description=_("live page"))
    def page_link(self, obj: AgentRun) -> SafeString:
        url = url_or_none("normagpt:run", obj.public_id)
        return format_html('<a href="{}">{}</a>', url, url) if url else format_html("—")

    def save_model(self, request: HttpRequest, obj: AgentRun, form: Any, change: bool) -> None:
        """Runs are read-only; a reviewer's note on a run waiting for review resumes it."""
        note = form.cleaned_data.get("reviewer_note", "")
        if not note:
            return
        try:
            services.run_resume(
                run_id=obj.pk,
                note=note,
                decision=form.cleaned_data.get("decision") or None,
            )
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
        else:
            self.message_user(
                request, _("run %(id)s resumed with the reviewer's note") % {"id": obj.public_id}
            )

    def response_change(self, request: HttpRequest, obj: AgentRun) -> Any:
        from django.http import HttpResponseRedirect

        return HttpResponseRedirect(reverse("admin:normagpt_agentrun_change", args=[obj.pk]))


class ThreadRunInline(ReadOnlyInline):
    model = AgentRun
    fields = ["public_id", "question", "status", "created_at"]
    readonly_fields = ["public_id", "question", "status", "created_at"]
    show_change_link = True
    ordering = ["created_at", "id"]


@admin.register(Thread)
class ThreadAdmin(CasedAdmin):
    """Conversations: the runs asked one after another, each given the earlier turns."""

    accusative = pgettext_lazy("accusative", "thread")
    list_display = ["public_id", "title", "user", "created_at", "updated_at"]
    list_select_related = ["user"]
    search_fields = ["=public_id", "title"]
    readonly_fields = ["public_id", "title", "user", "created_at", "updated_at"]
    inlines = [ThreadRunInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ReviewQueueRun)
class ReviewQueueAdmin(AgentRunAdmin):
    """Runs waiting for a person: open one, write a note, save."""

    list_display = ["public_id", "short_question", "user", "review_reason", "created_at"]
    list_filter = []

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentRun]:
        return super().get_queryset(request).filter(status=AgentRun.Status.NEEDS_REVIEW)

    def response_change(self, request: HttpRequest, obj: AgentRun) -> Any:
        from django.http import HttpResponseRedirect

        return HttpResponseRedirect(reverse("admin:normagpt_reviewqueuerun_changelist"))


class NodeFilter(admin.SimpleListFilter):
    """The agent's nodes by their names in the page's language (stored: `planner`)."""

    title = _("node")
    parameter_name = "node"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [(node, name) for node, name in NODES.items() if node != "user"]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(node=self.value()) if self.value() else queryset


@admin.register(LlmCall)
class LlmCallAdmin(CasedAdmin):
    list_display = [
        "id", "run", "node_name", "step_index", "ok", "prompt_tokens", "completion_tokens",
        "duration", "error_text",
    ]  # fmt: skip
    list_filter = ["ok", NodeFilter]
    list_select_related = ["run"]

    @admin.display(description=_("node"), ordering="node")
    def node_name(self, call: LlmCall) -> str:
        return node_shown(call.node)

    @admin.display(description=_("error"))
    def error_text(self, call: LlmCall) -> str:
        return text_shown(call.error)  # stored in English: the page's language

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
