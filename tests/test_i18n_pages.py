"""One language per page in correct Russian (issue 54, item 5): every admin page a person
opens first — the index, each changelist, each add form — and the NormaGPT pages, a failed
run's above all (the first page a newcomer sees when the model is unreachable), walked in
Russian and in English with one client: no English UI phrase on a Russian page, no Russian
one on an English page, and no noun in the wrong case («Добавить задача»).
"""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import translation
from lxml import html

from normagpt import services
from normagpt.models import AgentRun
from tests.conftest import free_port

pytestmark = pytest.mark.django_db

QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
# What Django, DRF or our own code would say in English on a page meant to be Russian.
ENGLISH_PHRASES = (
    "Select ", "Add ", "Change ", "Home", "Save", "Delete", "Search", "Filter", "Status:",
    "Error:", "Events", "Steps", "Waiting for", "the model server", "the model request",
    "could not connect", "planner", "executor", "judge", "finalizer", "question:", "step ",
    "failure", "Detail Api", "List Api", "Api",
)  # fmt: skip
# Nouns in the nominative where the phrase wants the accusative, and names that clash.
WRONG_FORMS = (
    "Добавить задача", "Добавить заметка", "Добавить категория", "Добавить тема",
    "Добавить группа", "Добавить пользователь", "Добавить беседа", "Выберите задача",
    "Выберите пользователь", "Выберите Токен",
    "Выберите изменение для изменения", "Ожидание первого шага", "не действует до",
)  # fmt: skip
RUSSIAN_PHRASES = (
    "Ошибка", "События", "Шаги", "Ожидание", "запрос к модели", "сервер модели", "вопрос:",
    "шаг ", "планировщик", "исполнитель", "неудача", "Статус",
)  # fmt: skip


def text_of(page: bytes) -> str:
    """What a person reads on the page: its text, without scripts and styles, the choices
    of a select (Django stores the permissions' names in English) and the browsable API's
    response body (the API speaks English by choice)."""
    doc = html.fromstring(page.decode("utf-8"))
    for node in doc.xpath("//script|//style|//select|//pre"):
        node.drop_tree()
    title = " ".join(doc.xpath("//title/text()"))
    return " ".join(f"{title} {' '.join(doc.itertext())}".split())


def said(phrase: str, text: str) -> bool:
    """Whether `text` says `phrase`, ending where a word ends («Добавить пользователь», not
    «Добавить Пользователи» of the sidebar's next row)."""
    return re.search(r"(?<![а-яёa-z])" + re.escape(phrase) + r"(?![а-яёa-z])", text) is not None


def admin_urls() -> list[str]:
    urls = [reverse("admin:index")]
    for model in admin.site._registry:
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        urls += [reverse(f"{prefix}_changelist"), reverse(f"{prefix}_add")]
    return urls


@pytest.fixture
def failed_run(settings):  # type: ignore[no-untyped-def]
    """A run failed as a newcomer's does: a model server that refuses connections, the
    client retrying once, the task failing the run with the model's error."""
    from normagpt.tasks import run_advance_task

    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"
    settings.NORMAGPT_LLM_RETRIES = 1
    settings.NORMAGPT_LLM_BACKOFF = 0.01
    owner = get_user_model().objects.create_superuser("walker", "w@example.com", "pw-123456")
    run = services.run_create(question=QUESTION, user=owner)
    assert run_advance_task.apply(args=(run.pk,)).get() == "failed"
    return AgentRun.objects.get(pk=run.pk), owner


def walk(client: Client, urls: list[str], language: str) -> dict[str, str]:
    pages = {}
    for url in urls:
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=language, HTTP_ACCEPT="text/html")
        if response.status_code == 403:  # an add form of what only the services create
            continue
        assert response.status_code == 200, url
        pages[url] = text_of(response.content)
    return pages


def test_every_admin_page_and_the_failed_run_speak_one_language(failed_run) -> None:  # type: ignore[no-untyped-def]
    run, owner = failed_run
    client = Client()
    client.force_login(owner)
    urls = [*admin_urls(), "/normagpt/", f"/normagpt/runs/{run.public_id}/"]
    urls += ["/api/problems/", "/api/normagpt/runs/"]  # the browsable API's titles
    russian = walk(client, urls, "ru")
    english = walk(client, urls, "en")
    assert len(russian) > 30
    leaks = {
        url: [p for p in ENGLISH_PHRASES + WRONG_FORMS if said(p, text.replace(QUESTION, ""))]
        for url, text in russian.items()
    }
    assert not {url: found for url, found in leaks.items() if found}, {
        u: f for u, f in leaks.items() if f
    }
    leaks = {
        url: [p for p in RUSSIAN_PHRASES if said(p, text.replace(QUESTION, ""))]
        for url, text in english.items()
    }
    assert not {url: found for url, found in leaks.items() if found}, {
        u: f for u, f in leaks.items() if f
    }


def test_the_failed_run_reads_in_the_viewer_s_language(failed_run) -> None:  # type: ignore[no-untyped-def]
    run, owner = failed_run
    assert run.error.startswith("the model server failed for the planner: could not connect")
    client = Client()
    client.force_login(owner)
    url = f"/normagpt/runs/{run.public_id}/"
    russian = text_of(client.get(url, HTTP_ACCEPT_LANGUAGE="ru").content)
    english = text_of(client.get(url, HTTP_ACCEPT_LANGUAGE="en").content)
    assert "Ошибка: сервер модели не ответил узлу «планировщик»: не удалось подключиться" in russian
    assert (
        "запрос к модели не удался: не удалось подключиться к серверу модели "
        "(в соединении отказано, ошибка "  # the errno of the system
    ) in russian
    assert "Ни один шаг не выполнен." in russian
    assert "Error: the model server failed for the planner: could not connect" in english
    assert "the model request failed: could not connect to the model server" in english
    assert "No step was done." in english
    assert not re.search(r"[а-яё]", english.replace(QUESTION, ""), re.I), english
    assert not re.search(r"[a-z]{3,}", russian.split("Ошибка:")[1].replace("LLM", "")), russian


def test_the_admin_names_every_model_apart_and_declines_them(admin_client) -> None:  # type: ignore[no-untyped-def]
    with translation.override("ru"):
        plural = [str(m._meta.verbose_name_plural) for m in admin.site._registry]
    assert len(plural) == len(set(plural)), sorted(plural)
    index = text_of(admin_client.get("/admin/").content)
    assert "Варианты с сайта" in index
    assert "Составленные варианты" in index
    users = text_of(admin_client.get(reverse("admin:auth_user_changelist")).content)
    assert "Выберите пользователя для изменения" in users
    assert "Добавить пользователя" in users
    tokens = text_of(admin_client.get(reverse("admin:authtoken_tokenproxy_changelist")).content)
    assert "Выберите токен для изменения" in tokens
    add = text_of(admin_client.get(reverse("admin:problems_problem_add")).content)
    assert "Задачи › Добавить задачу" in add  # the breadcrumb
    amendments = reverse("admin:normagpt_normamendment_changelist")
    assert "Выберите изменение для правки" in text_of(admin_client.get(amendments).content)


def test_the_home_page_shows_code_not_backticks(client) -> None:  # type: ignore[no-untyped-def]
    for language in ("ru", "en"):
        page = client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert "`" not in page, language
        assert "<code>norms://page/{id}</code>" in page
    russian = client.get("/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Документация API (на английском)" in russian  # English by choice, and said so


def test_a_replaced_edition_says_since_when_it_no_longer_holds() -> None:
    from datetime import date

    from normagpt.editions.selectors import edition_status
    from normagpt.models import NormDocument

    new = NormDocument.objects.create(code="СП 63.13330.2018", title="Бетонные конструкции")
    old = NormDocument.objects.create(
        code="СП 63.13330.2012",
        title="Бетонные конструкции",
        status=NormDocument.Status.REPLACED,
        replaced_by=new,
        in_force_from=date(2013, 1, 1),
        in_force_to=date(2021, 7, 1),  # the first day it no longer held
    )
    label = edition_status(old, date(2024, 1, 1))
    assert label == "утратил силу с 01.07.2021, заменён СП 63.13330.2018"
    assert edition_status(old, date(2021, 6, 30)).startswith("действует")


def test_every_run_text_form_is_its_own_first_match_and_translated() -> None:
    """Each stored form is read back as itself (no earlier form shadows it) and has a
    Russian translation: the English text the runner stores shows in Russian."""
    from normagpt.agent.texts import FORMS, GROUPS, PARAMETER, text_shown

    samples = {"node": "planner", "note": "after 2 attempts", "n": "3", "left": "1", "lease": "30"}
    assert set(GROUPS) <= {*samples, "holder", "owner", "name"}
    for _, message in FORMS:
        names = PARAMETER.findall(message)
        params = {name: samples.get(name, "x" if name in GROUPS else "«x»") for name in names}
        text = message % params
        first = next(m for p, m in FORMS if p.fullmatch(text))
        assert first == message, (text, first)
        with translation.override("en"):
            assert text_shown(text) == text
        with translation.override("ru"):
            shown = text_shown(text)
        assert shown != text, message
        assert re.search(r"[а-яё]", shown), (message, shown)
