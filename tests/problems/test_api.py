"""REST endpoints of the problem bank."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from problems.models import Category, CategoryProblem, Problem
from tests.problems.blocks import block, id_only, search_results

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def stored(pid: str, text: str, type_number: str = "1") -> Problem:
    return Problem.objects.create(
        subject="math",
        exam="ege",
        problem_id=pid,
        type_number=type_number,
        condition_text=text,
        search_text=text.lower(),
        fetched_at=timezone.now(),
    )


def test_problem_list_filters_without_n_plus_one(api: APIClient, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    for i in range(30):
        stored(str(i), f"Задача {i} про {'ромб' if i % 2 else 'круг'}", type_number=str(1 + i % 3))
    category = Category.objects.create(
        subject="math", exam="ege", category_id="79", fetched_at=timezone.now()
    )
    CategoryProblem.objects.create(
        category=category, problem=Problem.objects.get(problem_id="3"), position=0
    )
    with django_assert_num_queries(2):  # count + page
        page = api.get("/api/problems/", {"subject": "math", "q": "ромб"}).json()
    assert page["count"] == 15
    assert api.get("/api/problems/", {"type": "2"}).json()["count"] == 10
    assert [p["id"] for p in api.get("/api/problems/", {"category": "79"}).json()["results"]] == [
        "3"
    ]
    assert page["results"][0]["url"].endswith("/problem?id=" + page["results"][0]["id"])
    # a subject or exam as every other endpoint reads it: an alias, «ЕГЭ»; an unknown one named
    aliased = api.get("/api/problems/", {"subject": "Математика", "exam": "ЕГЭ", "q": "ромб"})
    assert aliased.json()["count"] == 15
    unknown = api.get("/api/problems/", {"subject": "klingon"})
    assert unknown.status_code == 400
    assert unknown.json()["message"].startswith("subject 'klingon' is not a СДАМ ГИА subject")
    assert api.get("/api/problems/", {"exam": "gre"}).status_code == 400
    other_exam = api.get("/api/problems/", {"subject": "mathb", "exam": "oge"})
    assert other_exam.status_code == 400
    assert "exists only for ege" in other_exam.json()["message"]
    # a type or category that is no number, and a q past its bound, are named, not «none»
    assert api.get("/api/problems/", {"type": "Д1"}).status_code == 200  # a task «Д1»
    for name, value in (("type", "1;2"), ("category", "abc"), ("q", "ромб" * 200)):
        refused = api.get("/api/problems/", {name: value})
        assert refused.status_code == 400, name
        assert refused.json()["extra"]["field"] == name


def test_detail_fetches_through_and_errors_use_the_envelope(api: APIClient, fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem(
        "math-ege", "42", block("42", "Найдите значение выражения 6 · 7.", answer="42")
    )
    detail = api.get("/api/problems/math/ege/42/")
    assert detail.status_code == 200
    assert detail.json()["answer"] == "42"
    bad_subject = api.get("/api/problems/astro/ege/42/")
    assert bad_subject.status_code == 400
    assert bad_subject.json()["code"] == "invalid_subject"
    assert bad_subject.json()["extra"] == {"field": "subject"}
    missing = api.get("/api/problems/math/ege/43/")
    assert missing.status_code == 404
    assert missing.json()["code"] == "problem_not_found"


def test_upstream_fault_is_a_502_naming_the_service(api: APIClient, fake_site) -> None:  # type: ignore[no-untyped-def]
    from tests.problems.fake_site import Fault

    fake_site.faults.append(Fault("status", status=500))
    response = api.get("/api/problems/math/ege/1/")
    assert response.status_code == 502
    assert response.json()["extra"]["service"] == "СДАМ ГИА"


def test_keyword_and_fuzzy_search_are_open_to_anonymous_clients(api: APIClient, fake_site) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem(
        "math-ege", "7", block("7", "Найдите площадь ромба с диагоналями 10 и 24.")
    )
    page = "<html><body>" + search_results([id_only("7")]) + "</body></html>"
    original = fake_site.respond
    fake_site.respond = lambda site, path, params: (
        (200, page) if path == "/search" else original(site, path, params)
    )
    keyword = api.get("/api/problems/math/ege/search/", {"query": "ромб"})
    assert keyword.status_code == 200
    assert keyword.json()["ids"] == ["7"]
    fuzzy = api.post(
        "/api/problems/math/ege/search-by-text/",
        {"condition_text": "площадь ромба диагонали 10 и 24", "threshold": 0.3},
        format="json",
    )
    assert fuzzy.status_code == 200
    assert fuzzy.json()["matches"][0]["id"] == "7"
    invalid = api.post(
        "/api/problems/math/ege/search-by-text/", {"condition_text": "short"}, format="json"
    )
    assert invalid.status_code == 400
    assert invalid.json()["message"].startswith("condition_text:")


def test_schema_documents_the_problem_endpoints(api: APIClient) -> None:
    paths = api.get("/api/schema/?format=json").json()["paths"]
    for path in [
        "/api/problems/",
        "/api/problems/{subject}/{exam}/{problem_id}/",
        "/api/problems/{subject}/{exam}/search-by-text/",
    ]:
        assert path in paths


def test_a_problems_categories_come_in_the_catalogs_order_however_they_are_read() -> None:
    """The statement behind a stored read lists the categories as `categories.all()` does
    (topic position, then the category's), and a prefetch is used when there is one."""
    from django.db.models import Prefetch

    from problems import selectors
    from problems.models import Topic
    from problems.subjects import site_resolve

    now = timezone.now()
    problem = stored("500", "Задача про ромб")
    first, second = (
        Topic.objects.create(
            subject="math", exam="ege", number=t, title=t, position=p, fetched_at=now
        )
        for t, p in (("a", 2), ("b", 1))
    )
    for category_id, topic, position in (("11", first, 0), ("12", second, 5), ("13", second, 1)):
        category = Category.objects.create(
            subject="math", exam="ege", category_id=category_id, topic=topic,
            position=position, fetched_at=now,
        )  # fmt: skip
        CategoryProblem.objects.create(category=category, problem=problem, position=0)
    expected = [c.category_id for c in problem.categories.all()]
    assert expected == ["13", "12", "11"]
    read = selectors.problems_by_ids(site=site_resolve(subject="math"), problem_ids=["500"])
    assert selectors.problem_category_ids(read["500"]) == expected
    prefetched = Problem.objects.prefetch_related(
        Prefetch("categories", queryset=Category.objects.filter(category_id="11"))
    ).get(pk=problem.pk)
    assert selectors.problem_category_ids(prefetched) == ["11"]  # the prefetch, not a query
