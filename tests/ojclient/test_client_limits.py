"""The OJ client on the HTTP layer: the call's deadline, the body cap, the service named."""

from __future__ import annotations

import time

import pytest

from ojclient import client
from ojclient.exceptions import OjRequestFailed
from tests.upstream_servers import MB, answer, huge, scripted, trickle


@pytest.fixture
def oj(settings):  # type: ignore[no-untyped-def]
    settings.OJ_API_TIMEOUT = 1.5
    settings.OJ_API_TOKEN = ""
    return settings


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_trickling_api_is_cut_at_the_call_deadline(oj, headers_too) -> None:  # type: ignore[no-untyped-def]
    with trickle(headers_too=headers_too) as server:
        oj.OJ_API_BASE_URL = server.url
        started = time.monotonic()
        with pytest.raises(OjRequestFailed) as caught:
            client.problem(source="leetcode", problem_id="1")
        elapsed = time.monotonic() - started
    assert caught.value.message == (
        "request failed: the OJ API did not answer within 1.5 s "
        f"({server.url}/api/v1/problems/leetcode/1)"
    )
    assert caught.value.service == "OJ API"
    assert elapsed < 8  # the trickle would take two minutes
    assert len(server.requests) == 1  # the contract: no retries


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_a_20_mb_body_is_refused_at_the_cap(oj, declared) -> None:  # type: ignore[no-untyped-def]
    oj.OJ_API_TIMEOUT = 20
    with huge(content_length=declared) as server:
        oj.OJ_API_BASE_URL = server.url
        with pytest.raises(OjRequestFailed) as caught:
            client.status()
    assert caught.value.message == (
        f"request failed: the OJ API response is larger than {MB:,} bytes ({server.url}/status)"
    )
    assert caught.value.service == "OJ API"


def test_calls_share_one_keep_alive_connection(oj) -> None:  # type: ignore[no-untyped-def]
    body = b'{"ok": true}'
    with scripted([answer(200, body, headers={"Content-Type": "application/json"})]) as server:
        oj.OJ_API_BASE_URL = server.url
        for _ in range(3):
            assert client.status().data == {"ok": True}
    assert server.connections == 1


def test_the_call_runs_on_the_callers_thread(oj, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import threading

    seen: list[threading.Thread] = []
    real_get = client.shared_client

    def spy(upstream):  # type: ignore[no-untyped-def]
        http = real_get(upstream)
        original = http.request

        def request(*args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(threading.current_thread())
            return original(*args, **kwargs)

        monkeypatch.setattr(http, "request", request)
        return http

    monkeypatch.setattr(client, "shared_client", spy)
    with scripted([answer(200, b"{}", headers={"Content-Type": "application/json"})]) as server:
        oj.OJ_API_BASE_URL = server.url
        client.status()
    assert seen == [threading.current_thread()]
    assert not [t for t in threading.enumerate() if t.name == "ojclient-http"]
