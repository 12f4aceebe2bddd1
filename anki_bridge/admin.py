"""Admin of the Anki bridge: the journal (by status and deck) with "send again" and "export
as an Anki package", the media, the review sessions and the journal of note edits; and the
problem bank's "Send to Anki" (`problems_admin_extend`), registered from here because this
app builds on the problems app, not the other way round."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from anki_bridge.journal import notes_resend
from anki_bridge.ledger import row_fault
from anki_bridge.models import AnkiPackage, Media, Note, NoteChange, ReviewCard, ReviewSession
from anki_bridge.notemodel import DEFAULT_MODEL
from anki_bridge.problem_cards import problem_note, problems_add
from anki_bridge.services import PROBLEMS_MAX
from core.admin import CasedAdmin, left_out
from core.exceptions import DomainError

if TYPE_CHECKING:
    from anki_bridge.packages import BuiltPackage


class NoteForm(forms.ModelForm):
    """A journal row written by hand is checked as a note Anki can take (`row_fault`): a
    row that is not would fail its delivery."""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if any(name in self.errors for name in ("fields", "tags", "media")):
            return data  # each said already
        fault = row_fault(data.get("fields"), data.get("tags", []), data.get("media", []))
        if fault is not None:
            name, _sep, rule = fault.partition(": ")
            self.add_error(name, rule)
        return data


SEND_AGAIN_MAX = 500  # notes «Send again» takes in one request (Anki slows with a batch's size)


@admin.register(Note)
class NoteAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "note")
    form = NoteForm
    list_display = [
        "id",
        "first_field",
        "deck",
        "model",
        "status",
        "anki_note_id",
        "placed",
        "attempts",
        "dedup_key",
        "created_at",
    ]
    list_filter = ["status", "placed", "model", "source"]  # a deck is searched, not listed
    search_fields = ["dedup_key", "last_error", "deck"]
    readonly_fields = [
        "status",
        "anki_note_id",
        "placed",
        "unanswered_since",
        "owner",
        "attempts",
        "last_error",
        "warnings",
        "claim",
        "claimed_until",
        "created_at",
        "updated_at",
        "sent_at",
        "source",
    ]
    actions = ["send_again", "export_package"]
    list_per_page = 100

    @admin.display(description=_("first field"))
    def first_field(self, obj: Note) -> str:
        values = obj.fields.values() if isinstance(obj.fields, dict) else [obj.fields]
        text = " ".join(str(next(iter(values), "")).split())
        return text if len(text) <= 80 else text[:77] + "…"

    @admin.action(description=_("Send again to Anki"), permissions=["change"])
    def send_again(self, request: HttpRequest, queryset: QuerySet[Note]) -> None:
        sent_already = queryset.filter(status=Note.Status.SENT).count()
        waiting = queryset.exclude(status=Note.Status.SENT).order_by("pk")
        left_out(self, request, waiting, SEND_AGAIN_MAX)  # a request, not minutes of one
        ids = list(waiting.values_list("pk", flat=True)[:SEND_AGAIN_MAX])
        if sent_already:
            self.message_user(
                request,
                _("%(count)s note(s) are already in Anki: not sent again.")
                % {"count": sent_already},
                messages.INFO,
            )
        if not ids:
            return
        try:
            outcome = notes_resend(note_ids=ids)
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        level = messages.SUCCESS if not (outcome.failed or outcome.duplicate) else messages.WARNING
        self.message_user(
            request,
            _("Sent %(sent)s; duplicates %(duplicate)s; failed %(failed)s.")
            % {"sent": outcome.sent, "duplicate": outcome.duplicate, "failed": outcome.failed},
            level,
        )

    @admin.action(description=_("Export as an Anki package (.apkg)"))
    def export_package(self, request: HttpRequest, queryset: QuerySet[Note]) -> HttpResponse | None:
        """The selected rows as a package download, as they were written (issue 53, item
        3); the files the journal no longer keeps are named in a message."""
        from anki_bridge.packages import journal_package_build

        try:
            made = journal_package_build(note_ids=list(queryset.values_list("pk", flat=True)))
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return None
        if made.missing_media:
            self.message_user(
                request,
                _(
                    "The package shows %(count)s file(s) that were delivered to Anki and are "
                    "no longer kept here; the notes keep their image tags: %(files)s"
                )
                % {"count": len(made.missing_media), "files": ", ".join(made.missing_media)},
                messages.WARNING,
            )
        for line in made.left_out:
            self.message_user(request, _("Not exported: %(why)s") % {"why": line}, messages.WARNING)
        return _apkg_response(made.built)


def _apkg_response(built: BuiltPackage) -> HttpResponse:
    from anki_bridge.packages import package_file_name

    response = HttpResponse(built.data, content_type="application/apkg")
    name = quote(package_file_name(built.deck))
    response["Content-Disposition"] = f"attachment; filename*=UTF-8''{name}"
    return response


@admin.register(Media)
class MediaAdmin(CasedAdmin):
    list_display = ["filename", "size", "waiting", "touched_at"]
    search_fields = ["filename", "sha1"]
    exclude = ["data"]
    readonly_fields = ["filename", "sha1", "size", "touched_at", "created_at"]

    @admin.display(description=_("bytes kept"), boolean=True)
    def waiting(self, obj: Media) -> bool:
        return obj.data is not None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class ReviewCardInline(admin.TabularInline):
    model = ReviewCard
    fields = ["position", "card_id", "kind", "state", "ease", "revealed_at", "rated_at"]
    readonly_fields = ["position", "card_id", "kind", "state", "ease", "revealed_at", "rated_at"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(ReviewSession)
class ReviewSessionAdmin(CasedAdmin):
    """Review sessions as the tools hold them: read-only (the tools move the cards)."""

    accusative = pgettext_lazy("accusative", "review session")
    list_display = ["public_id", "deck", "owner", "include_new", "created_at", "expires_at"]
    list_filter = ["include_new", "deck"]
    search_fields = ["public_id", "deck", "owner__username"]
    readonly_fields = ["public_id", "owner", "deck", "include_new", "created_at", "expires_at"]
    inlines = [ReviewCardInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(NoteChange)
class NoteChangeAdmin(CasedAdmin):
    """The journal of note edits (anki.update_note): what was asked, what it replaced."""

    accusative = pgettext_lazy("accusative", "note change")
    list_display = ["id", "anki_note_id", "status", "owner", "created_at", "sent_at"]
    list_filter = ["status"]
    search_fields = ["anki_note_id", "last_error"]
    readonly_fields = [
        "anki_note_id", "fields", "tags", "before", "status", "last_error", "owner",
        "created_at", "sent_at",
    ]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(AnkiPackage)
class AnkiPackageAdmin(CasedAdmin):
    """Anki packages users made (anki.export_package), until they expire."""

    accusative = pgettext_lazy("accusative", "Anki package")
    list_display = ["name", "owner", "notes", "cards", "media", "size", "created_at", "expires_at"]
    # the owner searched by name, not listed: a filter of every user drew 50,000 links
    search_fields = ["name", "deck", "public_id", "owner__username"]
    readonly_fields = [
        "public_id", "owner", "name", "deck", "file", "notes", "cards", "media", "size",
        "created_at", "expires_at",
    ]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.action(description=_("Send to Anki (one note per problem)"))
def send_to_anki(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any]
) -> None:
    """Notes in the default model for the selected problems (at most 50 per run), the
    journal's rows the sender's; only for staff who may add notes."""
    if not request.user.has_perm("anki_bridge.add_note"):
        modeladmin.message_user(
            request, _("You may not add notes to the Anki journal."), messages.ERROR
        )
        return
    refs = [
        {"subject": p.subject, "exam": p.exam, "id": p.problem_id} for p in queryset[:PROBLEMS_MAX]
    ]
    left_out(modeladmin, request, queryset, PROBLEMS_MAX)
    try:
        result = problems_add(problems=refs, owner=request.user.pk)
    except DomainError as exc:
        modeladmin.message_user(request, exc.message, messages.ERROR)
        return
    queued = sum(1 for d in result.details if d.status == "queued")
    for detail in result.details:
        if detail.status == "error":
            modeladmin.message_user(request, detail.error or _("failed"), messages.ERROR)
    modeladmin.message_user(
        request,
        _(
            "Anki: %(added)s added, %(skipped)s skipped, %(queued)s queued "
            "(delivered when Anki opens)."
        )
        % {"added": result.added, "skipped": result.skipped, "queued": queued},
        messages.SUCCESS if result.added or queued else messages.WARNING,
    )


@admin.action(description=_("Export as an Anki package (.apkg)"))
def export_package(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Any]
) -> HttpResponse | None:
    """The selected problems (at most 50) as an `.apkg` download: a card per problem, its
    condition and figures on the front, the answer and solution on the back; for AnkiDroid,
    AnkiMobile or Anki with no AnkiConnect (issue 53, item 3)."""
    from anki_bridge.packages import package_build

    left_out(modeladmin, request, queryset, PROBLEMS_MAX)
    chosen = list(queryset.order_by("exam", "subject", "problem_id")[:PROBLEMS_MAX])
    try:
        built = package_build(
            items=[problem_note(problem) for problem in chosen],
            deck="СДАМ ГИА",
            model=DEFAULT_MODEL.name,
        )
    except DomainError as exc:
        modeladmin.message_user(request, exc.message, messages.ERROR)
        return None
    return _apkg_response(built)


def problems_admin_extend(site: admin.AdminSite) -> None:
    """Add "Send to Anki" and "Export as an Anki package" to the problem bank's admin on
    `site` (once; nothing when the problems are not in it). Called when the apps are ready,
    after every admin module ran."""
    problem = apps.get_model("problems", "Problem")
    if not site.is_registered(problem):
        return
    model_admin = site.get_model_admin(problem)
    for action in (send_to_anki, export_package):
        if action not in (model_admin.actions or []):
            model_admin.actions = [*(model_admin.actions or []), action]
