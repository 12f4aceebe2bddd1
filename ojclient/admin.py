"""Admin: browse what the online-judge tools received."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.admin import CasedAdmin
from ojclient.models import OjDailyChallenge, OjDailyEntry, OjProblem


@admin.register(OjProblem)
class OjProblemAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "online-judge problem")
    list_display = (
        "source",
        "problem_id",
        "title",
        "difficulty",
        "ac_rate",
        "open_link",
        "fetched_at",
    )
    list_filter = ("source", "difficulty")
    search_fields = ("problem_id", "slug", "title", "title_cn", "link")
    readonly_fields = [field.name for field in OjProblem._meta.fields]
    date_hierarchy = "fetched_at"

    @admin.display(description=_("link"))
    def open_link(self, obj: OjProblem) -> str:
        return (
            format_html('<a href="{}" rel="noopener" target="_blank">open</a>', obj.link)
            if obj.link
            else "-"
        )

    def has_add_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return False


class OjDailyEntryInline(admin.TabularInline):
    model = OjDailyEntry
    extra = 0
    readonly_fields = ("position", "problem")
    can_delete = False


@admin.register(OjDailyChallenge)
class OjDailyChallengeAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "daily challenge")
    list_display = ("date", "domain", "fetched_at")
    list_filter = ("domain",)
    date_hierarchy = "date"
    readonly_fields = ("date", "domain", "fetched_at")
    inlines = [OjDailyEntryInline]

    def has_add_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return False
