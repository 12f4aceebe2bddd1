"""MCP logging: `logging/setLevel` per connection, the project's log records as
`notifications/message` to the client whose request they were logged for.

A client that sets a level gets, on the stream of each of its later requests, every record
the project's loggers (`LOGGED_PACKAGES`) emit while serving that request at or above the
level: a tool's failure, an upstream that did not answer, a retry. No level set, no
messages (the spec leaves the default to the server). The level belongs to the connection:
a stdio process, a stateful HTTP session. Stateless HTTP has no session, so a level lasts
for the request that sets it; a 2026-07-28 client asks per request instead (the
`io.modelcontextprotocol/logLevel` key of a request's `_meta`), on every transport.

Records logged on an SDK worker thread (sync tools, database reads) reach the request
through the context the thread inherits and are sent before it goes on, so they come
before the request's answer.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, get_args

from mcp.server.connection import allowed_log_levels
from mcp.server.mcpserver import MCPServer
from mcp_types import (
    EmptyResult,
    LoggingLevel,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
    SetLevelRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

LEVELS: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)  # severity ascending (RFC 5424)
LOGGED_PACKAGES = ("core", "config", "problems", "anki_bridge", "ojclient", "normagpt")
SEND_SECONDS = 5.0  # how long a worker thread waits for its record to be sent


def mcp_level(levelno: int) -> LoggingLevel:
    """The MCP level of a Python record's level."""
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


@dataclass(frozen=True)
class Listener:
    """The request being served, and the levels its client wants to read."""

    send: Callable[[LoggingMessageNotification], Coroutine[Any, Any, None]]
    wanted: frozenset[LoggingLevel]
    loop: asyncio.AbstractEventLoop


LISTENER: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "mcp_log_listener", default=None
)


def at_or_above(level: LoggingLevel) -> frozenset[LoggingLevel]:
    return frozenset(LEVELS[LEVELS.index(level) :])


class SessionLogging:
    """The logging capability of one server: the levels set per connection, the
    middleware that puts each request's listener in its context, and the handler."""

    def __init__(self) -> None:
        self.levels: weakref.WeakKeyDictionary[Any, LoggingLevel] = weakref.WeakKeyDictionary()

    def install(self, server: MCPServer[Any]) -> None:
        """`logging/setLevel` served (so `initialize` declares `logging`), the middleware
        added, the handler on the project's loggers (once per process)."""
        lowlevel = server._lowlevel_server  # the SDK's public handler registry (mcp 2.3)
        lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, self.set_level)
        lowlevel.middleware.append(self.middleware)
        for name in LOGGED_PACKAGES:
            target = logging.getLogger(name)
            if not any(isinstance(h, ClientLogHandler) for h in target.handlers):
                target.addHandler(ClientLogHandler())

    async def set_level(self, ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        self.levels[connection_of(ctx.session)] = params.level
        return EmptyResult()

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if ctx.request_id is None or ctx.method == "initialize":
            return await call_next(ctx)
        wanted = self.wanted(ctx)
        if not wanted:
            return await call_next(ctx)
        session, request_id = ctx.session, ctx.request_id

        async def send(notification: LoggingMessageNotification) -> None:
            await session.send_notification(notification, related_request_id=request_id)

        token = LISTENER.set(Listener(send, wanted, asyncio.get_running_loop()))
        try:
            return await call_next(ctx)
        finally:
            LISTENER.reset(token)

    def wanted(self, ctx: Any) -> frozenset[LoggingLevel]:
        """The levels this request's client reads: those its connection set, for
        handshake versions; for 2026-07-28 clients, those the request's `_meta` asks."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return allowed_log_levels(ctx.protocol_version, ctx.meta)
        level = self.levels.get(connection_of(ctx.session))
        return at_or_above(level) if level is not None else frozenset()


def connection_of(session: Any) -> Any:
    """The connection a request's session speaks for (the SDK builds one session per
    request over the connection's object, mcp 2.3)."""
    return getattr(session, "_connection", session)


_SENDING: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_log_sending", default=False)


class ClientLogHandler(logging.Handler):
    """Sends a record to the client of the request it was logged for (see the module)."""

    def emit(self, record: logging.LogRecord) -> None:
        listener = LISTENER.get()
        level = mcp_level(record.levelno)
        if listener is None or level not in listener.wanted or _SENDING.get():
            return
        try:
            text = self.format(record)
        except Exception:  # a record that cannot be formatted is not worth a failed call
            return
        notification = LoggingMessageNotification(
            params=LoggingMessageNotificationParams(level=level, logger=record.name, data=text)
        )
        token = _SENDING.set(True)  # what sending logs is not sent again
        try:
            self.deliver(listener, notification)
        finally:
            _SENDING.reset(token)

    @staticmethod
    def deliver(listener: Listener, notification: LoggingMessageNotification) -> None:
        """Sent from the event loop's thread as a task; from another thread (an SDK
        worker's), handed to the loop and waited for, so it comes before the answer."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        sending = listener.send(notification)
        try:
            if running is listener.loop:
                task = running.create_task(sending)
                _PENDING.add(task)
                task.add_done_callback(_PENDING.discard)
            else:
                future = asyncio.run_coroutine_threadsafe(sending, listener.loop)
                future.result(timeout=SEND_SECONDS)
        except Exception:  # the client or its loop went away: the record still reaches stderr
            sending.close()


_PENDING: set[asyncio.Task[None]] = set()
