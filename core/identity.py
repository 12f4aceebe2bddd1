"""Who calls over MCP: the Django user an MCP request acts as.

Over HTTP the bearer token says who (checked once per request by `core.mcp_http`, which
leaves the caller in the request's ASGI scope as `scope["user"]`):
- a user's API token (`rest_framework.authtoken`: what `POST /api/auth/token/` issues, the
  token REST takes) acts as that user, if active;
- the shared `MCP_HTTP_TOKEN` of a single-user deployment acts as `MCP_HTTP_TOKEN_USER`, and
  so does a request without a token to a server that asks for none (loopback, no token).
Over stdio, and in process where there is no HTTP request, the caller is `MCP_STDIO_USER`.
A configured user that does not exist yet is made on first use: not staff, no usable
password (nobody signs in as it; staff give it rights in the admin if they wish).

Everything here reads the database: call it on a worker thread.
"""

from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.hashers import make_password
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from rest_framework.authtoken.models import Token


class McpCaller(AuthenticatedUser):
    """An HTTP request's caller, as `scope["user"]`. Being the SDK's `AuthenticatedUser`,
    it binds a stateful session to the identity that opened it: a request of another
    identity with that session's id is answered "Session not found".

    `McpCaller.configured(name)`: a configured user (`MCP_HTTP_TOKEN_USER` for a request
    without a token to a server that asks for none), looked up only when a
    tool, resource or prompt asks who calls (on a worker thread): a call that does not
    ask (`greet`) costs no query and no thread hop.
    """

    def __init__(self, account: AbstractBaseUser | None, *, username: str = "") -> None:
        name = account.get_username() if account is not None else username
        subject = str(account.pk) if account is not None else f"configured:{username}"
        super().__init__(AccessToken(token="", client_id=name, scopes=[], subject=subject))
        self._account = account
        self._username = name

    @classmethod
    def configured(cls, username: str) -> McpCaller:
        return cls(None, username=username)

    @property
    def account(self) -> AbstractBaseUser:
        """The Django user (reads the database the first time: call it on a worker thread)."""
        if self._account is None:
            self._account = configured_user(self._username)
        return self._account


def configured_user(username: str) -> AbstractBaseUser:
    """The user named `username`, made now (not staff, no usable password) if missing."""
    model = get_user_model()
    user, _ = model._default_manager.get_or_create(
        **{model.USERNAME_FIELD: username}, defaults={"password": make_password(None)}
    )
    return user


def stdio_caller() -> AbstractBaseUser:
    return configured_user(settings.MCP_STDIO_USER)


def bearer_of(authorization: str) -> str:
    """The token of an `Authorization: Bearer <token>` header; "" for any other header."""
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def token_caller(token: str) -> AbstractBaseUser | None:
    """Whom `token` acts as over HTTP: `MCP_HTTP_TOKEN_USER` for the shared token, else the
    active user whose API token it is; None when it is neither."""
    shared = settings.MCP_HTTP_TOKEN
    if shared and hmac.compare_digest(token.encode(), shared.encode()):
        return configured_user(settings.MCP_HTTP_TOKEN_USER)
    found = Token.objects.select_related("user").filter(key=token).first()
    if found is None or not found.user.is_active:
        return None
    return found.user


def request_caller(request: Any | None) -> AbstractBaseUser:
    """The caller of an MCP message, from the transport's request object (the SDK's
    `request_context.request`): the HTTP request's caller, or the stdio user when there
    is none. Raises RuntimeError for an HTTP request that did not pass `core.mcp_http`."""
    if request is None:
        return stdio_caller()
    caller = request.scope.get("user")
    if not isinstance(caller, McpCaller):
        raise RuntimeError("an MCP HTTP request without its caller: serve it with mcp_http_app")
    return caller.account


def request_of(ctx: Context[Any, Any] | None) -> Any | None:
    """The transport's request behind a tool's or resource's context; None without one
    (stdio, in process, or a call made outside any request)."""
    if ctx is None:
        return None
    try:
        return ctx.request_context.request
    except ValueError:  # the SDK's "Context is not available outside of a request"
        return None


def mcp_caller(ctx: Context[Any, Any] | None) -> AbstractBaseUser:
    """The caller of a tool call, from its context (None: called outside MCP, as stdio)."""
    return request_caller(request_of(ctx))
