"""MCP over streamable HTTP: the ASGI app, who calls (bearer tokens) and Host checks."""

from __future__ import annotations

import ctypes
import gc
import ipaddress
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from core import identity
from core.mcp_content import on_db_thread

MCP_PATH = "/mcp"


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`: addresses no other machine can reach."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerTokenMiddleware:
    """Who calls MCP: each request under `protected_prefix` acts as a Django user
    (`core.identity`), left in `scope["user"]` for the tools, resources and subscriptions.

    `Authorization: Bearer <token>` takes a user's API token or the shared MCP_HTTP_TOKEN;
    a token that is neither is refused with 401. Without a token: served as
    MCP_HTTP_TOKEN_USER where none is asked for (no MCP_HTTP_TOKEN, not `token_required`);
    401 naming the header when MCP_HTTP_TOKEN is set; 503 when it is not but a token is
    required (production with no shared token: only users' API tokens get in).
    """

    def __init__(self, app: ASGIApp, *, token_required: bool, protected_prefix: str = "") -> None:
        self.app = app
        self.token_required = token_required
        self.protected_prefix = protected_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.protected_prefix):
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            token = identity.bearer_of(header)
            if token:
                caller = await on_db_thread(identity.token_caller, token)
                if caller is None:
                    await _json_response(send, 401, "unauthorized", WRONG_TOKEN_TEXT)
                    return
            elif settings.MCP_HTTP_TOKEN:
                await _json_response(send, 401, "unauthorized", WRONG_HEADER_TEXT)
                return
            elif self.token_required:
                await _json_response(send, 503, "not_configured", MCP_OFF_TEXT)
                return
            else:  # the configured user, looked up when a call asks who it is
                scope["user"] = identity.McpCaller.configured(settings.MCP_HTTP_TOKEN_USER)
                await self.app(scope, receive, send)
                return
            scope["user"] = identity.McpCaller(caller)
        await self.app(scope, receive, send)


TOKENS_TEXT = "a user's API token (POST /api/auth/token/) or MCP_HTTP_TOKEN"
MCP_OFF_TEXT = (
    "MCP over HTTP in production takes a user's API token (POST /api/auth/token/) as "
    "'Authorization: Bearer <token>'; MCP_HTTP_TOKEN, a shared token, is not set."
)
WRONG_HEADER_TEXT = (
    f"MCP over HTTP needs the header 'Authorization: Bearer <token>': {TOKENS_TEXT}."
)
WRONG_TOKEN_TEXT = f"The token of 'Authorization: Bearer <token>' is not valid: send {TOKENS_TEXT}."


async def _json_response(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"code": code, "message": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="mcp"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def transport_security(allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection that accepts exactly the hosts Django accepts."""
    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts: list[str] = []
    origins: list[str] = []
    for host in allowed_hosts:
        bare = host.lstrip(".")
        hosts += [bare, f"{bare}:*"]
        origins += [
            f"{scheme}://{bare}{port}" for scheme in ("http", "https") for port in ("", ":*")
        ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def mcp_http_app(
    server: MCPServer[Any], *, allowed_hosts: list[str], token_required: bool
) -> Starlette:
    """The Starlette app that serves MCP at /mcp (with the session manager's lifespan).

    Every request to /mcp acts as a user (`BearerTokenMiddleware`). With MCP_HTTP_TOKEN set,
    or `token_required`, it must carry a token: a user's API token or the shared one.
    """
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(allowed_hosts),
        # An abandoned session is closed after this idle time, so clients that never say
        # goodbye cannot grow the server's memory without bound.
        session_idle_timeout=float(settings.MCP_HTTP_SESSION_IDLE_SECONDS),
        max_sessions=settings.MCP_HTTP_MAX_SESSIONS,
        stateless_http=settings.MCP_HTTP_STATELESS,
    )
    app.add_middleware(
        BearerTokenMiddleware, token_required=token_required, protected_prefix=MCP_PATH
    )
    serve = app.router.lifespan_context
    interval = min(max(settings.MCP_HTTP_SESSION_IDLE_SECONDS / 2, 1.0), 60.0)

    @asynccontextmanager
    async def lifespan(starlette: Starlette) -> AsyncIterator[Any]:
        async with serve(starlette) as state, anyio.create_task_group() as tasks:
            tasks.start_soon(release_memory_every, interval)
            yield state
            tasks.cancel_scope.cancel()

    app.router.lifespan_context = lifespan
    return app


async def release_memory_every(seconds: float) -> None:
    """Give memory freed by expired sessions back to the operating system.

    Python keeps freed objects' memory in its allocator for reuse; after a wave of
    abandoned sessions has been reaped, a collection and glibc's `malloc_trim` let the
    resident size come back down instead of staying at the wave's peak.
    """
    trim = _malloc_trim()
    while True:
        await anyio.sleep(seconds)
        gc.collect()
        if trim is not None:
            trim(0)


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None  # not glibc: the collection alone
