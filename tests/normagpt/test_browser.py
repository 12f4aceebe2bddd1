"""In headless Chromium: sign in, ask, watch the steps appear live, read the cited page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from tests.normagpt.scripted_llm import straight_script

CHROMIUM = Path("/usr/bin/chromium")
QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"
# how long a page's action or an `expect` waits: a busy machine renders Swagger UI's schema,
# or a run's next step, in more than `expect`'s own 5 s (it does not follow the page's)
DEADLINE_MS = 60_000

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (Debian package chromium)"
    ),
]


def test_ask_watch_the_steps_and_read_the_answer(live_server, corpus, llm, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM beside Playwright's loop
    get_user_model().objects.create_user("engineer", password="pw-123456")
    script = straight_script()
    # a slower executor and judge: the page shows the run while it works
    script["executor"] = [{"sleep": 2.0, "content": script["executor"][0]}]
    script["judge"] = [{"sleep": 1.0, "content": script["judge"][0]}]
    llm.play(**script)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_context(locale="ru-RU").new_page()  # an engineer's Russian browser
        page.set_default_timeout(DEADLINE_MS)
        expect.set_options(timeout=DEADLINE_MS)
        page.goto(f"{live_server.url}/normagpt/")  # signed out: the sign-in page
        page.wait_for_url("**/normagpt/login/**")
        page.fill("#id_username", "engineer")
        page.fill("#id_password", "pw-123456")
        page.click("#login")
        page.wait_for_url("**/normagpt/")
        page.fill("#question", QUESTION)
        page.click("#ask")
        page.wait_for_url("**/normagpt/runs/*/")
        expect(page.locator("#question")).to_have_text(QUESTION)

        # live: the planner's step and the plan appear while the executor still works
        expect(page.locator("tr.step[data-node=planner]")).to_be_visible()
        expect(page.locator("#plan")).to_contain_text("Найти защитный слой")
        assert page.locator("#answer").count() == 0
        expect(page.locator("#status-value")).to_have_attribute("data-status", "running")
        expect(page.locator("tr.step[data-node=executor] img.thumb").first).to_be_visible()
        expect(page.locator(".decision")).to_have_attribute("data-decision", "FINALIZE")

        answer = page.locator("#answer")
        expect(answer).to_contain_text("Не менее 20 мм")
        expect(page.locator("#status-value")).to_have_text("завершён")  # a Russian page
        assert page.locator("tr.step").count() == 4
        loaded = page.eval_on_selector("img.thumb", "img => img.complete && img.naturalWidth > 0")
        assert loaded
        page.locator("#sources a").first.click()
        expect(page.locator("h2")).to_contain_text("СП 63.13330.2018, страница 2")
        expect(page.locator("pre")).to_contain_text("10.3.2 Минимальная толщина защитного слоя")
        browser.close()


def test_api_docs_render_the_operations_with_the_network_blocked(live_server) -> None:  # type: ignore[no-untyped-def]
    """Swagger UI comes from the project's static files: nothing but the server is asked."""
    from playwright.sync_api import expect, sync_playwright

    asked_elsewhere: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page()
        page.set_default_timeout(DEADLINE_MS)
        expect.set_options(timeout=DEADLINE_MS)

        def only_the_server(route) -> None:  # type: ignore[no-untyped-def]
            if route.request.url.startswith(live_server.url):
                route.continue_()
            else:
                asked_elsewhere.append(route.request.url)
                route.abort()

        page.route("**/*", only_the_server)
        page.goto(f"{live_server.url}/api/docs/")
        expect(page.locator(".opblock").first).to_be_visible()
        assert page.locator(".opblock").count() > 20
        browser.close()
    assert asked_elsewhere == []


@pytest.mark.long
def test_a_walk_in_russian_and_in_english_finds_no_mixed_page(live_server, corpus, llm) -> None:  # type: ignore[no-untyped-def]
    """A person whose browser asks for Russian, then one whose browser asks for English,
    signs in to the admin and walks every page (tests/normagpt/test_languages.py): each
    page, as the browser rendered it, says everything in the language asked."""
    from playwright.sync_api import sync_playwright

    from tests.normagpt.test_languages import database_words, pages_to_walk, seed

    run = seed(llm)
    get_user_model().objects.create_superuser("walker", "w@example.com", "pw-123456")
    # Each kind of page once (every page is walked by the test client, in three languages):
    # the project's pages, and per app a changelist, an add form and a change form.
    urls, kinds = [], set()
    for url in pages_to_walk(run.public_id, run.sources[0]["page_id"]):
        parts = url.strip("/").split("/")
        kind = (
            (parts[1], parts[-1] if parts[-1] in ("add", "change") else "list")
            if parts[0] == "admin" and len(parts) > 2
            else url
        )
        if kind not in kinds:
            kinds.add(kind)
            urls.append(url)
    data = database_words()
    mixed: dict[str, list[str]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        for locale, language in (("ru-RU", "ru"), ("en-US", "en")):
            context = browser.new_context(locale=locale)
            page = context.new_page()
            page.set_default_timeout(DEADLINE_MS)
            page.goto(f"{live_server.url}/admin/login/")
            mixed.update(_foreign(page, language, data, "/admin/login/"))
            page.fill("#id_username", "walker")
            page.fill("#id_password", "pw-123456")
            page.click("input[type=submit]")
            page.wait_for_url("**/admin/")
            for url in urls:
                response = page.goto(f"{live_server.url}{url}")
                assert response is not None
                moved_away = url.endswith("/change/") and page.url.endswith("/admin/")
                if response.status == 403 or moved_away:
                    continue  # an add form no one may use; an object not in that list
                assert response.status == 200, (url, response.status)
                if "html" in (response.headers.get("content-type") or ""):
                    mixed.update(_foreign(page, language, data, url))
            context.close()
        browser.close()
    assert not mixed, f"pages that mix languages: {mixed}"


def _foreign(page, language: str, data: set[str], url: str) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    from tests.normagpt.test_languages import foreign_words

    found = foreign_words(page.content().encode(), language, data)
    return {f"{language} {url}": found} if found else {}
