"""The JSON-RPC errors of prompts and resources: a standard code, the argument or URI named.

-32002 (the MCP spec's "resource not found") for nothing at a URI, -32602 for an argument
or part of a URI that breaks a rule, -32601 for a method this server does not serve, and
-32603 only for what may pass or a missing setting; never the SDK's code 0 nor a traceback
for what a client sent or a service answered.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

from core.exceptions import DomainError, InvalidInput, NotFound, UpstreamError
from core.text_rule import printable, text_fault

RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for a resource that does not exist


def resource_error(exc: DomainError, uri: str) -> MCPError:
    """The JSON-RPC error for a domain error raised reading `uri`: -32002 for nothing
    there, also when the service answered but not with what the URI names (a page that
    is not a problem page: not retryable); -32602 for a malformed part of the URI; -32603
    only for what may pass (a service down) or a missing setting. The message names the
    URI and, for a service's fault, the service."""
    data: dict[str, Any] = {**exc.extra, "uri": uri}
    if isinstance(exc, NotFound):
        code = RESOURCE_NOT_FOUND
    elif isinstance(exc, InvalidInput):
        code = INVALID_PARAMS
    elif isinstance(exc, UpstreamError):
        code = INTERNAL_ERROR if exc.retryable else RESOURCE_NOT_FOUND
        data["retryable"] = exc.retryable
    else:
        code = INTERNAL_ERROR
    message = exc.message if uri in exc.message else f"{uri}: {exc.message}"
    return MCPError(code=code, message=message, data=data)


STATELESS_SUBSCRIBE_TEXT = (
    "resources/subscribe is not served by this server: it runs stateless HTTP "
    "(MCP_HTTP_STATELESS), where no session outlives a request to be notified. "
    "Read the resource again to follow it."
)


async def subscribe_refused(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Middleware of a stateless server: `resources/subscribe` and `/unsubscribe` refused
    with the reason (-32601: the method is not served), before the SDK's bare "Method
    not found"."""
    if ctx.method in ("resources/subscribe", "resources/unsubscribe"):
        raise MCPError(code=METHOD_NOT_FOUND, message=STATELESS_SUBSCRIBE_TEXT, data=ctx.method)
    return await call_next(ctx)


async def prompt_arguments_checked(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Middleware: `prompts/get` arguments that are not text, or text no database holds,
    refused with -32602 naming the argument (the SDK's validation names none)."""
    params = ctx.params
    if ctx.method == "prompts/get" and isinstance(params, Mapping):
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise MCPError(INVALID_PARAMS, "arguments: an object of texts, by argument name")
        for key, value in (arguments or {}).items():
            if not isinstance(value, str):
                shown = json.dumps(value, ensure_ascii=True)[:40]
                name = printable(str(key))
                message = f"arguments.{name}: a prompt argument is text, not {shown}"
                raise MCPError(INVALID_PARAMS, message, data={"argument": name})
        fault = text_fault(arguments or {})
        if fault is not None:
            message = f"arguments.{fault.field}: {fault.message}"
            raise MCPError(INVALID_PARAMS, message, data={"argument": fault.field})
    return await call_next(ctx)
