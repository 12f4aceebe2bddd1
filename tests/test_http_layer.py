"""The outbound HTTP layer (core/http.py) against local misbehaving servers.

Bounds on elapsed time below are behaviour, not speed: a trickling server would hold a
call for minutes, the deadline cuts it at a second or two.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any

import httpcore
import httpx
import pytest

from core import http, http_shared
from core.exceptions import UpstreamError
from core.http import (
    AsyncUpstreamClient,
    DeadlineBackend,
    Failure,
    FailureKind,
    Upstream,
    UpstreamClient,
    shared_ssl_context,
)
from core.http_shared import shared_client
from tests.upstream_servers import MB, answer, closing, huge, never, scripted, trickle

DEADLINE = 1.0
PATIENT = 30.0  # for a call that must succeed: a deadline a busy machine keeps
CUT = 8.0  # far below what the misbehaving servers would take, far above the deadline


def upstream(url: str, **kw: Any) -> Upstream:
    kw.setdefault("deadline", DEADLINE)
    return Upstream(service="Test service", base_url=url, **kw)


def fail_sync(up: Upstream, method: str = "GET") -> tuple[UpstreamError, float]:
    started = time.monotonic()
    with UpstreamClient(up) as client, pytest.raises(UpstreamError) as caught:
        client.request(method, "/x")
    return caught.value, time.monotonic() - started


def fail_async(up: Upstream) -> tuple[UpstreamError, float]:
    async def go() -> None:
        async with AsyncUpstreamClient(up) as client:
            await client.get("/x")

    started = time.monotonic()
    with pytest.raises(UpstreamError) as caught:
        asyncio.run(go())
    return caught.value, time.monotonic() - started


def assert_names_service(error: UpstreamError, kind: FailureKind) -> None:
    assert error.service == "Test service"
    assert "Test service" in error.message
    assert error.extra["kind"] == kind


# --- the total deadline -------------------------------------------------------------------


@pytest.mark.parametrize("fail", [fail_sync, fail_async], ids=["sync", "async"])
@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_trickling_server_is_cut_at_the_deadline(fail, headers_too) -> None:  # type: ignore[no-untyped-def]
    with trickle(headers_too=headers_too) as server:
        error, elapsed = fail(upstream(server.url))
    assert_names_service(error, FailureKind.TIMEOUT)
    assert f"within {DEADLINE:g} s" in error.message
    assert DEADLINE * 0.9 <= elapsed < CUT


@pytest.mark.parametrize("fail", [fail_sync, fail_async], ids=["sync", "async"])
def test_a_silent_server_is_cut_at_the_deadline(fail) -> None:  # type: ignore[no-untyped-def]
    with never() as server:
        error, elapsed = fail(upstream(server.url))
    assert_names_service(error, FailureKind.TIMEOUT)
    assert elapsed < CUT


def test_retries_stop_at_the_deadline() -> None:
    with never() as server:
        up = upstream(server.url, deadline=1.5, attempt_timeout=0.4, retries=50, backoff=0.05)
        error, elapsed = fail_sync(up)
    assert_names_service(error, FailureKind.TIMEOUT)
    assert elapsed < CUT
    assert 2 <= len(server.requests) <= 4  # a few 0.4 s attempts fit in 1.5 s, not 51


def test_the_deadline_is_per_call_and_can_be_overridden() -> None:
    with trickle() as server, UpstreamClient(upstream(server.url, deadline=60)) as client:
        started = time.monotonic()
        with pytest.raises(UpstreamError, match=r"within 0\.5 s"):
            client.get("/x", deadline=0.5)
        assert time.monotonic() - started < CUT


# --- size and redirect caps ---------------------------------------------------------------


@pytest.mark.parametrize("fail", [fail_sync, fail_async], ids=["sync", "async"])
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_a_20_mb_body_is_refused_at_the_cap(fail, declared) -> None:  # type: ignore[no-untyped-def]
    with huge(content_length=declared) as server:
        error, _ = fail(upstream(server.url, deadline=20, max_body_bytes=MB))
    assert_names_service(error, FailureKind.TOO_LARGE)
    assert "1,048,576 bytes" in error.message


def test_a_body_at_the_cap_is_accepted() -> None:
    up = partial(upstream, max_body_bytes=MB, deadline=PATIENT)
    with huge(size=MB) as server, UpstreamClient(up(server.url)) as c:
        assert len(c.get("/x").content) == MB


def test_redirects_are_followed_up_to_the_cap() -> None:
    loop = answer(302, headers={"Location": "/again"})
    with scripted([loop, loop, answer(200, b"done")]) as server:
        with UpstreamClient(upstream(server.url, max_redirects=2, deadline=PATIENT)) as client:
            reply = client.get("/x")
        assert (reply.status, reply.content, reply.url) == (200, b"done", f"{server.url}/again")
    with scripted([loop]) as server:
        error, _ = fail_sync(upstream(server.url, max_redirects=3))
    assert_names_service(error, FailureKind.REDIRECTS)
    assert len(server.requests) == 4


def test_a_redirect_to_another_host_is_refused_when_same_host_only() -> None:
    away = answer(301, headers={"Location": "http://127.0.0.2:9/elsewhere"})
    with scripted([away]) as server:
        error, _ = fail_sync(upstream(server.url, same_host_redirects=True))
    assert_names_service(error, FailureKind.OTHER_HOST)
    assert "127.0.0.2:9/elsewhere" in error.message


def test_no_redirects_returns_the_redirect_itself() -> None:
    with (
        scripted([answer(302, headers={"Location": "/y"})]) as server,
        UpstreamClient(upstream(server.url, max_redirects=0)) as client,
    ):
        assert client.get("/x").status == 302


# --- retries ------------------------------------------------------------------------------


def test_retries_honour_retry_after() -> None:
    answers = [answer(429, headers={"Retry-After": "1"}), answer(200, b"ok")]
    with scripted(answers) as server:
        up = upstream(server.url, deadline=10, retries=2, backoff=0.01)
        with UpstreamClient(up) as client:
            started = time.monotonic()
            reply = client.get("/x")
            waited = time.monotonic() - started
    assert (reply.status, reply.attempts, len(server.requests)) == (200, 2, 2)
    assert waited >= 0.9  # the server asked for a second; the own back-off is 10 ms


def test_a_retry_after_past_the_deadline_is_not_waited_for() -> None:
    with (
        scripted([answer(503, headers={"Retry-After": "120"})]) as server,
        UpstreamClient(upstream(server.url, deadline=5, retries=3)) as client,
    ):
        reply = client.get("/x")
    assert (reply.status, len(server.requests)) == (503, 1)


def test_5xx_is_retried_up_to_the_bound_then_returned() -> None:
    with scripted([answer(502)]) as server:
        up = upstream(server.url, deadline=10, retries=2, backoff=0.01)
        with UpstreamClient(up) as client:
            reply = client.get("/x")
    assert (reply.status, reply.attempts, len(server.requests)) == (502, 3, 3)
    error = up.status_error(reply)
    assert isinstance(error, UpstreamError)
    assert "HTTP 502" in error.message
    assert "3 attempts" in error.message


def test_no_retries_means_one_request() -> None:
    up = partial(upstream, deadline=PATIENT)
    with scripted([answer(503)]) as server, UpstreamClient(up(server.url)) as client:
        assert client.get("/x").status == 503
    assert len(server.requests) == 1


def test_a_post_is_not_retried_after_it_was_sent() -> None:
    with scripted([answer(503)]) as server:
        up = upstream(server.url, retries=3, backoff=0.01, deadline=PATIENT)
        with UpstreamClient(up) as client:
            assert client.post("/x", json={"a": 1}).status == 503
    assert len(server.requests) == 1
    assert server.requests[0].body == b'{"a":1}'


def test_a_refused_connection_is_retried_then_named() -> None:
    with scripted([answer(200)]) as server:
        url = server.url  # closed when the block ends: nothing listens there any more
    error, _ = fail_sync(upstream(url, retries=2, backoff=0.01), method="POST")
    assert_names_service(error, FailureKind.CONNECT)
    assert "ConnectError" in error.message
    assert "3 attempts" in error.message


# --- connection policy --------------------------------------------------------------------


def test_close_policy_opens_a_connection_per_request() -> None:
    up = partial(upstream, keep_alive=False, deadline=PATIENT)
    with closing() as server, UpstreamClient(up(server.url)) as client:
        for _ in range(3):
            assert client.post("/", json={"action": "version"}).status == 200
    assert server.connections == 3
    assert all(r.headers.get("connection") == "close" for r in server.requests)


def test_keep_alive_reuses_one_connection() -> None:
    up = partial(upstream, deadline=PATIENT)
    with scripted([answer(200, b"ok")]) as server, UpstreamClient(up(server.url)) as client:
        for _ in range(3):
            assert client.get("/x").content == b"ok"
    assert server.connections == 1


def test_one_ssl_context_is_shared_and_the_pool_runs_on_the_deadline_backend() -> None:
    a = http.sync_transport(upstream("https://a.invalid"))
    b = http.sync_transport(upstream("https://b.invalid", keep_alive=False))
    # Pins httpx internals the layer relies on (see sync_transport): if an httpx upgrade
    # renames the pool, this fails instead of deadlines silently becoming per-read.
    for transport in (a, b):
        assert isinstance(transport._pool, httpcore.ConnectionPool)
        assert transport._pool._ssl_context is shared_ssl_context()
        assert isinstance(transport._pool._network_backend, DeadlineBackend)
    assert shared_ssl_context() is shared_ssl_context()


def test_a_plain_http_service_builds_no_ssl_context() -> None:
    """AnkiConnect on loopback: the CA bundle (~28 ms a process) is never loaded for it."""
    transport = http.sync_transport(upstream("http://127.0.0.1:8765"))
    assert transport._pool._ssl_context is None  # httpcore's verifying default if ever TLS


def test_shared_clients_are_one_per_policy_and_new_after_a_fork(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    up = upstream("http://127.0.0.1:9")
    first = shared_client(up)
    assert shared_client(upstream("http://127.0.0.1:9")) is first
    assert shared_client(upstream("http://127.0.0.1:9", deadline=2)) is not first
    monkeypatch.setattr(http_shared, "_shared_pid", -1)  # as if this process were a fork
    assert shared_client(up) is not first


# --- the app's own errors -----------------------------------------------------------------


class AppError(UpstreamError):
    pass


def app_error(failure: Failure) -> Exception:
    return AppError(f"request failed: {failure.kind}", service="App")


def test_an_app_chooses_its_exception_and_text() -> None:
    with never() as server:
        up = upstream(server.url, deadline=0.5, error=app_error)
        with (
            UpstreamClient(up) as client,
            pytest.raises(AppError, match=r"^request failed: timeout$"),
        ):
            client.get("/x")


def test_a_mock_transport_can_stand_in_for_the_network() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"path": request.url.path, "q": request.url.query.decode()})

    up = upstream("http://svc.test", headers={"X-Key": "k"})
    with UpstreamClient(up, transport=httpx.MockTransport(handler)) as client:
        reply = client.get("/a b", params={"q": "ж"})
    assert reply.json() == {"path": "/a b", "q": "q=%D0%B6"}
    assert reply.ok
