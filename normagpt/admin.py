"""Admin of the norms agent: documents with page thumbnails and PDF upload, runs with their
steps, and the review queue where a reviewer's note sends a run back to work."""

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
from normagpt.agent.texts import NODES, node_shown, text_shown
from normagpt.editions import (
    Reading,
    amendment_delete,
    amendment_read,
    amendment_text,
    amendments_apply,
    change_label,
    changes_required,
    changes_store,
    orders_store,
)
from normagpt.formatting import markdown_html, page_url, url_or_none
from normagpt.models import (
    AgentRun,
    AgentStep,
    ClaimCheck,
    LlmCall,
    NormAmendment,
    NormAmendmentChange,
    NormAmendmentOrder,
    NormClause,
    NormDocument,
    NormDocumentAlias,
    NormPage,
    ReviewQueueRun,
    RunEvent,
    Thread,
)


def thumbnail(page: NormPage, width: int = 90) -> SafeString:
    if not page.image:
        return format_html('<span class="empty">no image</span>')
    src = url_or_none("normagpt:page-image", page.pk) or page.image.url
    return format_html('<img src="{}" style="width:{}px;border:1px solid #ddd">', src, width)


class ReadOnlyInline(admin.TabularInline):
    """Rows shown with their parent, made elsewhere (ingestion, the agent): no adding,
    deleting or empty forms."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class NormPageInline(ReadOnlyInline):
    model = NormPage
    fields = ["number", "thumb", "clause_list", "has_text_layer", "ocr"]
    readonly_fields = ["number", "thumb", "clause_list", "has_text_layer", "ocr"]
    show_change_link = True
    ordering = ["number"]

    @admin.display(description=_("page"))
    def thumb(self, obj: NormPage) -> SafeString:
        return thumbnail(obj)

    @admin.display(description=_("clauses"))
    def clause_list(self, obj: NormPage) -> str:
        return ", ".join(obj.clauses[:20])


class AmendmentLinkInline(ReadOnlyInline):
    model = NormAmendment
    fields = ["number", "in_force_from", "title"]
    readonly_fields = ["number", "in_force_from", "title"]
    show_change_link = True


class AmendmentChangeFormSet(forms.BaseInlineFormSet):
    """The changes typed in. An uploaded file that states no change the reader can make (a
    scanned amendment with no text layer) is refused unless changes are typed in."""

    def clean(self) -> None:
        super().clean()
        reading: Reading | None = getattr(self.instance, "_file_reading", None)
        if reading is None or reading.changes:
            return
        typed = [f for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        if not typed:
            try:
                changes_required(reading)
            except DomainError as exc:
                raise forms.ValidationError(exc.message) from exc


class AmendmentChangeInline(admin.StackedInline):
    model = NormAmendmentChange
    formset = AmendmentChangeFormSet
    extra = 1
    fields = ["kind", "number", "mode", "part", "replaces", "text", "order", "applied"]
    readonly_fields = ["order", "applied"]


class AmendmentOrderInline(ReadOnlyInline):
    """The amendment's orders its file's reading did not apply, each with its reason."""

    model = NormAmendmentOrder
    fields = ["text", "targets", "reason"]
    readonly_fields = ["text", "targets", "reason"]


class NormAmendmentForm(forms.ModelForm):
    """An uploaded amendment file is read as the command reads it (`self.read`); whether it
    states a change is told with the changes typed in (`AmendmentChangeFormSet`)."""

    class Meta:
        model = NormAmendment
        fields = ["document", "number", "in_force_from", "title", "file"]

    def clean_file(self) -> Any:
        file = self.cleaned_data.get("file")
        self.read: Reading | None = None
        if file and "file" in self.changed_data:
            data = file.read()
            file.seek(0)
            try:
                self.read = amendment_read(amendment_text(data))
            except DomainError as exc:
                raise forms.ValidationError(exc.message) from exc
            self.instance._file_reading = self.read  # the inline formset reads it
        return file


@admin.register(NormAmendment)
class NormAmendmentAdmin(CasedAdmin):
    """An amendment as an entry: its clauses' new texts typed in, or read from its file (a
    PDF or UTF-8 text, as `manage.py normagpt_ingest FILE --amends CODE` reads it) when one
    is uploaded: the file's reading replaces the last file's and the entries typed in for
    what it names, and its orders the reader does not apply are kept and shown. Saving
    applies the edition's amendments anew."""

    form = NormAmendmentForm

    accusative = pgettext_lazy("accusative", "amendment")
    select_title = pgettext_lazy("admin title", "Select an amendment to edit")
    list_display = ["__str__", "document", "number", "in_force_from"]
    list_select_related = ["document"]
    search_fields = ["document__code", "title"]
    autocomplete_fields = ["document"]
    fields = ["document", "number", "in_force_from", "title", "file"]
    inlines = [AmendmentChangeInline, AmendmentOrderInline]

    def save_model(self, request: HttpRequest, obj: NormAmendment, form: Any, change: bool) -> None:
        before = NormAmendment.objects.filter(pk=obj.pk).values_list("document_id", flat=True)
        # the edition it belonged to (on the instance: one admin serves every request)
        obj._moved_from = before.first() if change else None  # type: ignore[attr-defined]
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        read: Reading | None = getattr(form, "read", None)
        if read is not None:
            self._file_kept(request, form.instance, read)
        amendments_apply(document_id=form.instance.document_id)
        for missed in form.instance.changes.filter(applied=False):
            self.message_user(
                request, _("not made: %(change)s") % {"change": change_label(missed)},
                messages.WARNING,
            )  # fmt: skip
        moved_from = getattr(form.instance, "_moved_from", None)
        if moved_from is not None and moved_from != form.instance.document_id:
            amendments_apply(document_id=moved_from)  # the edition it left: its texts back

    def _file_kept(self, request: HttpRequest, amendment: NormAmendment, read: Reading) -> None:
        """The file's reading stored in place of the last file's, and told."""
        changes_store(amendment, read.changes, every=False)
        orders_store(amendment, read.unread)
        if read.changes:
            numbers = ", ".join(dict.fromkeys(c.number for c in read.changes))
            self.message_user(request, _("read from the file: %(numbers)s") % {"numbers": numbers})
        for order in read.unread:
            self.message_user(
                request, _("not applied (a wording the reader does not know): %(order)s")
                % {"order": f"{order.shown} ({order.reason})"}, messages.WARNING,
            )  # fmt: skip

    def delete_model(self, request: HttpRequest, obj: NormAmendment) -> None:
        amendment_delete(amendment_id=obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[NormAmendment]) -> None:
        for pk in queryset.values_list("pk", flat=True):
            amendment_delete(amendment_id=pk)


class NormDocumentForm(forms.ModelForm):
    class Meta:
        model = NormDocument
        fields = [
            "code", "title", "kind", "status", "in_force_from", "in_force_to", "replaced_by",
            "file", "source", "is_sample",
        ]  # fmt: skip

    def clean_file(self) -> Any:
        file = self.cleaned_data.get("file")
        if file and hasattr(file, "read") and not file.name.lower().endswith(".pdf"):
            raise forms.ValidationError("upload a PDF file")
        return file


@admin.register(NormDocumentAlias)
class NormDocumentAliasAdmin(CasedAdmin):
    """The short names documents are known by: their codes' own (made at ingestion) and
    those a person adds («СП по бетону»); search resolves a named document through them."""

    list_display = ["alias", "document", "automatic"]
    list_filter = ["automatic"]
    search_fields = ["alias", "document__code"]
    list_select_related = ["document"]
    fields = ["document", "alias"]
    autocomplete_fields = ["document"]

    def save_model(
        self, request: HttpRequest, obj: NormDocumentAlias, form: Any, change: bool
    ) -> None:
        obj.automatic = False  # a person's: kept when the document is indexed again
        super().save_model(request, obj, form, change)


@admin.register(NormDocument)
class NormDocumentAdmin(CasedAdmin):
    form = NormDocumentForm
    list_display = [
        "code", "title", "kind", "status", "in_force_from", "in_force_to", "page_count",
        "ingest_status", "is_sample",
    ]  # fmt: skip
    list_filter = ["kind", "status", "ingest_status", "is_sample"]
    search_fields = ["code", "title"]
    readonly_fields = [
        "ingest_status", "ingest_progress", "ingest_error", "page_count", "created_at",
        "updated_at",
    ]  # fmt: skip
    inlines = [NormPageInline, AmendmentLinkInline]
    actions = ["reingest"]

    @admin.display(description=_("pages rendered"))
    def ingest_progress(self, obj: NormDocument) -> str:
        return f"{obj.ingest_done} / {obj.ingest_total}" if obj.ingest_total else "—"

    def save_model(self, request: HttpRequest, obj: NormDocument, form: Any, change: bool) -> None:
        """Save the form's fields only (an ingestion running meanwhile writes its status,
        lease and pages), then have an uploaded PDF ingested by a background task: the
        request renders nothing."""
        if change:
            obj.save(update_fields=[*form.fields, "code_key", "updated_at"])
        else:
            super().save_model(request, obj, form, change)
        if "file" in form.changed_data and obj.file:
            self._ingest(request, obj.pk)

    def _ingest(self, request: HttpRequest, document_id: int) -> None:
        try:
            services.document_ingest_start(document_id=document_id)
        except DomainError as exc:
            self.message_user(
                request, _("ingestion failed: %(reason)s") % {"reason": exc.message}, messages.ERROR
            )
        else:
            self.message_user(request, _("ingestion started: refresh to see the pages"))

    @admin.action(description=_("Ingest the PDF again"))
    def reingest(self, request: HttpRequest, queryset: QuerySet[NormDocument]) -> None:
        for pk in queryset.values_list("pk", flat=True):
            self._ingest(request, pk)


@admin.register(NormPage)
class NormPageAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "norm page")
    list_display = ["__str__", "thumb", "clause_list", "has_text_layer", "ocr"]
    list_filter = ["has_text_layer", "ocr", "document"]
    search_fields = ["text", "document__code"]
    list_select_related = ["document"]
    fields = ["document", "number", "preview", "clauses", "has_text_layer", "ocr", "text"]
    readonly_fields = ["document", "number", "preview", "clauses", "has_text_layer", "ocr", "text"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description=_("page"))
    def thumb(self, obj: NormPage) -> SafeString:
        return thumbnail(obj, 60)

    @admin.display(description=_("image"))
    def preview(self, obj: NormPage) -> SafeString:
        return thumbnail(obj, 600)

    @admin.display(description=_("clauses"))
    def clause_list(self, obj: NormPage) -> str:
        return ", ".join(obj.clauses[:12])


@admin.register(NormClause)
class NormClauseAdmin(CasedAdmin):
    """The clauses search ranks and claims are checked against (read-only: made from the
    pages at ingestion, and by `manage.py normagpt_reindex`)."""

    list_display = ["number", "kind", "document", "page_number", "heading_short"]
    list_filter = ["kind"]
    search_fields = ["=number", "text", "document__code"]
    list_select_related = ["document", "page"]
    fields = ["document", "page", "kind", "number", "heading", "text"]
    readonly_fields = ["document", "page", "kind", "number", "heading", "text"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("page"), ordering="page__number")
    def page_number(self, obj: NormClause) -> int:
        return obj.page.number

    @admin.display(description=_("heading"))
    def heading_short(self, obj: NormClause) -> str:
        return obj.heading if len(obj.heading) <= 80 else obj.heading[:77] + "…"


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
