"""The crawler command and the admin pages of the problem bank."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from problems.models import Category, Problem, Topic
from tests.problems.blocks import block, listing

pytestmark = pytest.mark.django_db

CATALOG = """<html><body><div class="cat_main">
<div class="cat_category cat_header"><b class="cat_name">Задание</b></div>
<div class="cat_category"><b class="cat_name"><span class="pcat_num">1</span>. Планиметрия</b>
<div class="cat_count cat_sum">7</div><div class="cat_children">
<div class="cat_category" data-id="79"><a class="cat_name" href="/test?filter=all&amp;category_id=79">Прямоугольный треугольник</a><div class="cat_count">5</div></div>
<div class="cat_category" data-id="90"><a class="cat_name" href="/test?filter=all&amp;category_id=90">Параллелограмм</a><div class="cat_count">2</div></div>
</div></div></div></body></html>"""


@pytest.fixture
def crawlable(fake_site):  # type: ignore[no-untyped-def]
    fake_site.add_page("math-ege", "/prob_catalog", {}, CATALOG)
    for category, ids in {"79": ["1", "2", "3", "4", "5"], "90": ["6", "7"]}.items():
        blocks = [(pid, block(pid, f"Задача {pid} категории {category}.")) for pid in ids]
        fake_site.add_page(
            "math-ege",
            "/test",
            {"filter": "all", "category_id": category, "page": 1},
            listing(blocks, page=1, total=1),
        )
    return fake_site


def test_crawl_reads_catalog_and_listings_then_resumes(crawlable) -> None:  # type: ignore[no-untyped-def]
    out, err = io.StringIO(), io.StringIO()
    call_command("sdamgia_crawl", subject="math", exam="ege", stdout=out, stderr=err)
    assert "done: 7 problems in 2 categories; 0 failed" in out.getvalue()
    assert Problem.objects.count() == 7
    assert Topic.objects.get().title == "Планиметрия"
    assert set(Category.objects.values_list("category_id", flat=True)) == {"79", "90"}
    listing_requests = len(crawlable.requests_to("/test"))
    call_command("sdamgia_crawl", subject="math", exam="ege", stdout=io.StringIO(), stderr=err)
    assert len(crawlable.requests_to("/test")) == listing_requests  # fresh: skipped
    assert "0 categories to read, 2 fresh (skipped)" in err.getvalue()


def test_crawl_dry_run_fetches_no_listing(crawlable) -> None:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    call_command("sdamgia_crawl", subject="math", dry_run=True, stdout=out, stderr=io.StringIO())
    assert "would read category 79" in out.getvalue()
    assert crawlable.requests_to("/test") == []


def test_admin_pages_render(admin_client) -> None:  # type: ignore[no-untyped-def]
    problem = Problem.objects.create(
        subject="math",
        exam="ege",
        problem_id="27340",
        type_number="1",
        condition_text="Найдите косинус A.",
        condition_html="<p>Найдите косинус A.</p>",
        figures=["https://math-ege.sdamgia.ru/get_file?id=1"],
        answer="0,5",
        fetched_at=timezone.now(),
    )
    changelist = admin_client.get("/admin/problems/problem/", {"subject": "math", "q": "косинус"})
    assert changelist.status_code == 200
    assert "27340" in changelist.content.decode()
    change = admin_client.get(f"/admin/problems/problem/{problem.pk}/change/")
    html = change.content.decode()
    assert "<p>Найдите косинус A.</p>" in html
    assert 'src="https://math-ege.sdamgia.ru/get_file?id=1"' in html
    assert "https://math-ege.sdamgia.ru/problem?id=27340" in html or "/problem?id=27340" in html
    assert admin_client.get("/admin/problems/topic/").status_code == 200
    assert admin_client.get("/admin/problems/category/").status_code == 200
    # a category that is no id is the changelist's own «?e=1», not a 500
    Category.objects.create(
        subject="math", exam="ege", category_id="79", title="Углы", fetched_at=timezone.now()
    )
    bad = admin_client.get("/admin/problems/problem/", {"category": "abc"})
    assert bad.status_code == 302
    assert bad["Location"].endswith("?e=1")


def test_admin_refresh_action(admin_client, fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem("math-ege", "5", block("5", "Новое условие задачи пять."))
    problem = Problem.objects.create(
        subject="math",
        exam="ege",
        problem_id="5",
        condition_text="старое",
        fetched_at=timezone.now(),
    )
    response = admin_client.post(
        "/admin/problems/problem/",
        {"action": "refresh_from_site", "_selected_action": [problem.pk]},
        follow=True,
    )
    assert "Обновлено задач: 1; с ошибкой: 0." in response.content.decode()
    problem.refresh_from_db()
    assert problem.condition_text == "Новое условие задачи пять."


def test_crawl_all_covers_every_site_of_both_exams_and_goes_on_past_a_dead_one(crawlable) -> None:  # type: ignore[no-untyped-def]
    crawlable.add_page("math-oge", "/prob_catalog", {}, CATALOG)
    for category in ("79", "90"):
        crawlable.add_page(
            "math-oge",
            "/test",
            {"filter": "all", "category_id": category, "page": 1},
            listing([(f"5{category}", block(f"5{category}", "Задача ОГЭ."))], page=1, total=1),
        )
    out, err = io.StringIO(), io.StringIO()
    call_command("sdamgia_crawl", all=True, stdout=out, stderr=err)
    asked = {r.site for r in crawlable.requests_to("/prob_catalog")}
    assert len(asked) == 30  # every subject of both exams
    assert "[30/30]" in err.getvalue()
    assert "math-ege: done: 7 problems in 2 categories" in out.getvalue()
    assert "math-oge: done: 2 problems in 2 categories" in out.getvalue()
    assert "rus-ege: skipped:" in err.getvalue()  # no catalog there: reported, not fatal
    assert "all sites: 9 problems in 4 categories; 0 categories failed; 28 of 30" in out.getvalue()
    assert set(Problem.objects.values_list("exam", flat=True)) == {"ege", "oge"}


def test_a_crawl_stopped_by_a_failing_category_resumes_with_only_that_one(crawlable) -> None:  # type: ignore[no-untyped-def]
    from tests.problems.fake_site import Fault

    crawlable.faults.append(Fault("status", status=503, path="/test", times=2))
    out, err = io.StringIO(), io.StringIO()
    call_command("sdamgia_crawl", subject="math", stdout=out, stderr=err)
    assert "1 failed" in out.getvalue()
    before = len(crawlable.requests_to("/test"))
    out = io.StringIO()
    call_command("sdamgia_crawl", subject="math", stdout=out, stderr=err)
    assert "1 categories to read, 1 fresh (skipped)" in err.getvalue()
    assert len(crawlable.requests_to("/test")) == before + 1
    assert Problem.objects.count() == 7


def test_crawl_needs_a_site(crawlable) -> None:  # type: ignore[no-untyped-def]
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match=r"--subject .* or --all"):
        call_command("sdamgia_crawl", stdout=io.StringIO(), stderr=io.StringIO())


def test_the_admin_refuses_a_problem_no_channel_could_read(admin_client) -> None:  # type: ignore[no-untyped-def]
    """Saved as typed, subject «zz» broke «Export as an Anki package» (KeyError) and
    `analogs` "123" was fetched as the ids 1, 2 and 3."""
    form = {
        "subject": "math", "exam": "ege", "problem_id": "100004", "type_number": "1",
        "answer": "5", "answers": '["5"]', "analogs": '["27340"]', "codifier": "[]",
        "solution_kind": "own", "fetched_at_0": "2026-01-01", "fetched_at_1": "00:00:00",
        "condition_text": "Найдите x.", "condition_html": "", "figures": "[]", "formulas": "[]",
        "solution_text": "", "solution_html": "", "solution_figures": "[]", "source_text": "",
        "internal_id": "",
    }  # fmt: skip
    for field, value, said in (
        ("subject", "zz", "zz — не предмет экзамена ege"),
        ("problem_id", "abc def", "Номер задачи — от 1 до 20 цифр 0–9."),
        ("answers", '{"a": 1}', "Список строк."),
        ("analogs", '"123"', "Список номеров задач (строк из цифр)."),
        ("codifier", "5", "Список {&quot;code&quot;: …, &quot;title&quot;: …}."),
    ):
        response = admin_client.post("/admin/problems/problem/add/", {**form, field: value})
        assert response.status_code == 200, field
        assert said in response.content.decode(), field
    assert not Problem.objects.exists()
    saved = admin_client.post("/admin/problems/problem/add/", form)
    assert saved.status_code == 302, saved.content.decode()[:3000]
