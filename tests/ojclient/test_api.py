"""The REST mirror of the tools: JSON, the same rules, the same errors, OpenAPI documented."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.ojclient.conftest import Backend, fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def test_problem_json(backend: Backend, api: APIClient) -> None:
    backend.reply("/api/v1/problems/codeforces/1920%2FA", fixture("problem_codeforces_1A.json"))
    response = api.get("/api/oj/problems/codeforces/1920/A/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["stored_copy_from"] is None
    (problem,) = body["problems"]
    assert problem["title"] == "Theatre Square"
    assert problem["difficulty"] is None
    assert problem["content_markdown"].startswith("Theatre Square in the capital")


def test_daily_fetching_and_ready(backend: Backend, api: APIClient) -> None:
    backend.reply("/api/v1/daily", fixture("daily_202_fetching.json"), status=202)
    body = api.get("/api/oj/daily/", {"date": "2026-01-01"}).json()
    assert (body["status"], body["retry_after"], body["problems"]) == ("fetching", 30, [])
    backend.reply("/api/v1/daily", fixture("daily_legacy_flat_200.json"))
    body = api.get("/api/oj/daily/", {"date": "2026-01-01", "domain": "cn"}).json()
    assert body["status"] == "ready"
    assert body["problems"][0]["source"] == "leetcode"
    assert backend.requests[-1].query == "domain=cn&date=2026-01-01"


def test_similar_and_resolve_and_status(backend: Backend, api: APIClient) -> None:
    backend.reply("/api/v1/similar", fixture("similar_200.json"))
    body = api.get("/api/oj/similar/", {"q": "two sum", "limit": 2}).json()
    assert body["mode"] == "query"
    assert [r["id"] for r in body["results"]] == ["167", "1520D"]
    # `query`, the name its errors and the tool use, is read too
    assert api.get("/api/oj/similar/", {"query": "two sum", "limit": 2}).json() == body
    short = api.get("/api/oj/similar/", {"query": "ab"}).json()
    assert short["message"] == "query must be between 3 and 2000 characters"
    backend.reply("/api/v1/resolve/two-sum", fixture("resolve_found.json"))
    assert api.get("/api/oj/resolve/", {"query": "two-sum"}).json()["problems"][0]["id"] == "1"
    backend.reply("/status", fixture("status_200.json"))
    refused = api.get("/api/oj/status/")
    assert refused.status_code in (401, 403)  # anonymous: the server's token is not spent
    assert not any(r.path == "/status" for r in backend.requests)
    from django.contrib.auth import get_user_model

    api.force_authenticate(get_user_model().objects.create_user("oj-user", password="pw-123456"))
    status = api.get("/api/oj/status/").json()
    assert status["version"] == "0.2.1"
    assert len(status["platforms"]) == 5


@pytest.mark.parametrize(
    ("url", "params", "status", "code", "message"),
    [
        (
            "/api/oj/similar/",
            {"q": "ab"},
            400,
            "oj_invalid_input",
            "query must be between 3 and 2000 characters",
        ),
        (
            "/api/oj/similar/",
            {"q": "abc", "limit": 60},
            400,
            "oj_invalid_input",
            "limit must be between 1 and 50",
        ),
        (
            "/api/oj/daily/",
            {"date": "yesterday"},
            400,
            "oj_invalid_input",
            "invalid date format, expected YYYY-MM-DD",
        ),
        (
            "/api/oj/problems/leetcode/999/",
            {},
            404,
            "oj_http_error",
            "OJ API: [404] Not Found: problem not found",
        ),
    ],
)
def test_errors_use_the_project_shape(
    backend: Backend,
    api: APIClient,
    url: str,
    params: dict[str, Any],
    status: int,
    code: str,
    message: str,
) -> None:
    backend.reply(
        "/api/v1/problems/leetcode/999",
        fixture("error_404_rfc7807.json"),
        status=404,
        content_type="application/problem+json",
    )
    response = api.get(url, params)
    assert response.status_code == status
    assert response.json()["code"] == code
    assert response.json()["message"] == message


def test_upstream_outage_is_a_502_naming_the_service(api: APIClient, settings: Any) -> None:
    from tests.conftest import free_port

    settings.OJ_API_BASE_URL = f"http://127.0.0.1:{free_port()}"
    response = api.get("/api/oj/problems/leetcode/1/")
    assert response.status_code == 502
    assert response.json()["extra"]["service"] == "OJ API"


def test_stored_problems_list_and_schema(backend: Backend, api: APIClient) -> None:
    backend.reply("/api/v1/problems/leetcode/1", fixture("problem_leetcode_1.json"))
    api.get("/api/oj/problems/leetcode/1/")
    listing = api.get("/api/oj/stored-problems/", {"source": "leetcode"}).json()
    assert [row["id"] for row in listing["results"]] == ["1"]
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path in ("/api/oj/daily/", "/api/oj/similar/", "/api/oj/resolve/", "/api/oj/status/"):
        assert path in schema["paths"], path
