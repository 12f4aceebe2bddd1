"""Who may name the client's address (issue 54, item 7): what docs/deployment.md says of the
two ways to serve, checked against uvicorn itself and `manage.py serve`."""

from __future__ import annotations

from typing import Any

import pytest
import uvicorn
from django.core.management import call_command
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from tests.conftest import ROOT


@pytest.mark.anyio
async def test_plain_uvicorn_takes_a_forged_client_address_from_any_local_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    config = uvicorn.Config("config.asgi:application")
    assert config.proxy_headers is True
    assert config.forwarded_allow_ips == "127.0.0.1,::1"
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.update(client=scope["client"][0], scheme=scope["scheme"])

    forged = [(b"x-forwarded-for", b"203.0.113.9"), (b"x-forwarded-proto", b"https")]
    scope = {"type": "http", "client": ("127.0.0.1", 50000), "scheme": "http", "headers": forged}
    await ProxyHeadersMiddleware(app, config.forwarded_allow_ips)(scope, None, None)  # type: ignore[arg-type]
    assert seen == {"client": "203.0.113.9", "scheme": "https"}


def test_serve_turns_uvicorns_proxy_headers_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from config.management.commands import serve

    ran: dict[str, Any] = {}
    monkeypatch.setattr(serve, "database_migrated", lambda stderr: None)
    monkeypatch.setattr(serve, "call_command", lambda *args, **kwargs: None)
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: ran.update(options))
    call_command("serve", "--no-collectstatic", "--port", "8123")
    assert ran["proxy_headers"] is False
    assert ran["port"] == 8123


def test_the_deployment_page_says_both() -> None:
    text = " ".join((ROOT / "docs" / "deployment.md").read_text(encoding="utf-8").split())
    assert "`127.0.0.1,::1`" in text
    assert "--forwarded-allow-ips <the proxy's address>" in text
    assert "(`proxy_headers=False`)" in text
