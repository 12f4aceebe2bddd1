"""The admin of Django's and DRF's own models, with titles in correct Russian (core.admin):
«Выберите группу», «Добавить пользователя», «Выберите токен»."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.utils.translation import pgettext_lazy
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from core.admin import CasedAdmin


class CasedGroupAdmin(CasedAdmin, GroupAdmin):
    accusative = pgettext_lazy("accusative", "group")


class CasedUserAdmin(CasedAdmin, UserAdmin):
    accusative = pgettext_lazy("accusative", "user")


class CasedTokenAdmin(CasedAdmin, TokenAdmin):
    accusative = pgettext_lazy("accusative", "token")
    autocomplete_fields = ["user"]  # searched as typed: a select of every user took 23 s


for model, model_admin in (
    (Group, CasedGroupAdmin),
    (get_user_model(), CasedUserAdmin),
    (TokenProxy, CasedTokenAdmin),
):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)
