"""Every problem received is stored; while the API is down a marked stored copy is served."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client as WebClient

from ojclient.models import OjDailyChallenge, OjProblem
from tests.conftest import free_port
from tests.ojclient.conftest import Backend, call, fixture

pytestmark = pytest.mark.django_db(transaction=True)

STORED = re.compile(
    r"^\(stored copy from \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC; the API is unreachable\)\n\n"
)


def api_down(settings: Any) -> None:
    settings.OJ_API_BASE_URL = f"http://127.0.0.1:{free_port()}"


def test_problems_are_stored_and_served_while_the_api_is_unreachable(
    backend: Backend, settings: Any
) -> None:
    backend.reply("/api/v1/problems/leetcode/1", fixture("problem_leetcode_1.json"))
    is_error, fresh_text = call("get_problem", {"source": "leetcode", "id": "1"})
    assert not is_error
    row = OjProblem.objects.get(source="leetcode", problem_id="1")
    assert (row.title, row.title_cn, row.difficulty, row.tags, row.ac_rate) == (
        "Two Sum",
        "两数之和",
        "Easy",
        ["Array", "Hash Table"],
        57.08,
    )
    api_down(settings)
    is_error, stored_text = call("get_problem", {"source": "leetcode", "id": "1"})
    assert not is_error
    assert STORED.match(stored_text)
    assert STORED.sub("", stored_text) == fresh_text


def test_a_5xx_serves_the_stored_copy_but_a_4xx_does_not(backend: Backend) -> None:
    backend.reply("/api/v1/problems/leetcode/1", fixture("problem_leetcode_1.json"))
    call("get_problem", {"source": "leetcode", "id": "1"})
    backend.reply("/api/v1/problems/leetcode/1", fixture("error_502_rfc7807.json"), status=502)
    is_error, text = call("get_problem", {"source": "leetcode", "id": "1"})
    assert not is_error
    assert STORED.match(text)
    backend.reply("/api/v1/problems/leetcode/1", fixture("error_404_rfc7807.json"), status=404)
    assert call("get_problem", {"source": "leetcode", "id": "1"}) == (
        True,
        "OJ API: [404] Not Found: problem not found",
    )


def test_nothing_stored_means_the_error_itself(settings: Any) -> None:
    api_down(settings)
    is_error, text = call("get_problem", {"source": "leetcode", "id": "404"})
    assert is_error
    assert text.startswith("request failed: ")


def test_daily_challenges_are_stored_by_date_and_domain(backend: Backend, settings: Any) -> None:
    backend.reply("/api/v1/daily", fixture("daily_new_compact_shape_v0.3.json"))
    fresh_text = call("get_daily_challenge", {"date": "2026-01-01", "domain": "cn"})[1]
    daily = OjDailyChallenge.objects.get(date="2026-01-01", domain="cn")
    assert [p.problem_id for p in daily.problems.all()] == ["1"]
    api_down(settings)
    is_error, text = call("get_daily_challenge", {"date": "2026-01-01", "domain": "cn"})
    assert not is_error
    assert STORED.sub("", text) == fresh_text
    is_error, text = call("get_daily_challenge", {"date": "2026-01-01", "domain": "com"})
    assert is_error
    assert text.startswith("request failed: ")


def test_resolve_falls_back_to_a_stored_problem_by_link_slug_or_key(
    backend: Backend, settings: Any
) -> None:
    backend.reply("/api/v1/problems/leetcode/1", fixture("problem_leetcode_1.json"))
    call("get_problem", {"source": "leetcode", "id": "1"})
    api_down(settings)
    for query in ("https://leetcode.com/problems/two-sum", "two-sum", "leetcode:1"):
        is_error, text = call("resolve_problem", {"query": query})
        assert not is_error, query
        assert STORED.match(text)
        assert "# Two Sum" in text
    assert call("resolve_problem", {"query": "three-sum"})[0] is True


def test_admin_lists_the_stored_problems(backend: Backend) -> None:
    backend.reply("/api/v1/problems/codeforces/1A", fixture("problem_codeforces_1A.json"))
    call("get_problem", {"source": "codeforces", "id": "1A"})
    admin = User.objects.create_superuser("admin", "a@example.com", "pw")
    web = WebClient()
    web.force_login(admin)
    listing = web.get("/admin/ojclient/ojproblem/")
    assert listing.status_code == 200
    assert "Theatre Square" in listing.content.decode()
    row = OjProblem.objects.get()
    assert web.get(f"/admin/ojclient/ojproblem/{row.pk}/change/").status_code == 200
    assert web.get("/admin/ojclient/ojdailychallenge/").status_code == 200


def statements(run: Any) -> list[str]:
    """The SQL statements `run()` sends, transaction control left out."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        run()
    control = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")
    return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(control)]


def test_storing_a_problem_is_one_statement_and_a_second_fetch_updates_it(
    backend: Backend,
) -> None:
    from ojclient import services

    body = fixture("problem_leetcode_1.json")
    backend.reply("/api/v1/problems/leetcode/1", body)
    fetch = lambda: services.problem_get(source="leetcode", problem_id="1")  # noqa: E731
    (first,) = statements(fetch)
    assert first.startswith("INSERT")
    assert "ON CONFLICT" in first
    backend.reset()
    backend.reply("/api/v1/problems/leetcode/1", {**body, "title": "Two Sum (renamed)"})
    assert len(statements(fetch)) == 1
    (row,) = OjProblem.objects.all()
    assert row.title == "Two Sum (renamed)"


def test_storing_a_daily_challenge_is_four_statements_and_a_refetch_replaces_it(
    backend: Backend,
) -> None:
    from ojclient import services

    backend.reply("/api/v1/daily", fixture("daily_new_compact_shape_v0.3.json"))
    fetch = lambda: services.daily_get(date="2026-01-01", domain="cn")  # noqa: E731
    # problems upsert, daily upsert, its old entries deleted, its entries inserted
    sent = statements(fetch)
    assert [sql.split()[0] for sql in sent] == ["INSERT", "INSERT", "DELETE", "INSERT"]
    assert len(statements(fetch)) == 4
    (daily,) = OjDailyChallenge.objects.all()
    assert [p.problem_id for p in daily.problems.all()] == ["1"]
