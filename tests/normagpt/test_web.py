"""The pages, the REST API and the admin of the norms agent."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from core import background
from normagpt import services
from normagpt.agent.runner import run_advance
from normagpt.models import AgentRun, NormDocument
from tests.normagpt.scripted_llm import (
    COVER_FINDING,
    COVER_STEP,
    plan,
    step,
    straight_script,
    verdict,
)
from tests.normagpt.test_corpus import make_pdf

pytestmark = pytest.mark.django_db

INLINE = {
    "pages-TOTAL_FORMS": "0",
    "pages-INITIAL_FORMS": "0",
    "amendments-TOTAL_FORMS": "0",
    "amendments-INITIAL_FORMS": "0",
}
QUESTION = "Какая минимальная толщина защитного слоя бетона для плиты перекрытия?"


def api(user=None) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def completed_run(llm, user=None) -> AgentRun:  # type: ignore[no-untyped-def]
    llm.play(**straight_script())
    run = services.run_create(question=QUESTION, user=user)
    return run_advance(run_id=run.pk)


# --- pages -----------------------------------------------------------------------------------


def test_index_lists_the_users_runs_and_corpus_and_asks_only_signed_in_users(
    client, corpus, llm, user
) -> None:  # type: ignore[no-untyped-def]
    run = completed_run(llm, user)
    response = client.post("/normagpt/", {"question": QUESTION})
    assert response.status_code == 302
    assert response["Location"].startswith("/normagpt/login/")
    assert AgentRun.objects.count() == 1
    client.force_login(user)
    html = client.get("/normagpt/").content.decode()
    assert f'href="/normagpt/runs/{run.public_id}/"' in html
    assert "СП 63.13330.2018" in html
    assert "образец" in html
    assert 'id="ask-form"' in html
    bad = client.post("/normagpt/", {"question": "?"})
    assert "question must be 5–2000 characters" in bad.content.decode()


def test_runs_are_their_owners_signed_out_visitors_and_other_users_see_none(
    client, corpus, llm, user, staff
) -> None:  # type: ignore[no-untyped-def]
    run = completed_run(llm, user)
    pages = [
        "/normagpt/",
        f"/normagpt/runs/{run.public_id}/",
        f"/normagpt/runs/{run.public_id}/live/",
    ]
    for path in pages:  # signed out: sent to sign in, nothing shown
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/normagpt/login/")
    other = get_user_model().objects.create_user("stranger", password="pw-123456")
    client.force_login(other)
    assert f"/normagpt/runs/{run.public_id}/" not in client.get("/normagpt/").content.decode()
    assert client.get(f"/normagpt/runs/{run.public_id}/").status_code == 404
    assert client.get(f"/normagpt/runs/{run.public_id}/live/").status_code == 404
    client.force_login(staff)
    assert f"/normagpt/runs/{run.public_id}/" in client.get("/normagpt/").content.decode()
    assert client.get(f"/normagpt/runs/{run.public_id}/").status_code == 200


def test_review_and_cap_reasons_read_in_russian_on_the_page(client, corpus, user) -> None:  # type: ignore[no-untyped-def]
    run = AgentRun.objects.create(
        question=QUESTION,
        user=user,
        status="needs_review",
        review_reason="the planner's output was invalid twice: steps: Field required",
        incomplete=True,
        incomplete_reason="the cap of 6 executed steps was reached",
    )
    client.force_login(user)
    html = client.get(f"/normagpt/runs/{run.public_id}/live/").content.decode()
    assert (
        "ответ модели для узла «планировщик» дважды не удалось прочитать: steps: Field required"
        in html
    )
    assert "неполный: достигнут предел: 6 выполненных шагов" in html
    assert "was invalid twice" not in html


def test_run_page_shows_the_working_node_times_and_events(client, corpus, llm, user) -> None:  # type: ignore[no-untyped-def]
    from django.utils import timezone

    from normagpt.agent.runner import event_add

    run = services.run_create(question=QUESTION, user=user)
    AgentRun.objects.filter(pk=run.pk).update(
        status="running", owner="host:1:x", next_node="executor", started_at=timezone.now()
    )
    event_add(
        run.pk,
        "takeover",
        "the advancer host:9:y did not renew its lease of 30 s (stopped or crashed); "
        "host:1:x took the run over and goes on from the node executor",
        node="executor",
    )
    client.force_login(user)
    html = client.get(f"/normagpt/runs/{run.public_id}/live/").content.decode()
    assert '<strong id="working-node">исполнитель</strong>' in html  # the node's Russian name
    assert 'id="times"' in html
    assert 'data-kind="takeover"' in html
    assert "передан другому обработчику (исполнитель): обработчик host:9:y не продлил" in html
    english = client.get(f"/normagpt/runs/{run.public_id}/live/", HTTP_ACCEPT_LANGUAGE="en")
    assert "(executor): the advancer host:9:y did not renew" in english.content.decode()


def test_run_page_shows_plan_steps_thumbnails_and_the_answer_with_page_links(
    client, corpus, llm, user
) -> None:  # type: ignore[no-untyped-def]
    run = completed_run(llm, user)
    client.force_login(user)
    html = client.get(f"/normagpt/runs/{run.public_id}/").content.decode()
    page_id = run.sources[0]["page_id"]
    assert "<strong>Не менее 20 мм</strong>" in html
    assert f'href="/normagpt/pages/{page_id}/"' in html
    assert f'src="/normagpt/pages/{page_id}/image/"' in html
    assert html.count('class="step"') == 4
    assert 'data-live="0"' in html
    live = client.get(f"/normagpt/runs/{run.public_id}/live/").content.decode()
    assert 'id="answer"' in live
    assert "<html" not in live
    assert f'href="/normagpt/pages/{page_id}/?clause=10.3.2#cited"' in html
    page = client.get(f"/normagpt/pages/{page_id}/").content.decode()
    assert "10.3.2 Минимальная толщина" in page
    assert "<mark" not in page
    cited = client.get(f"/normagpt/pages/{page_id}/?clause=10.3.2").content.decode()
    assert '<mark id="cited">10.3.2 Минимальная толщина' in cited
    assert 'id="cited-clause"' in cited
    hostile = client.get(f"/normagpt/pages/{page_id}/?clause=<script>").content.decode()
    assert "<script>" not in hostile
    assert "образец" in page
    image = client.get(f"/normagpt/pages/{page_id}/image/")
    assert image.status_code == 200
    assert image["Content-Type"] == "image/jpeg"
    assert b"".join(image.streaming_content)[:3] == b"\xff\xd8\xff"
    assert client.get("/normagpt/runs/999999/").status_code == 404
    assert client.get("/normagpt/pages/999999/image/").status_code == 404


# --- REST API --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_api_runs_need_authentication_and_belong_to_their_user(corpus, llm, user, staff) -> None:  # type: ignore[no-untyped-def]
    assert api().post("/api/normagpt/runs/", {"question": QUESTION}).status_code in (401, 403)
    llm.play(**straight_script())
    created = api(user).post("/api/normagpt/runs/", {"question": QUESTION}, format="json")
    assert created.status_code == 202
    run_id = created.json()["run_id"]
    assert created.json()["status"] in ("queued", "running", "completed")
    from tests.normagpt.test_crash import wait_until

    assert not run_id.isdigit()
    wait_until(lambda: AgentRun.objects.get(public_id=run_id).status == "completed", 20, "the run")
    detail = api(user).get(f"/api/normagpt/runs/{run_id}/").json()
    assert detail["sources"][0]["document"] == "СП 63.13330.2018"
    assert [s["node"] for s in detail["steps"]] == ["planner", "executor", "judge", "finalizer"]
    assert detail["url"] == f"http://127.0.0.1:8000/normagpt/runs/{run_id}/"
    other = get_user_model().objects.create_user("other", password="pw-123456")
    hidden = api(other).get(f"/api/normagpt/runs/{run_id}/")  # as if it did not exist
    assert hidden.status_code == 404
    assert hidden.json() == {
        "code": "run_not_found",
        "message": f"run {run_id} does not exist",
        "extra": {"run_id": run_id},
    }
    assert api(other).get("/api/normagpt/runs/").json() == {"runs": [], "next_offset": None}
    assert api(staff).get(f"/api/normagpt/runs/{run_id}/").status_code == 200
    assert [r["run_id"] for r in api(staff).get("/api/normagpt/runs/").json()["runs"]] == [run_id]
    pk = AgentRun.objects.get(public_id=run_id).pk
    assert api(user).get(f"/api/normagpt/runs/{pk}/").status_code == 404  # not by its pk
    missing = api(user).get("/api/normagpt/runs/999999/")
    assert missing.status_code == 404
    assert missing.json()["code"] == "run_not_found"
    invalid = api(user).post("/api/normagpt/runs/", {"question": "?"}, format="json")
    assert invalid.status_code == 400
    assert invalid.json()["code"] == "invalid_input"


def test_api_resume_is_for_the_runs_owner_and_staff_as_over_mcp(corpus, llm, user, staff) -> None:  # type: ignore[no-untyped-def]
    """One rule on every channel (`normagpt_resume` too): the asker reviews their own run,
    staff any run; another user's run does not exist for a user."""
    from django.contrib.auth import get_user_model

    llm.play(
        planner=[plan(COVER_STEP), plan(COVER_STEP)],
        executor=[step(COVER_FINDING), step(COVER_FINDING)],
        judge=[verdict("HUMAN_REVIEW", "?"), verdict("HUMAN_REVIEW", "?")],
    )
    run = run_advance(run_id=services.run_create(question=QUESTION, user=user).pk)
    assert run.status == "needs_review"
    resume = f"/api/normagpt/runs/{run.public_id}/resume/"
    other = get_user_model().objects.create_user("other", password="pw-123456")
    assert api(other).post(resume, {"note": "x"}, format="json").status_code == 404
    assert api().post(resume, {"note": "x"}, format="json").status_code in (401, 403)
    mine = api(user).post(resume, {"note": "Помещение сухое"}, format="json")
    assert mine.status_code == 202, mine.json()
    conflict = api(staff).post("/api/normagpt/runs/999999/resume/", {"note": "x"}, format="json")
    assert conflict.status_code == 404
    theirs = run_advance(run_id=services.run_create(question=QUESTION, user=other).pk)
    assert theirs.status == "needs_review"
    resumed = api(staff).post(f"/api/normagpt/runs/{theirs.public_id}/resume/", {"note": "x"})
    assert resumed.status_code == 202
    theirs.refresh_from_db()
    theirs.status = "completed"
    theirs.save()
    done = api(staff).post(f"/api/normagpt/runs/{theirs.public_id}/resume/", {"note": "x"})
    assert done.status_code == 409
    assert done.json()["code"] == "run_not_resumable"


def test_api_documents_pages_and_search_are_public(corpus, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_max_num_queries(3):
        documents = api().get("/api/normagpt/documents/").json()["results"]
    snip = next(d for d in documents if d["code"] == "СНиП 52-01-2003")
    assert (snip["status"], snip["replaced_by"], snip["page_count"]) == (
        "replaced",
        "СП 63.13330.2018",
        1,
    )
    sp63 = next(d for d in documents if d["code"] == "СП 63.13330.2018")
    pages = api().get(f"/api/normagpt/documents/{sp63['id']}/pages/").json()["results"]
    assert [p["number"] for p in pages] == [1, 2, 3]
    assert "text" not in pages[0]
    page = api().get(f"/api/normagpt/pages/{pages[1]['id']}/").json()
    assert "10.3.2" in page["clauses"]
    assert "Минимальная толщина" in page["text"]
    assert page["image_url"] == f"http://127.0.0.1:8000/normagpt/pages/{pages[1]['id']}/image/"
    found = (
        api()
        .get(
            "/api/normagpt/search/",
            {"keywords": ["защитный слой", "плиты"], "expected": "СП 63.13330", "limit": 2},
        )
        .json()
    )
    assert [(h["document"], h["page"], h["expected"]) for h in found["hits"]] == [
        ("СП 63.13330.2018", 2, True),
        ("СП 28.13330.2017", 1, False),
    ]
    # whether the corpus answers, as over MCP (tests/normagpt/test_answered.py)
    assert found["answered"] is True
    assert found["searched"] == ["защитный", "слой", "плиты"]
    assert found["hits"][0]["answers"] is True
    assert "10.3.2" in found["hits"][0]["found"]
    bad = api().get("/api/normagpt/search/", {"keywords": "бетон", "limit": 99})
    assert bad.status_code == 400
    assert "limit" in bad.json()["message"]
    assert api().get("/api/normagpt/documents/999/pages/").status_code == 404


def test_a_whole_question_is_a_keyword_over_rest_as_over_mcp(corpus) -> None:  # type: ignore[no-untyped-def]
    """A person's question with its story (over 200 characters) is searched; a keyword
    past the bound both channels share is refused naming it."""
    from normagpt.services import KEYWORD_CHARS

    question = (
        "Мы строим частный дом, фундамент ленточный, плиту перекрытия над подвалом льём "
        "сами из бетона B25, помещение будет сухое и отапливаемое. Какой защитный слой "
        "бетона нужен для нижней арматуры плиты перекрытия, чтобы она не ржавела?"
    )
    assert len(question) > 200
    found = api().get("/api/normagpt/search/", {"keywords": question})
    assert found.status_code == 200, found.json()
    assert found.json()["whole_question"] is True
    too_long = api().get("/api/normagpt/search/", {"keywords": "б" * (KEYWORD_CHARS + 1)})
    assert too_long.status_code == 400
    assert too_long.json()["message"].startswith("keywords.0: ")
    assert str(KEYWORD_CHARS) in too_long.json()["message"]


def test_an_answer_renders_its_tables_lists_marks_and_links_escaped() -> None:
    from normagpt.formatting import markdown_html

    answer = (
        "Толщина слоя по п. 10.3.2 *(стр. 2)*:\n\n"
        "| Условия | Слой, мм |\n|---|---|\n| На открытом воздухе | 30 |\n\n"
        "1. Первое.\n2. Второе *[не подтверждено: нет]*\n\n"
        "- пункт\n\n"
        "[страница](https://example.com/p?a=1&b=2) и [плохая](javascript:alert(1)) "
        "<script>alert(1)</script> `код`"
    )
    html_text = str(markdown_html(answer)).replace("\n", "")
    assert (
        "<table><thead><tr><th>Условия</th><th>Слой, мм</th></tr></thead>"
        "<tbody><tr><td>На открытом воздухе</td><td>30</td></tr></tbody></table>"
    ) in html_text
    assert "<ol><li>Первое.</li><li>Второе <em>[не подтверждено: нет]</em></li></ol>" in html_text
    assert "<ul><li>пункт</li></ul>" in html_text
    assert '<a href="https://example.com/p?a=1&amp;b=2" rel="nofollow noopener">страница</a>' in (
        html_text
    )
    assert "[плохая](javascript:alert(1))" in html_text  # only http(s) is made a link
    assert "<script>" not in html_text
    assert "&lt;script&gt;" in html_text
    assert "<code>код</code>" in html_text
    assert "<em>(стр. 2)</em>" in html_text
    # a link's address and a code span are taken as they are
    odd = str(markdown_html("[t](http://a.com/_x_y_) и `*p*` и **[b](https://b.ru)**"))
    assert '<a href="http://a.com/_x_y_" rel="nofollow noopener">t</a>' in odd
    assert "<code>*p*</code>" in odd
    assert '<strong><a href="https://b.ru" rel="nofollow noopener">b</a></strong>' in odd

    # CommonMark: bold italics nest, a list split by a blank line goes on numbering, an
    # address keeps its brackets, an answer's heading sits under the page's, a line break
    # is kept, and no raw HTML gets through
    more = str(
        markdown_html(
            "# Ответ\nстрока\nещё\n\n***важно***\n\n1. один\n\n2. два\n\n"
            "[статья](https://ru.wikipedia.org/wiki/Бетон_(материал)) "
            '<img src=x onerror="alert(1)"> [сайт](/admin/)'
        )
    ).replace("\n", "")
    assert "<h4>Ответ</h4><p>строка<br />ещё</p>" in more
    assert "<em><strong>важно</strong></em>" in more
    assert "<ol><li><p>один</p></li><li><p>два</p></li></ol>" in more
    assert 'href="https://ru.wikipedia.org/wiki/%D0%91%D0%B5%D1%82%D0%BE%D0%BD_(' in more
    assert "<img" not in more
    # no image of an answer loads: an answer a document's text steered could call any address
    image = str(markdown_html("![x](https://attacker.example/p.gif?q=1)"))
    assert "<img" not in image
    assert 'href="https://attacker.example/p.gif?q=1"' in image
    assert "[сайт](/admin/)" in more  # only http(s) is made a link


def test_openapi_schema_builds(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    from openapi_spec_validator import validate

    validate(response.json())
    paths = response.json()["paths"]
    assert "/api/normagpt/runs/" in paths
    assert "/api/normagpt/search/" in paths


# --- admin -----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_admin_upload_ingests_the_pdf_and_shows_thumbnails(
    client, staff, tmp_path, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 40
    client.force_login(staff)
    pdf = make_pdf(tmp_path / "upload.pdf")
    response = client.post(
        "/admin/normagpt/normdocument/add/",
        {
            "code": "СП 70.13330.2012",
            "title": "Несущие и ограждающие конструкции",
            "kind": "sp",
            "status": "in_force",
            "file": SimpleUploadedFile(
                "upload.pdf", pdf.read_bytes(), content_type="application/pdf"
            ),
            **INLINE,
        },
        follow=True,
    )
    assert response.status_code == 200
    assert "Обработка началась" in response.content.decode()  # LANGUAGE_CODE ru
    assert background.drain(timeout=60)  # no broker: ingested on this process's pool
    document = NormDocument.objects.get()
    assert (document.ingest_status, document.page_count) == ("done", 2)
    change = client.get(f"/admin/normagpt/normdocument/{document.pk}/change/").content.decode()
    first = document.pages.get(number=1)
    assert f'src="/normagpt/pages/{first.pk}/image/"' in change
    # The admin's "Currently: …" link to the uploaded PDF works.
    assert f'href="{document.file.url}"' in change
    served = client.get(document.file.url)
    assert served.status_code == 200
    assert served["Content-Type"] == "application/pdf"
    assert b"".join(served.streaming_content) == pdf.read_bytes()
    assert client.get("/media/normagpt/documents/other.pdf").status_code == 404
    assert client.get("/media/normagpt/documents/..%2F..%2Fsettings.py").status_code == 404
    not_pdf = client.post(
        "/admin/normagpt/normdocument/add/",
        {
            "code": "X",
            "title": "x",
            "kind": "sp",
            "status": "in_force",
            "file": SimpleUploadedFile("a.txt", b"hi"),
        },
    )
    assert "upload a PDF file" in not_pdf.content.decode()


@pytest.mark.django_db(transaction=True)
def test_admin_review_queue_resumes_a_run_with_the_note(client, staff, corpus, llm) -> None:  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(COVER_FINDING)],
        judge=[verdict("HUMAN_REVIEW", "Неясен класс среды."), verdict("FINALIZE")],
        finalizer=straight_script()["finalizer"],
    )
    run = services.run_create(question=QUESTION)  # no broker: it works on this process's pool
    assert background.drain(timeout=30)
    client.force_login(staff)
    queue = client.get("/admin/normagpt/reviewqueuerun/").content.decode()
    assert "Неясен класс среды." in queue
    assert run.public_id in queue  # the id users see is the one the admin shows
    form = client.get(f"/admin/normagpt/reviewqueuerun/{run.pk}/change/").content.decode()
    assert 'name="reviewer_note"' in form
    inlines = {
        f"{name}-{count}_FORMS": "0"
        for name in ("steps", "events", "checks")
        for count in ("TOTAL", "INITIAL")
    }
    too_long = client.post(
        f"/admin/normagpt/reviewqueuerun/{run.pk}/change/",
        {"reviewer_note": "н" * 2001, "decision": "", **inlines},
    )
    assert too_long.status_code == 200  # the 2,000 characters REST and MCP allow, here too
    assert AgentRun.objects.get(pk=run.pk).status == "needs_review"
    response = client.post(
        f"/admin/normagpt/reviewqueuerun/{run.pk}/change/",
        {"reviewer_note": "Сухое помещение.", "decision": "", **inlines},
    )
    assert response.status_code == 302
    run.refresh_from_db()
    # no broker in tests: the run went on on a thread of this process
    from tests.normagpt.test_crash import wait_until

    wait_until(lambda: AgentRun.objects.get(pk=run.pk).status == "completed", 20, "the resumed run")
    run.refresh_from_db()
    assert run.review_note == "Сухое помещение."
    assert "Сухое помещение." in run.shared["scratchpad"]["reviewer_notes"]
    runs_page = client.get(f"/admin/normagpt/agentrun/{run.pk}/change/").content.decode()
    assert "judge" in runs_page
    assert "finalizer" in runs_page
    assert f'href="/normagpt/runs/{run.public_id}/"' in runs_page
    found = client.get("/admin/normagpt/agentrun/", {"q": run.public_id}).content.decode()
    assert f"/admin/normagpt/agentrun/{run.pk}/change/" in found


def test_admin_refuses_a_code_or_an_alias_held_already_written_another_way(  # type: ignore[no-untyped-def]
    client, staff, corpus
) -> None:
    """«сп 63.13330.2018» beside «СП 63.13330.2018», or an alias the document has, were a
    500 (the database's unique constraint) rather than a form error."""
    client.force_login(staff)
    form = {"title": "x", "kind": "sp", "status": "in_force", **INLINE}
    for code in ("сп 63.13330.2018", "СП  63.13330.2018 "):
        response = client.post("/admin/normagpt/normdocument/add/", {**form, "code": code})
        assert response.status_code == 200
        assert "уже есть в корпусе" in response.content.decode()
    document = NormDocument.objects.get(code="СП 63.13330.2018")
    alias = document.aliases.first()
    response = client.post(
        "/admin/normagpt/normdocumentalias/add/",
        {"document": document.pk, "alias": alias.alias.upper(), "automatic": ""},
    )
    assert response.status_code == 200
    assert "У документа уже есть это сокращённое название." in response.content.decode()


def test_a_document_of_many_pages_is_shown_and_saved_in_the_admin(client, staff, corpus) -> None:  # type: ignore[no-untyped-def]
    """A document of 3,000 pages sent 6,017 fields on save (Django refuses past 1,000):
    its form shows its first pages and links to all of them."""
    from normagpt.admin.corpus import PAGES_SHOWN
    from normagpt.models import NormPage

    document = corpus[0]
    start = document.pages.count()
    NormPage.objects.bulk_create(
        NormPage(document=document, number=start + n, text=f"стр. {n}") for n in range(1, 1200)
    )
    client.force_login(staff)
    url = f"/admin/normagpt/normdocument/{document.pk}/change/"
    page = client.get(url).content.decode()
    assert page.count("/admin/normagpt/normpage/") >= PAGES_SHOWN
    assert f"?document__id__exact={document.pk}" in page
    form = {
        "code": document.code, "title": document.title, "kind": document.kind,
        "status": document.status, **INLINE,
    }  # fmt: skip
    saved = client.post(url, {**form, "title": "Бетонные конструкции"})
    assert saved.status_code == 302, saved.content[:2000]
    document.refresh_from_db()
    assert document.title == "Бетонные конструкции"


def test_api_runs_come_a_page_at_a_time_and_a_status_is_one_there_is(user) -> None:  # type: ignore[no-untyped-def]
    """Runs past the 50 newest could not be listed; `?status=bogus` answered 200 with none."""
    api = APIClient()
    api.force_authenticate(user)
    AgentRun.objects.bulk_create(
        AgentRun(question=f"Вопрос {n}", user=user, status="completed") for n in range(60)
    )
    first = api.get("/api/normagpt/runs/").json()
    assert (len(first["runs"]), first["next_offset"]) == (50, 50)
    rest = api.get("/api/normagpt/runs/", {"offset": first["next_offset"]}).json()
    assert (len(rest["runs"]), rest["next_offset"]) == (10, None)
    seen = {run["run_id"] for run in first["runs"] + rest["runs"]}
    assert len(seen) == 60
    bogus = api.get("/api/normagpt/runs/", {"status": "bogus"})
    assert bogus.status_code == 400
    assert bogus.json()["message"].startswith("status must be one of queued, running")
    assert api.get("/api/normagpt/runs/", {"limit": "0"}).status_code == 400
    assert api.get("/api/normagpt/threads/", {"limit": "x"}).json()["extra"]["field"] == "limit"
