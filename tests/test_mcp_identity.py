"""Who calls over MCP (`core.identity`) and how `/mcp` lets callers in (`BearerTokenMiddleware`):
every case of token, shared token and settings, against a stand-in app behind the middleware."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from starlette.types import Receive, Scope, Send

from core import identity
from core.mcp_http import BearerTokenMiddleware
from tests.conftest import orm

pytestmark = pytest.mark.django_db(transaction=True)

SHARED = "shared-token-0d9e"


def test_bearer_of_reads_only_bearer_headers() -> None:
    assert identity.bearer_of("Bearer abc") == "abc"
    assert identity.bearer_of("bearer  abc ") == "abc"
    assert identity.bearer_of("Token abc") == ""
    assert identity.bearer_of("abc") == ""
    assert identity.bearer_of("") == ""


def test_tokens_name_their_users_and_configured_users_are_made_on_first_use(settings) -> None:  # type: ignore[no-untyped-def]
    settings.MCP_HTTP_TOKEN = SHARED
    settings.MCP_HTTP_TOKEN_USER = "desk"
    users = get_user_model().objects
    alice = users.create_user("alice", password="pw-123456")
    gone = users.create_user("gone", password="pw-123456", is_active=False)
    assert identity.token_caller(Token.objects.create(user=alice).key) == alice
    assert identity.token_caller(Token.objects.create(user=gone).key) is None
    assert identity.token_caller("not-a-token") is None
    desk = identity.token_caller(SHARED)
    assert desk is not None
    assert desk.get_username() == "desk"
    assert (desk.is_staff, desk.has_usable_password()) == (False, False)  # type: ignore[attr-defined]
    assert identity.token_caller(SHARED) == desk  # made once
    settings.MCP_HTTP_TOKEN = ""
    assert identity.token_caller(SHARED) is None


@pytest.mark.anyio
async def test_a_request_without_a_token_reads_no_user_until_a_call_asks(settings) -> None:  # type: ignore[no-untyped-def]
    """`greet` does not ask who calls: the request costs no query and no thread hop; the
    configured user is made when a call asks, and the session is bound to its name."""
    settings.MCP_HTTP_TOKEN, settings.MCP_HTTP_TOKEN_USER = "", "desk"
    seen: list[Any] = []

    async def keep(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["user"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = BearerTokenMiddleware(keep, token_required=False, protected_prefix="/mcp")
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        assert (await client.post("/mcp")).status_code == 200
    (caller,) = seen
    assert not await orm(lambda: get_user_model().objects.filter(username="desk").exists())
    assert caller.access_token.client_id == "desk"
    desk = await orm(lambda: caller.account)
    assert desk.get_username() == "desk"
    assert await orm(lambda: get_user_model().objects.filter(username="desk").count()) == 1


def test_without_an_http_request_the_caller_is_the_stdio_user(settings) -> None:  # type: ignore[no-untyped-def]
    settings.MCP_STDIO_USER = "desktop"
    assert identity.request_caller(None).get_username() == "desktop"
    assert identity.mcp_caller(None).get_username() == "desktop"
    with pytest.raises(RuntimeError, match="mcp_http_app"):
        identity.request_caller(SimpleNamespace(scope={}))  # HTTP that skipped the middleware


async def who(scope: Scope, receive: Receive, send: Send) -> None:
    """A stand-in for the MCP app: answers with the username the request acts as (the
    account read on a worker thread, as the tools read it)."""
    caller = scope.get("user")
    body = (await orm(lambda: caller.account.get_username())).encode() if caller else b"-"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def statuses(token_required: bool, *headers: dict[str, str], path: str = "/mcp") -> list[Any]:
    app = BearerTokenMiddleware(who, token_required=token_required, protected_prefix="/mcp")
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        answers = [await client.post(path, headers=h) for h in headers]
    return [a.text if a.status_code == 200 else a.status_code for a in answers]


def alice_key() -> str:
    alice = get_user_model().objects.create_user("alice", password="pw-123456")
    return str(Token.objects.create(user=alice).key)


@pytest.mark.anyio
async def test_the_middleware_lets_in_each_identity_and_refuses_the_rest(settings) -> None:  # type: ignore[no-untyped-def]
    settings.MCP_HTTP_TOKEN_USER = "desk"
    key = await orm(alice_key)
    alice, shared = {"Authorization": f"Bearer {key}"}, {"Authorization": f"Bearer {SHARED}"}
    wrong, none = {"Authorization": "Bearer wrong"}, {}

    settings.MCP_HTTP_TOKEN = ""  # loopback development: no token asked for
    assert await statuses(False, none, alice, wrong) == ["desk", "alice", 401]
    # production without a shared token: users' API tokens only
    assert await statuses(True, none, alice, wrong, shared) == [503, "alice", 401, 401]
    settings.MCP_HTTP_TOKEN = SHARED  # a shared token is set: every request brings a token
    for required in (False, True):
        assert await statuses(required, none, alice, shared, wrong) == [401, "alice", "desk", 401]
    assert await statuses(True, none, path="/healthz") == ["-"]  # only /mcp is guarded


@pytest.mark.anyio
async def test_refusals_say_which_tokens_are_taken(settings) -> None:  # type: ignore[no-untyped-def]
    settings.MCP_HTTP_TOKEN = ""
    app = BearerTokenMiddleware(who, token_required=True, protected_prefix="/mcp")
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        off = await client.post("/mcp")
        wrong = await client.post("/mcp", headers={"Authorization": "Bearer nope"})
    assert off.json()["code"] == "not_configured"
    assert "POST /api/auth/token/" in off.json()["message"]
    assert wrong.json()["code"] == "unauthorized"
    assert "MCP_HTTP_TOKEN" in wrong.json()["message"]
    assert wrong.headers["www-authenticate"].startswith("Bearer")
