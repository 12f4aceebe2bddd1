"""Production as the README writes it (issue 28, item 6): `manage.py serve` with DEBUG off
answers every page, static files included, whether or not `collectstatic` ran; a local
client cannot rotate X-Forwarded-For past the throttle; signing in lands on a page."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import (
    MANAGE,
    PYTHON,
    ROOT,
    free_port,
    stop,
    subprocess_env,
    wait_for_http,
)

PAGES = ["/", "/healthz", "/admin/", "/admin/login/", "/api/", "/api/docs/", "/normagpt/",
         "/normagpt/login/"]  # fmt: skip


def production_env(static_root: Path, **extra: str) -> dict[str, str]:
    return subprocess_env(
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="serve-test-" + "k" * 50,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_SSL_REDIRECT="0",  # plain http in the test; TLS is the proxy's
        DJANGO_SECURE_COOKIES="0",
        DJANGO_STATIC_ROOT=str(static_root),
        DJANGO_BEHIND_PROXY=None,
        **extra,
    )


def serving(command: list[str], env: dict[str, str], port: int) -> Iterator[str]:
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_http(f"{url}/healthz", proc)
        yield url
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`manage.py serve` as production runs it, with nothing collected beforehand: one
    server for the module's tests (none changes what it serves)."""
    port = free_port()
    command = [PYTHON, MANAGE, "serve", "--port", str(port), "--no-collectstatic"]
    static = tmp_path_factory.mktemp("served") / "static"
    env = production_env(static, API_THROTTLE_ANON="10/minute")
    yield from serving(command, env, port)


def pages_answer(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as http:
        for page in PAGES:
            reply = http.get(page)
            assert reply.status_code in (200, 302), (page, reply.status_code, reply.text[:300])
        login = http.get("/admin/login/")
        assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', login.text)
        assert assets, "the admin's login page links no static file"
        for asset in assets:
            assert http.get(asset).status_code == 200, asset


def test_serve_with_debug_off_and_nothing_collected_answers_every_page(served: str) -> None:
    pages_answer(served)


def test_the_plain_uvicorn_command_serves_the_pages_too(tmp_path: Path) -> None:
    """Without `serve` and without `collectstatic`, a page is never a 500 ("Missing
    staticfiles manifest entry"): files are linked by their own names."""
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "config.asgi:application", "--port", str(port)]
    for url in serving(command, production_env(tmp_path / "static"), port):
        pages_answer(url)


def test_collected_files_are_served_hashed(tmp_path: Path) -> None:
    port = free_port()
    static = tmp_path / "static"
    command = [PYTHON, MANAGE, "serve", "--port", str(port)]
    for url in serving(command, production_env(static), port):
        assert (static / "staticfiles.json").exists()
        login = httpx.get(f"{url}/admin/login/", timeout=30).text
        hashed = re.findall(r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', login)
        assert hashed, "the admin's stylesheet is not linked by its hashed name"
        assert httpx.get(f"{url}{hashed[0]}", timeout=30).status_code == 200


def test_a_local_client_cannot_rotate_x_forwarded_for_past_the_throttle(served: str) -> None:
    """Without DJANGO_BEHIND_PROXY nobody names the client: 20 requests from 127.0.0.1,
    each claiming another address, share the peer's budget of 10 a minute."""
    with httpx.Client(base_url=served, timeout=30) as http:
        codes = [
            http.get("/api/", headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
            for i in range(20)
        ]
    # at most the budget passes (less when the module's earlier tests spent some of it
    # on this server), whatever address each request claims
    assert codes.count(200) <= 10
    assert codes.count(429) >= 10
    assert set(codes) <= {200, 429}


def test_signing_in_without_next_lands_on_the_runs_page(served: str) -> None:
    """The login form, posted without `next`, goes to a page that exists (not the
    default /accounts/profile/)."""
    subprocess.run(
        [PYTHON, MANAGE, "shell", "-c",
         "from django.contrib.auth import get_user_model as m; u = m().objects.filter("
         "username='serve-reader').first() or m().objects.create_user('serve-reader'); "
         "u.set_password('pw-serve-12345'); u.save()"],
        cwd=ROOT, env=subprocess_env(), check=True, capture_output=True,
    )  # fmt: skip
    with httpx.Client(base_url=served, timeout=30) as http:
        form = http.get("/normagpt/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert token is not None
        reply = http.post(
            "/normagpt/login/",
            data={"username": "serve-reader", "password": "pw-serve-12345",
                  "csrfmiddlewaretoken": token.group(1)},
            headers={"Referer": f"{served}/normagpt/login/"},
        )  # fmt: skip
        assert reply.status_code == 302
        assert reply.headers["location"] == "/normagpt/"
        assert http.get(reply.headers["location"]).status_code == 200
