"""Admin of the Anki bridge: the journal (by status and deck) with "send again", the media,
the review sessions and the journal of note edits."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from anki_bridge.journal import notes_resend
from anki_bridge.models import Media, Note, NoteChange, ReviewCard, ReviewSession
from core.admin import CasedAdmin
from core.exceptions import DomainError


@admin.register(Note)
class NoteAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "note")
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
    list_filter = ["status", "placed", "deck", "model", "source"]
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
    actions = ["send_again"]
    list_per_page = 100

    @admin.display(description=_("first field"))
    def first_field(self, obj: Note) -> str:
        text = " ".join(str(next(iter(obj.fields.values()), "")).split())
        return text if len(text) <= 80 else text[:77] + "…"

    @admin.action(description=_("Send again to Anki"))
    def send_again(self, request: HttpRequest, queryset: QuerySet[Note]) -> None:
        sent_already = queryset.filter(status=Note.Status.SENT).count()
        ids = list(queryset.exclude(status=Note.Status.SENT).values_list("pk", flat=True))
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
