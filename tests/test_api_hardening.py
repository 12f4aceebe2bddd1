"""The REST API never answers 500 to a request: hostile bodies, query strings and headers.

Every refusal is a 4xx in the one error shape; throttles key on an address that
`X-Forwarded-For` cannot spoof; anonymous calls that reach an upstream have a scope of
their own.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from core import throttling
from core.parsers import MAX_JSON_DEPTH, json_depth, json_loads
from core.throttling import client_address

SETTINGS_FILE = Path(__file__).resolve().parent.parent / "config" / "settings.py"
# Anonymous POSTs that parse a body (no request leaves: the body is refused first).
BATCH = "/api/problems/math/ege/batch/"
TOKEN = "/api/auth/token/"
SHAPE = {"code", "message", "extra"}


class CrashApi(APIView):
    """A view with a bug (test only)."""

    def get(self, request):  # type: ignore[no-untyped-def]
        raise RuntimeError("secret detail in a traceback")


class EchoApi(APIView):
    def post(self, request):  # type: ignore[no-untyped-def]
        return Response({"data": request.data})


urlpatterns = [
    path("api/crash/", CrashApi.as_view()),
    path("api/echo/", EchoApi.as_view()),
    path("", include("config.urls")),
]


@pytest.fixture
def client() -> Client:
    return Client(raise_request_exception=False)


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The body of an error response, checked to be in the one shape with `status`."""
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body: dict[str, Any] = json.loads(response.content)
    assert set(body) == SHAPE
    assert b"Traceback" not in response.content
    return body


def post_raw(client: Client, url: str, body: bytes, content_type: str = "application/json") -> Any:
    return client.generic("POST", url, body, content_type=content_type)


# --- bodies ----------------------------------------------------------------------------

DEEP = 100_000
HOSTILE_BODIES = {
    "json_depth": [
        b"[" * DEEP + b"]" * DEEP,
        b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        b'{"problem_ids": ' + b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1) + b"}",
    ],
    "text_surrogate": [b'{"problem_ids": ["\\ud800"]}', b'{"\\udfff": 1}'],
    "text_nul": [b'{"problem_ids": ["a\\u0000b"]}'],
    "encoding": [b'{"problem_ids": ["\xff\xfe"]}', b'{"a": "\xed\xa0\x80"}'],
    "finite_number": [b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e999}'],
    "integer_range": [b'{"a": ' + b"9" * 5000 + b"}", b'{"a": 9223372036854775808}'],
    "json_syntax": [b'{"a": ', b"\xef\xbb\xbf{}", b"[1,]", b'"\\x"'],
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("rule", "body"),
    [(rule, body) for rule, bodies in HOSTILE_BODIES.items() for body in bodies],
    ids=[f"{rule}-{i}" for rule, bodies in HOSTILE_BODIES.items() for i in range(len(bodies))],
)
@pytest.mark.parametrize("url", [BATCH, TOKEN])
def test_hostile_json_bodies_get_400_naming_the_rule(client, url, rule, body) -> None:  # type: ignore[no-untyped-def]
    error = error_of(post_raw(client, url, body), 400)
    assert error["code"] == "invalid_input"
    assert error["extra"]["rule"] == rule
    assert error["message"].startswith("request body: ")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("charset", "body"),
    [
        ("bz2_codec", b"BZh9"),
        ("unicode_escape", b'{"problem_ids": ["\\ud800"]}'),  # would decode to a lone surrogate
        ("latin-1", b'{"problem_ids": ["1"]}'),
        ("utf-16", b"\xff\xfe{\x00\x00\xd8}\x00"),  # a lone surrogate, UTF-16 encoded
    ],
)
def test_charsets_other_than_utf_are_refused(client, charset, body) -> None:  # type: ignore[no-untyped-def]
    response = post_raw(client, BATCH, body, f"application/json; charset={charset}")
    assert error_of(response, 400)["extra"]["rule"] == "encoding"


@pytest.mark.django_db
@pytest.mark.parametrize("url", [BATCH, TOKEN])
def test_a_10_mb_body_is_413(client, settings, url) -> None:  # type: ignore[no-untyped-def]
    body = b'{"problem_ids": ["' + b"1" * (10 * 1024 * 1024) + b'"]}'
    error = error_of(post_raw(client, url, body), 413)
    assert error["code"] == "request_too_large"
    assert error["extra"] == {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}


@pytest.mark.django_db
def test_the_body_limit_holds_without_a_content_length(client, settings) -> None:  # type: ignore[no-untyped-def]
    """A body whose size Django was not told (chunked) is cut by the parser itself."""
    from io import BytesIO

    from core.parsers import JSONParser, RequestTooLarge

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    with pytest.raises(RequestTooLarge):
        JSONParser().parse(BytesIO(b"[" + b"1," * 100 + b"1]"), "application/json", {})


@pytest.mark.django_db
def test_form_bodies_are_415_in_the_shape(client) -> None:  # type: ignore[no-untyped-def]
    big_form = b"a=" + b"x" * (10 * 1024 * 1024)
    response = post_raw(client, BATCH, big_form, "application/x-www-form-urlencoded")
    assert error_of(response, 415)["code"] == "unsupported_media_type"
    multipart = b'--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--B--\r\n'
    response = post_raw(client, BATCH, multipart, "multipart/form-data; boundary=B")
    assert error_of(response, 415)["code"] == "unsupported_media_type"


@pytest.mark.django_db
@pytest.mark.urls("tests.test_api_hardening")
def test_valid_json_still_parses(client) -> None:  # type: ignore[no-untyped-def]
    get_user_model().objects.create_user("ada", password="s3cret-pass-phrase")
    client.login(username="ada", password="s3cret-pass-phrase")
    nested = "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)  # 64 with the object
    body = (
        '{"text": "é \\ud83d\\ude00 [[[{{{", "pi": 3.14, "big": -9223372036854775808, '
        f'"nested": {nested}, "flag": true, "none": null}}'
    )
    response = client.post("/api/echo/", body, content_type="application/json; charset=utf-8")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["text"] == "é \U0001f600 [[[{{{"
    assert (data["pi"], data["big"], data["flag"], data["none"]) == (3.14, -(2**63), True, None)


def test_json_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth('["[[[[", {"a": ["]]]"]}]') == 0  # fast path: few brackets
    text = '["' + "[" * 500 + '\\"", [[1]]]'
    assert json_depth(text) == 3
    assert json_depth("[" * 1000 + "]" * 1000) == 1000
    assert json_loads(text)[1] == [[1]]


# --- query strings, errors outside DRF --------------------------------------------------


@pytest.mark.django_db
def test_a_60_kb_query_string_is_414(client, settings) -> None:  # type: ignore[no-untyped-def]
    error = error_of(client.get("/api/problems/?q=" + "%" * 60_000), 414)
    assert error["code"] == "uri_too_long"
    assert error["extra"] == {"limit": settings.MAX_QUERY_STRING_BYTES}
    page = client.get("/?q=" + "x" * 60_000)
    assert page.status_code == 414
    assert page["Content-Type"].startswith("text/plain")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "/api/problems/?q=a%00",
        "/api/oj/stored-problems/?source=%00",
        "/api/problems/math/ege/1%00/",
    ],
)
def test_a_nul_in_the_url_is_400(client, url) -> None:  # type: ignore[no-untyped-def]
    """PostgreSQL refuses NUL in text: filtering on one would be a 500."""
    error = error_of(client.get(url), 400)
    assert (error["code"], error["extra"]) == ("invalid_input", {"rule": "url_nul"})


@pytest.mark.django_db
def test_too_many_query_parameters_are_400(client) -> None:  # type: ignore[no-untyped-def]
    query = "&".join(["a=1"] * 1500)
    error = error_of(client.get(f"/api/normagpt/documents/?{query}"), 400)
    assert error["code"] == "invalid_input"
    assert error["extra"]["rule"] == "max_fields"


@pytest.mark.django_db
def test_errors_outside_views_have_the_shape(client) -> None:  # type: ignore[no-untyped-def]
    assert error_of(client.get("/api/no/such/path/"), 404)["code"] == "not_found"
    assert error_of(client.get("/api/", HTTP_HOST="evil.example"), 400)["code"] == "bad_request"
    # Outside /api/ pages keep their HTML.
    assert client.get("/no/such/page/")["Content-Type"].startswith("text/html")


@pytest.mark.django_db(transaction=True)
@pytest.mark.anyio
async def test_the_middleware_works_under_asgi() -> None:
    from django.test import AsyncClient

    client = AsyncClient(raise_request_exception=False)
    assert error_of(await client.get("/api/no/such/path/"), 404)["code"] == "not_found"
    assert error_of(await client.get("/api/?q=" + "x" * 60_000), 414)["code"] == "uri_too_long"
    assert (await client.get("/api/")).status_code == 200


@pytest.mark.anyio
async def test_the_middleware_has_an_async_path() -> None:
    from asgiref.sync import iscoroutinefunction
    from django.http import HttpResponseNotFound
    from django.test import RequestFactory

    from core.api import api_limits_middleware

    async def view(request):  # type: ignore[no-untyped-def]
        return HttpResponseNotFound("<h1>Not Found</h1>")

    middleware = api_limits_middleware(view)
    assert iscoroutinefunction(middleware)
    response = await middleware(RequestFactory().get("/api/x/"))
    assert error_of(response, 404)["code"] == "not_found"
    response = await middleware(RequestFactory().get("/api/x/?q=" + "x" * 60_000))
    assert error_of(response, 414)["code"] == "uri_too_long"


@pytest.mark.django_db
@pytest.mark.urls("tests.test_api_hardening")
@pytest.mark.parametrize("debug", [False, True])
def test_a_crash_is_a_json_500_without_its_traceback(client, settings, debug) -> None:  # type: ignore[no-untyped-def]
    settings.DEBUG = debug
    response = client.get("/api/crash/")
    error = error_of(response, 500)
    assert error["code"] == "server_error"
    assert b"secret detail" not in response.content


@pytest.mark.django_db
def test_admin_pdf_uploads_are_not_bound_by_the_body_limit(client, settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Uploaded files do not count against DATA_UPLOAD_MAX_MEMORY_SIZE (norm PDFs are large)."""
    from normagpt.models import NormDocument

    settings.MEDIA_ROOT = tmp_path
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    staff = get_user_model().objects.create_superuser("reviewer", password="pw-123456")
    client.force_login(staff)
    pdf = b"%PDF-1.4\n" + b"0" * 200_000
    response = client.post(
        "/admin/normagpt/normdocument/add/",
        {
            "code": "СП 1.2026",
            "title": "Большой документ",
            "kind": "sp",
            "status": "in_force",
            "file": SimpleUploadedFile("big.pdf", pdf, content_type="application/pdf"),
            "pages-TOTAL_FORMS": "0",
            "pages-INITIAL_FORMS": "0",
            "amendments-TOTAL_FORMS": "0",
            "amendments-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content[:500]
    assert NormDocument.objects.get().file.size == len(pdf)


# --- throttling -------------------------------------------------------------------------


@pytest.fixture
def anon_rate(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(throttling.AnonRateThrottle, "THROTTLE_RATES", {"anon": "5/minute"})


def statuses(client: Client, url: str, headers: list[dict[str, str]]) -> list[int]:
    return [client.get(url, **extra).status_code for extra in headers]


EXPECTED = [200] * 5 + [429] * 15


@pytest.mark.django_db
@pytest.mark.usefixtures("anon_rate")
def test_changing_x_forwarded_for_does_not_buy_a_new_allowance(client) -> None:  # type: ignore[no-untyped-def]
    spoofed = [{"HTTP_X_FORWARDED_FOR": f"198.51.100.{i}"} for i in range(20)]
    assert statuses(client, "/api/", spoofed) == EXPECTED
    plain = [{"REMOTE_ADDR": "192.0.2.1"}] * 20
    assert statuses(client, "/api/", plain) == EXPECTED


@pytest.mark.django_db
@pytest.mark.usefixtures("anon_rate")
def test_behind_a_trusted_proxy_the_client_it_names_is_counted(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    via_proxy = {"REMOTE_ADDR": "10.0.0.2"}
    # The client prepends what it likes; the proxy appends the address it saw.
    spoofed = [
        {**via_proxy, "HTTP_X_FORWARDED_FOR": f"203.0.113.{i}, 198.51.100.7"} for i in range(20)
    ]
    assert statuses(client, "/api/", spoofed) == EXPECTED
    other = {**via_proxy, "HTTP_X_FORWARDED_FOR": "198.51.100.8"}
    assert client.get("/api/", **other).status_code == 200
    # A peer that is not a listed proxy names nobody but itself.
    outsider = [
        {"REMOTE_ADDR": "192.0.2.9", "HTTP_X_FORWARDED_FOR": f"10.0.0.{i}"} for i in range(6)
    ]
    assert statuses(client, "/api/", outsider) == [200] * 5 + [429]


@pytest.mark.parametrize(
    ("trusted", "peer", "forwarded", "expected"),
    [
        ([], "192.0.2.1", "198.51.100.1", "192.0.2.1"),
        (["*"], "192.0.2.1", "203.0.113.1, 198.51.100.1", "198.51.100.1"),
        (["*"], "192.0.2.1", "", "192.0.2.1"),
        (["10.0.0.0/8"], "10.0.0.1", "198.51.100.1, 10.9.9.9, 10.0.0.7", "198.51.100.1"),
        (["10.0.0.0/8"], "10.0.0.1", "10.1.1.1, 10.2.2.2", "10.1.1.1"),
        (["10.0.0.0/8"], "10.0.0.1", "198.51.100.1, garbage", "10.0.0.1"),
        (["10.0.0.0/8"], "10.0.0.1", "198.51.100.1:4711", "198.51.100.1"),
        (["10.0.0.0/8", "::1"], "::1", "[2001:db8::1]:443", "2001:db8::/64"),
        ([], "2001:db8::1234", "", "2001:db8::/64"),
        ([], "::ffff:192.0.2.5", "", "192.0.2.5"),
        ([], "", "198.51.100.1", "unknown"),
    ],
)
def test_client_address(settings, trusted, peer, forwarded, expected) -> None:  # type: ignore[no-untyped-def]
    from django.test import RequestFactory

    settings.TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


@pytest.mark.parametrize(
    ("value", "trusted", "proxy_ssl"),
    [
        ("", [], False),
        ("0", [], False),
        ("true", ["*"], True),
        ("10.0.0.5, 172.16.0.0/12,::1", ["10.0.0.5", "172.16.0.0/12", "::1"], True),
    ],
)
def test_django_behind_proxy_setting(monkeypatch, value, trusted, proxy_ssl) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DJANGO_BEHIND_PROXY", value)
    namespace = runpy.run_path(str(SETTINGS_FILE))
    assert namespace["TRUSTED_PROXIES"] == trusted
    assert ("SECURE_PROXY_SSL_HEADER" in namespace) is proxy_ssl


def test_django_behind_proxy_refuses_what_is_not_an_address(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DJANGO_BEHIND_PROXY", "10.0.0.5,proxy.internal")
    with pytest.raises(ImproperlyConfigured, match=r"proxy\.internal"):
        runpy.run_path(str(SETTINGS_FILE))


UPSTREAM_ANON_CALLS = [
    ("get", "/api/problems/math/ege/catalog/"),
    ("get", "/api/problems/math/ege/search/?q=x"),
    ("get", "/api/problems/math/ege/1/"),
    ("post", "/api/problems/math/ege/batch/"),
    ("post", "/api/problems/math/ege/search-by-text/"),
    ("get", "/api/oj/daily/"),
    ("get", "/api/oj/problems/leetcode/1/"),
    ("get", "/api/oj/similar/?q=x"),
    ("get", "/api/oj/resolve/?query=x"),
]
LOCAL_CALLS = ["/api/problems/", "/api/oj/stored-problems/", "/api/normagpt/documents/", "/api/"]


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "url"), UPSTREAM_ANON_CALLS)
def test_anonymous_calls_that_reach_an_upstream_have_their_own_scope(
    client, monkeypatch, method, url
) -> None:  # type: ignore[no-untyped-def]
    # A rate of none: the throttle answers before the view could reach the network.
    rates = {"upstream_anon": "0/minute"}
    monkeypatch.setattr(throttling.UpstreamAnonRateThrottle, "THROTTLE_RATES", rates)
    error = error_of(getattr(client, method)(url, content_type="application/json"), 429)
    assert error["code"] == "throttled"


@pytest.mark.django_db
def test_the_upstream_scope_spares_local_reads_and_users(client, monkeypatch, settings) -> None:  # type: ignore[no-untyped-def]
    rates = {"upstream_anon": "2/minute"}
    monkeypatch.setattr(throttling.UpstreamAnonRateThrottle, "THROTTLE_RATES", rates)
    settings.OJ_API_BASE_URL = ""
    settings.OJ_API_TOKEN = ""
    for url in LOCAL_CALLS:
        assert statuses(client, url, [{}] * 3) == [200] * 3
    assert statuses(client, "/api/oj/daily/", [{}] * 3) == [503, 503, 429]
    assert statuses(client, "/api/oj/status/", [{}] * 3) == [401] * 3  # signed-in users only
    user = get_user_model().objects.create_user("ada", password="s3cret-pass-phrase")
    client.force_login(user)
    assert statuses(client, "/api/oj/status/", [{}] * 3) == [503] * 3


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False])
def test_a_post_without_the_trailing_slash_reaches_its_endpoint(client, settings, debug) -> None:  # type: ignore[no-untyped-def]
    """`POST /api/auth/token` was a 500 under DEBUG and a 301 without it, which a client
    follows as a GET: what it posted was never made."""
    settings.DEBUG = debug
    get_user_model().objects.create_user("ada", password="s3cret-pass-phrase")
    body = {"username": "ada", "password": "s3cret-pass-phrase"}
    response = client.post(TOKEN.rstrip("/"), body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["token"]
    assert client.get("/api/no-such-thing").status_code == 404  # nothing made up
