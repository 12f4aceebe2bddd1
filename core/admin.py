"""The admin's titles in correct Russian: a model's name in the case the phrase needs.

Django builds «Select %s to change», «Add %s», «Change %s» from the model's
`verbose_name`, in the nominative: «Выберите задача для изменения», «Добавить задача».
A ModelAdmin of `CasedAdmin` names its model's accusative (`accusative =
pgettext_lazy("accusative", "problem")`, «задачу» in the app's catalog) and those
titles, the changelist's add button (templates/admin/change_list_object_tools.html) and
the add form's breadcrumb (templates/admin/change_form.html) use it. Only nouns that
decline need one: without it the verbose name is used. A model whose name is the verb's
own noun («Выберите изменение для изменения») names its changelist in `select_title`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.utils.functional import Promise
from django.utils.translation import gettext


class CasedAdmin(admin.ModelAdmin):
    accusative: str | Promise | None = None
    select_title: str | Promise | None = None

    def _accusative(self) -> str:
        return str(self.accusative or self.opts.verbose_name)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        changes = self.has_change_permission(request)
        phrase = "Select %s to change" if changes else "Select %s to view"
        title = str(self.select_title) if changes and self.select_title else None
        context = {
            "title": title or gettext(phrase) % self._accusative(),
            "add_label": gettext("Add %s") % self._accusative(),
            **(extra_context or {}),
        }
        return super().changelist_view(request, context)

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if object_id is None:
            phrase = "Add %s"
        elif self.has_change_permission(request):
            phrase = "Change %s"
        else:
            phrase = "View %s"
        context = {
            "title": gettext(phrase) % self._accusative(),
            "add_label": gettext("Add %s") % self._accusative(),
            **(extra_context or {}),
        }
        return super().changeform_view(request, object_id, form_url, context)
