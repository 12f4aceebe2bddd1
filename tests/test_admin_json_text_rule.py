"""A JSON field edited in the admin keeps the text rule (issue 54, item 2): the escape
`\\u0000` (or a lone surrogate's) in a string is refused with a form error on that field
naming where, instead of reaching the database (PostgreSQL's jsonb refuses it with a
DataError: a 500)."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.contrib import admin
from django.test import RequestFactory

from anki_bridge.models import Note
from core.admin import TextRuleJSONField

pytestmark = pytest.mark.django_db

FIELDS = {"Front": "Чему равно 2 + 2?", "Back": "4"}


def posted(form: forms.BaseForm) -> dict[str, Any]:
    """The data a browser sends back for the form as it was shown."""
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if isinstance(field, forms.BooleanField):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    return data


def save(admin_client, note: Note, **changes: str):  # type: ignore[no-untyped-def]
    url = f"/admin/anki_bridge/note/{note.pk}/change/"
    shown = admin_client.get(url)
    assert shown.status_code == 200
    return admin_client.post(url, {**posted(shown.context["adminform"].form), **changes})


@pytest.mark.parametrize(
    ("field", "typed", "label", "where", "rule"),
    [
        ("fields", '{"Front": "2 + 2\\u0000", "Back": "4"}', "Fields", "Front", "Null"),
        ("tags", '["алгебра", "\\ud800"]', "Tags", "1", "Lone surrogates"),
        ("fields", '{"Fr\\u0000nt": "4"}', "Fields", "Fr\\u0000nt", "Null"),
    ],
)
def test_a_nul_in_a_json_field_is_a_form_error_naming_the_field(  # type: ignore[no-untyped-def]
    admin_client, field: str, typed: str, label: str, where: str, rule: str
) -> None:
    note = Note.objects.create(deck="Математика", model="Basic", fields=FIELDS, tags=["алгебра"])
    admin_client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    page = save(admin_client, note, **{field: typed})
    assert page.status_code == 200  # the form again, not a redirect
    errors = page.context["adminform"].form.errors
    assert list(errors) == [field]
    (message,) = errors[field]
    assert message.startswith(f"{label} → {where}: {rule}")
    note.refresh_from_db()
    assert (note.fields, note.tags) == (FIELDS, ["алгебра"])


def test_the_russian_admin_says_it_in_russian(admin_client) -> None:  # type: ignore[no-untyped-def]
    note = Note.objects.create(deck="Математика", model="Basic", fields=FIELDS)
    page = save(admin_client, note, fields='{"Front": "\\u0000"}')
    (message,) = page.context["adminform"].form.errors["fields"]
    assert message == "Поля → Front: Данные содержат запрещённый символ: ноль-байт"


def test_a_clean_edit_still_saves(admin_client) -> None:  # type: ignore[no-untyped-def]
    note = Note.objects.create(deck="Математика", model="Basic", fields=FIELDS)
    page = save(admin_client, note, fields='{"Front": "3 + 3?", "Back": "6"}')
    assert page.status_code == 302
    note.refresh_from_db()
    assert note.fields == {"Front": "3 + 3?", "Back": "6"}


def test_every_json_field_in_every_admin_form_keeps_the_rule(admin_user) -> None:  # type: ignore[no-untyped-def]
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    seen = []
    for model, model_admin in admin.site._registry.items():
        form_classes = [model_admin.get_form(request)]
        form_classes += [
            inline.get_formset(request).form for inline in model_admin.get_inline_instances(request)
        ]
        for form_class in form_classes:
            for name, field in form_class.base_fields.items():
                if isinstance(field, forms.JSONField):
                    seen.append(f"{model._meta.label}.{name}")
                    assert isinstance(field, TextRuleJSONField), seen[-1]
    assert "anki_bridge.Note.fields" in seen
    assert "anki_bridge.Note.tags" in seen


@pytest.mark.django_db
def test_pages_that_would_list_every_user_or_deck_list_none(admin_client) -> None:  # type: ignore[no-untyped-def]
    """With 50,000 users the token form drew a select of all of them (23 s) and the
    packages' list a filter link each; with 3,000 decks the journal's sidebar listed all."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.bulk_create(
        get_user_model()(username=f"learner{n}") for n in range(300)
    )
    add = admin_client.get("/admin/authtoken/tokenproxy/add/").content.decode()
    assert "learner299" not in add  # asked for as typed (autocomplete), not listed
    packages = admin_client.get("/admin/anki_bridge/ankipackage/").content.decode()
    assert "learner299" not in packages
