"""One language per page: the admin in Russian by default, in English when asked (issue 14,
item 4). Every model registered in the admin is checked, so a new one must be translated."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import translation

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile(r"[а-яё]", re.I)
# Column headers that are the same in both languages.
SAME_IN_BOTH = {"ID", "SHA-1", "slug", "ГОСТ", "СП", "СНиП"}
MODELS = sorted(admin.site._registry, key=lambda model: model._meta.label)


def names(model: type, language: str) -> tuple[str, str]:
    with translation.override(language):
        return str(model._meta.verbose_name), str(model._meta.verbose_name_plural)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model._meta.label)
def test_a_changelist_in_russian_names_its_model_and_columns_in_russian(
    admin_client, model
) -> None:  # type: ignore[no-untyped-def]
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    page = admin_client.get(url).content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)  # type: ignore[union-attr]
    singular, plural = names(model, "ru")
    english, _ = names(model, "en")
    assert CYRILLIC.search(singular), model
    assert CYRILLIC.search(plural), model
    with translation.override("ru"):  # «Выберите задачу»: the accusative where it declines
        named = str(getattr(admin.site._registry[model], "accusative", None) or singular)
    assert CYRILLIC.search(named), model
    assert f"Выберите {named} для " in title, (model, title)
    assert english not in title
    head = re.search(r"<thead>(.*?)</thead>", page, re.S)
    headers = [re.sub(r"<[^>]+>|\s+", " ", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head.group(1), re.S)] if head else []  # fmt: skip
    for header in filter(None, headers):
        assert CYRILLIC.search(header) or header in SAME_IN_BOTH, (model, header)


@pytest.mark.parametrize("model", MODELS[:3], ids=lambda model: model._meta.label)
def test_a_browser_asking_for_english_gets_english(admin_client, model) -> None:  # type: ignore[no-untyped-def]
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    page = admin_client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)  # type: ignore[union-attr]
    english, _ = names(model, "en")
    assert f"Select {english} to change" in title


def joined(quoted: str) -> str:
    """The text of a PO string (its quoted lines joined, escapes such as \\n read)."""
    return "".join(json.loads(piece) for piece in re.findall(r'^(".*")$', quoted, re.M))


def test_every_russian_catalog_entry_is_translated_and_compiled() -> None:
    import gettext

    from tests.conftest import ROOT

    catalogs = list(ROOT.glob("*/locale/ru/LC_MESSAGES/django.po"))
    assert len(catalogs) >= 4
    for po in catalogs:
        text = po.read_text(encoding="utf-8")
        assert "#, fuzzy" not in text, po
        with po.with_suffix(".mo").open("rb") as handle:
            compiled = gettext.GNUTranslations(handle)
        pattern = r'^(?:msgctxt (".*")\n)?msgid ((?:".*"\n)+)msgstr ((?:".*"\n?)+)'
        entries = re.findall(pattern, text, re.M)
        for context, msgid, msgstr in entries[1:]:  # the first is the header
            assert joined(msgstr), (po, msgid)
            found = (
                compiled.pgettext(joined(context), joined(msgid))
                if context
                else compiled.gettext(joined(msgid))
            )
            assert found == joined(msgstr), f"{po}: run compilemessages"


def test_the_norms_pages_are_russian_by_default_and_english_when_asked(admin_client) -> None:  # type: ignore[no-untyped-def]
    from normagpt.models import AgentRun

    run = AgentRun.objects.create(question="Толщина защитного слоя?", status="completed")
    url = f"/normagpt/runs/{run.public_id}/"
    russian = admin_client.get(url).content.decode()
    assert '<html lang="ru">' in russian
    assert "Статус" in russian
    assert ">завершён<" in russian  # the status label, not "completed"
    english = admin_client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="en">' in english
    assert "Status:" in english
    assert ">completed<" in english
    assert "Статус" not in english
