"""The admin of Django's own models, with titles in correct Russian (core.admin)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.utils.translation import pgettext_lazy

from core.admin import CasedAdmin


class CasedGroupAdmin(CasedAdmin, GroupAdmin):
    accusative = pgettext_lazy("accusative", "group")  # «Выберите группу для изменения»


admin.site.unregister(Group)
admin.site.register(Group, CasedGroupAdmin)
