"""Admin of the norm corpus: documents with page thumbnails and PDF upload, their aliases
and abbreviations, pages and clauses, and the amendments that change them."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.admin import CasedAdmin
from core.exceptions import DomainError
from normagpt import services
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
from normagpt.formatting import url_or_none
from normagpt.models import (
    NormAbbreviation,
    NormAmendment,
    NormAmendmentChange,
    NormAmendmentOrder,
    NormClause,
    NormDocument,
    NormDocumentAlias,
    NormPage,
)


def thumbnail(page: NormPage, width: int = 90) -> SafeString:
    if not page.image:
        return format_html('<span class="empty">{}</span>', _("no image"))
    src = url_or_none("normagpt:page-image", page.pk) or page.image.url
    return format_html('<img src="{}" style="width:{}px;border:1px solid #ddd">', src, width)


class ReadOnlyInline(admin.TabularInline):
    """Rows shown with their parent, made elsewhere (ingestion, the agent): no adding,
    deleting or empty forms."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


PAGES_SHOWN = 30  # a document's first pages on its form; the rest in the pages' list


def pages_shown(document: NormDocument) -> SafeString:
    """The document's first PAGES_SHOWN pages (thumbnail, clauses, a link to each) and a
    link to all of them: as no inline, a form of 3,000 pages sent 6,000 hidden fields on
    every save (Django refuses past 1,000) and took seconds to draw."""
    if document.pk is None:
        return mark_safe("—")
    pages = document.pages.order_by("number")[:PAGES_SHOWN]
    rows = format_html_join(
        "",
        '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td></tr>',
        (
            (
                reverse("admin:normagpt_normpage_change", args=[page.pk]),
                page.number,
                thumbnail(page),
                ", ".join(page.clauses[:20]),
            )
            for page in pages
        ),
    )
    every = reverse("admin:normagpt_normpage_changelist") + f"?document__id__exact={document.pk}"
    count = document.pages.count()
    return format_html(
        '<table>{}</table><p><a href="{}">{}</a></p>',
        rows,
        every,
        _("All %(count)s pages of the document") % {"count": count},
    )


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


@admin.register(NormAbbreviation)
class NormAbbreviationAdmin(CasedAdmin):
    """The abbreviations documents define (read-only: read from their lists at indexing);
    a question saying the words finds the clauses writing the abbreviation."""

    list_display = ["short", "expansion", "document"]
    search_fields = ["short", "expansion", "document__code"]
    list_select_related = ["document"]
    fields = ["document", "short", "expansion"]
    readonly_fields = ["document", "short", "expansion"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


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
        "updated_at", "pages_list",
    ]  # fmt: skip
    inlines = [AmendmentLinkInline]

    @admin.display(description=_("pages"))
    def pages_list(self, obj: NormDocument) -> SafeString:
        return pages_shown(obj)

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

    @admin.action(description=_("Ingest the PDF again"), permissions=["change"])
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
