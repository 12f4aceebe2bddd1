"""The admin's titles in correct Russian: a model's name in the case the phrase needs.

Django builds «Select %s to change», «Add %s», «Change %s» from the model's
`verbose_name`, in the nominative: «Выберите задача для изменения», «Добавить задача».
A ModelAdmin of `CasedAdmin` names its model's accusative (`accusative =
pgettext_lazy("accusative", "problem")`, «задачу» in the app's catalog) and those
titles, the changelist's add button (templates/admin/change_list_object_tools.html) and
the add form's breadcrumb (templates/admin/change_form.html) use it. Only nouns that
decline need one: without it the verbose name is used. A model whose name is the verb's
own noun («Выберите изменение для изменения») names its changelist in `select_title`.

Its JSON fields keep the text rule (`core.text_rule`): see `TextRuleJSONField`.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.forms.fields import InvalidJSONInput
from django.http import HttpRequest, HttpResponse
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_noop

from core.text_rule import text_fault

# Django's message for a NUL in a text field (its catalogs translate it), and ours for a
# lone surrogate, which only a JSON escape can bring in (a form body decodes to U+FFFD).
TEXT_RULE_MESSAGES = {
    "text_nul": gettext_noop("Null characters are not allowed."),
    "text_surrogate": gettext_noop("Lone surrogates (\\ud800–\\udfff) are not allowed."),
}


class TextRuleJSONField(forms.JSONField):
    """A JSON form field that refuses a NUL or a lone surrogate in a decoded key or string,
    naming the field and where in the value. Django's text fields refuse a NUL themselves,
    but a JSON field decodes the escape `\\u0000` and lets it through, and PostgreSQL's
    jsonb then refuses it with a DataError: a 500 for the admin."""

    def bound_data(self, data: Any, initial: Any) -> Any:
        """A refused value is shown again as typed: decoded, a lone surrogate could not
        even be written into the page."""
        value = super().bound_data(data, initial)
        return InvalidJSONInput(data) if text_fault(value) is not None else value

    def validate(self, value: Any) -> None:
        super().validate(value)
        fault = text_fault(value)
        if fault is not None:
            where = [str(part) for part in (self.label or "", *fault.loc) if part != ""]
            message = gettext(TEXT_RULE_MESSAGES[fault.rule])
            text = f"{' → '.join(where)}: {message}" if where else message
            raise forms.ValidationError(text, code=fault.rule)


class CasedAdmin(admin.ModelAdmin):
    accusative: str | Promise | None = None
    select_title: str | Promise | None = None
    formfield_overrides = {models.JSONField: {"form_class": TextRuleJSONField}}

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


def left_out(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: Any, most: int
) -> None:
    """Say so when an action takes only the first `most` of the rows selected."""
    count = queryset.count()
    if count > most:
        modeladmin.message_user(
            request,
            gettext(
                "Only the first %(most)s of the %(count)s rows selected were taken; select the "
                "rest and run the action again."
            )
            % {"most": most, "count": count},
            messages.WARNING,
        )
