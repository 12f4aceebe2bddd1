"""The REST API: schema, docs, root, tool catalog, auth and the error envelope."""

from __future__ import annotations

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.urls import path
from openapi_spec_validator import validate
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from core.exceptions import InvalidInput, UpstreamError


class EchoApi(APIView):
    """A write endpoint with the project's default permissions (test only)."""

    def get(self, request):  # type: ignore[no-untyped-def]
        return Response({"read": True})

    def post(self, request):  # type: ignore[no-untyped-def]
        kind = request.data.get("raise")
        if kind == "invalid":
            raise InvalidInput("limit must be between 1 and 50", field="limit")
        if kind == "upstream":
            raise UpstreamError("sdamgia.ru is unreachable", service="sdamgia")
        return Response({"user": request.user.username})


urlpatterns = [path("echo/", EchoApi.as_view())]


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.mark.django_db
def test_schema_is_valid_openapi_3(api: APIClient) -> None:
    response = api.get("/api/schema/")
    assert response.status_code == 200
    spec = yaml.safe_load(response.content)
    assert spec["openapi"].startswith("3.")
    validate(spec)
    assert "/api/mcp-tools/" in spec["paths"]


@pytest.mark.django_db
def test_docs_and_root(api: APIClient) -> None:
    docs = api.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower()  # Swagger UI from the project's static files
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in docs
    links = api.get("/api/").json()["links"]
    assert links["schema"].endswith("/api/schema/")
    assert links["mcp_tools"].endswith("/api/mcp-tools/")
    for app, prefix in [
        ("problems", "/api/problems/"),
        ("anki_notes", "/api/anki/notes/"),
        ("oj_daily", "/api/oj/daily/"),
        ("normagpt_runs", "/api/normagpt/runs/"),
    ]:
        assert links[app].endswith(prefix)


@pytest.mark.django_db
def test_mcp_tool_catalog(api: APIClient) -> None:
    tools = {tool["name"]: tool for tool in api.get("/api/mcp-tools/").json()}
    assert tools["greet"]["app"] == "anki_bridge"
    assert tools["greet"]["read_only"] is True


@pytest.mark.django_db
@pytest.mark.urls("tests.test_api")
def test_writes_need_an_authenticated_user_and_tokens_work(api: APIClient) -> None:
    assert api.get("/echo/").status_code == 200
    anonymous = api.post("/echo/", {}, format="json")
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "not_authenticated"
    assert set(anonymous.json()) == {"code", "message", "extra"}

    get_user_model().objects.create_user("ada", password="s3cret-pass-phrase")
    api_with_token = APIClient()
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=get_user_model().objects.get(username="ada"))
    api_with_token.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api_with_token.post("/echo/", {}, format="json").json() == {"user": "ada"}


@pytest.mark.django_db
def test_token_endpoint_issues_tokens(api: APIClient) -> None:
    get_user_model().objects.create_user("ada", password="s3cret-pass-phrase")
    response = api.post(
        "/api/auth/token/", {"username": "ada", "password": "s3cret-pass-phrase"}, format="json"
    )
    assert response.status_code == 200
    assert len(response.json()["token"]) == 40
    bad = api.post("/api/auth/token/", {"username": "ada", "password": "nope"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_input"


@pytest.mark.django_db
@pytest.mark.urls("tests.test_api")
def test_domain_errors_map_to_the_envelope_with_their_status(api: APIClient) -> None:
    user = get_user_model().objects.create_user("ada", password="s3cret-pass-phrase")
    api.force_authenticate(user)
    invalid = api.post("/echo/", {"raise": "invalid"}, format="json")
    assert invalid.status_code == 400
    assert invalid.json() == {
        "code": "invalid_input",
        "message": "limit must be between 1 and 50",
        "extra": {"field": "limit"},
    }
    upstream = api.post("/echo/", {"raise": "upstream"}, format="json")
    assert upstream.status_code == 502
    assert upstream.json()["extra"] == {"service": "sdamgia"}


@pytest.mark.django_db
def test_unknown_api_path_is_a_json_404(api: APIClient) -> None:
    response = api.get("/api/mcp-tools/nope/")
    assert response.status_code == 404


@pytest.mark.django_db
def test_anonymous_clients_are_throttled(api: APIClient, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute"})
    statuses = [api.get("/api/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    throttled = api.get("/api/")
    assert throttled.json()["code"] == "throttled"
    assert "Retry-After" in throttled


@pytest.mark.parametrize(
    ("language", "root", "tools"),
    [("ru", "API центра инструментов", "Инструменты MCP"), ("en", "Tool hub API", "MCP tools")],
)
def test_the_browsable_api_pages_are_titled_in_the_language_asked(
    client, language: str, root: str, tools: str
) -> None:  # type: ignore[no-untyped-def]
    """Not "Api Root Api" (the class name), and in the page's language (issue 28)."""
    for url, title in (("/api/", root), ("/api/mcp-tools/", tools)):
        page = client.get(url, HTTP_ACCEPT="text/html", HTTP_ACCEPT_LANGUAGE=language)
        html = page.content.decode()
        assert f"<h1>{title}</h1>" in html
        assert "Api Root" not in html
