"""Beyond tools: the apps' resources, prompts and argument completions on the MCP server.

Each app declares them in its `mcp_tools.py` registry (`registry.resource`, `.prompt`,
`.completer`); `core.mcp_server.build_server` adds them here. Resource functions are sync
Django code: they run on a worker thread with fresh database connections, and a domain
error reaches the client as a JSON-RPC error naming what was asked for (-32002 for
something that does not exist, as the MCP spec asks; -32602 for a malformed argument).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import typing
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from django.conf import settings
from django.db import close_old_connections
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    ListResourcesResult,
    PaginatedRequestParams,
    PromptReference,
    Resource,
    ResourceTemplateReference,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from core import identity
from core.exceptions import DomainError, NotFound
from core.mcp_deferred import DeferredTools
from core.mcp_errors import (
    RESOURCE_NOT_FOUND,
    prompt_arguments_checked,
    resource_error,
    subscribe_refused,
)
from core.mcp_logging import connection_of
from core.registry import (
    CALLER,
    Completer,
    Lister,
    ResourceSpec,
    ToolRegistry,
    ToolSpec,
    Watcher,
)
from core.text_rule import text_fault

logger = logging.getLogger(__name__)
T = TypeVar("T")

MAX_COMPLETIONS = 100  # what `completion/complete` may return at most (MCP spec)


def add_content(
    server: MCPServer[Any],
    registries: Sequence[ToolRegistry],
    bus: SubscriptionBus,
    *,
    subscribe: bool = True,
) -> None:
    """The registries' resource templates, prompts and completions, on `server`; `bus` is
    the server's subscription bus (`MCPServer(subscriptions=bus)`); `subscribe`: whether
    `resources/subscribe` is served (not over stateless HTTP)."""
    completers: dict[str, Completer] = {}
    watchers: dict[str, Watcher] = {}
    for registry in registries:
        for spec in registry.resources:
            server.resource(
                spec.uri,
                name=spec.name,
                title=spec.title,
                description=spec.description,
                mime_type=spec.mime_type,
            )(resource_reader(spec))
        for prompt in registry.prompts:
            server.prompt(name=prompt.name, title=prompt.title, description=prompt.description)(
                prompt_renderer(prompt.fn)
            )
        completers.update(registry.completers)
        watchers.update(registry.watchers)
        if isinstance(server, HubServer):
            server.listers += registry.listers
    if completers:
        server.completion()(completion_handler(completers))
    if watchers:
        Subscriptions(watchers, bus).install(server, subscribe=subscribe)
    server._lowlevel_server.middleware.append(prompt_arguments_checked)


def resource_reader(spec: ResourceSpec) -> Callable[..., Any]:
    """The async function the SDK calls for `spec`: the URI's variables as `spec.fn` takes
    them, and the SDK's context, whose request says who calls (for a `caller` parameter)."""
    fn = spec.fn

    def read_here(params: dict[str, str], request: Any) -> str | bytes:
        if spec.takes_caller:
            return fn(**params, **{CALLER: identity.request_caller(request)})
        return fn(**params)

    async def read(ctx: Context[Any, Any], **params: str) -> str | bytes:
        fault = text_fault(params)
        if fault is not None:
            message = f"{spec.uri}: {fault.field}: {fault.message}"
            raise MCPError(code=INVALID_PARAMS, message=message, data={"uri": spec.uri})
        uri = UriTemplate.parse(spec.uri).expand(params)  # {?query} variables too
        try:
            return await on_db_thread(read_here, params, identity.request_of(ctx))
        except DomainError as exc:
            raise resource_error(exc, uri) from None
        except FileNotFoundError:  # a row whose stored file is gone: nothing to read there
            message = f"{uri}: the stored file is missing"
            raise MCPError(code=RESOURCE_NOT_FOUND, message=message, data={"uri": uri}) from None

    # What the SDK reads: the URI's variables (their names and types) and the context.
    variables = [p for name, p in inspect.signature(fn).parameters.items() if name != CALLER]
    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    hints = {k: v for k, v in typing.get_type_hints(fn).items() if k not in (CALLER, "return")}
    read.__name__ = fn.__name__
    read.__doc__ = fn.__doc__
    read.__signature__ = inspect.Signature([*variables, context])  # type: ignore[attr-defined]
    read.__annotations__ = {**hints, "ctx": Context}
    return read


# Short database work of the transport (who calls, a resource's read) has worker threads
# of its own: tool calls fill anyio's default pool (40 threads), and a user's long waits
# (`normagpt_ask`'s) must not keep another user's requests from being let in.
_DB_THREADS = 16
_db_limiters: weakref.WeakKeyDictionary[Any, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


async def on_db_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread with fresh database connections, given back after;
    the threads are this module's own (at most _DB_THREADS), not the tools'."""
    loop = asyncio.get_running_loop()  # a limiter waits on its own event loop's primitives
    limiter = _db_limiters.get(loop)
    if limiter is None:
        limiter = _db_limiters[loop] = anyio.CapacityLimiter(_DB_THREADS)

    def run() -> T:
        close_old_connections()
        try:
            return fn(*args)
        finally:
            close_old_connections()

    return await anyio.to_thread.run_sync(run, limiter=limiter)


class HubServer(MCPServer[Any]):
    """The SDK's server, whose `prompts/get` refuses an unknown prompt, a missing argument
    or one the prompt does not take with -32602 naming it (the SDK answers those with code
    0 and a traceback on stderr), and whose `resources/list` offers what the apps' listers
    give the caller (recently used problems and documents, the caller's own runs), newest
    first, at most MCP_RESOURCES_LISTED."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.listers: list[Lister] = []
        self.listed: list[MCPTool] | None = None  # `tools/list` as recorded (`tools_defer`)

    def tools_defer(
        self,
        specs: Sequence[ToolSpec],
        build: Callable[[ToolSpec], Tool],
        listed: list[MCPTool] | None,
    ) -> None:
        """Serve `specs`' tools, each built by `build` when first used; `tools/list` is
        `listed` when given (the catalog's: `core.mcp_deferred`), else what is built."""
        self._tool_manager = DeferredTools(
            specs, build, warn_on_duplicate_tools=self.settings.warn_on_duplicate_tools
        )
        self.listed = listed

    async def list_tools(self) -> list[MCPTool]:
        tools = self._tool_manager
        if self.listed is not None and not (isinstance(tools, DeferredTools) and tools.added):
            return list(self.listed)
        return await super().list_tools()

    async def _handle_list_resources(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        listed = await on_db_thread(self._listed, ctx.request) if self.listers else []
        return ListResourcesResult(resources=[*await self.list_resources(), *listed])

    def _listed(self, request: Any) -> list[Resource]:
        caller = identity.request_caller(request)
        limit = settings.MCP_RESOURCES_LISTED
        found = [item for lister in self.listers for item in lister(caller, limit)]
        found.sort(key=lambda item: item.when, reverse=True)
        return [
            Resource(
                uri=item.uri,
                name=item.name,
                title=item.title,
                description=item.description or None,
                mime_type=item.mime_type,
            )
            for item in found[:limit]
        ]

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> Any:
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            known = ", ".join(p.name for p in self._prompt_manager.list_prompts())
            raise MCPError(INVALID_PARAMS, f"name: no prompt {name!r} (prompts: {known})")
        takes = {a.name: a.required for a in prompt.arguments or []}
        given = arguments or {}
        unknown = [key for key in given if key not in takes]
        if unknown:
            raise MCPError(
                INVALID_PARAMS,
                f"arguments: prompt {name!r} takes no {', '.join(map(repr, unknown))} "
                f"(it takes {', '.join(takes) or 'no arguments'})",
            )
        missing = [key for key, required in takes.items() if required and key not in given]
        if missing:
            raise MCPError(
                INVALID_PARAMS,
                f"arguments: prompt {name!r} needs {', '.join(map(repr, missing))}",
            )
        try:
            return await super().get_prompt(name, arguments, context)
        except MCPError:
            raise
        except Exception as exc:  # the SDK's "Error rendering prompt" (code 0 on the wire)
            cause = exc.__cause__ or exc
            if isinstance(cause, ValidationError):  # an argument the function's types refuse
                where = [".".join(map(str, e["loc"])) for e in cause.errors(include_url=False)]
                text = f"arguments: prompt {name!r} cannot take {', '.join(map(repr, where))}"
                raise MCPError(INVALID_PARAMS, text) from None
            logger.error("Prompt %s failed unexpectedly", name, exc_info=cause)
            text = f"prompt {name!r} could not be rendered; the failure is logged on the server"
            raise MCPError(INTERNAL_ERROR, text) from None


def prompt_renderer(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with a domain error (an unknown subject, say) turned into a protocol error."""

    @functools.wraps(fn)
    def render(**arguments: str) -> Any:
        try:
            return fn(**arguments)
        except DomainError as exc:
            raise MCPError(code=INVALID_PARAMS, message=exc.message) from None

    render.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return render


def prompt_step(tool: str, arguments: dict[str, object], note: str = "") -> str:
    """One step of a prompt's plan: the tool, its arguments as JSON, what to do with it.
    `<...>` in an argument stands for a value from an earlier step's answer; written
    without quotes when it stands for a number (`NumberSlot`), as the tool takes it."""
    line = f"`{tool}` {json.dumps(arguments, ensure_ascii=False, default=str)}"
    for slot in arguments.values():
        if isinstance(slot, NumberSlot):
            line = line.replace(json.dumps(str(slot), ensure_ascii=False), str(slot))
    return f"{line} — {note}" if note else line


class NumberSlot(str):
    """A prompt step's placeholder for a number (`<card>`, `<1–4>`): shown unquoted, so a
    model filling the step in sends a number, not a string the tool refuses."""

    __slots__ = ()


def prompt_text(
    language: str, *, ru: str, en: str, steps: list[str], end_ru: str, end_en: str
) -> str:
    """A prompt's message in Russian (the default) or English: the goal, the numbered
    steps, what to answer."""
    russian = language != "en"
    lines = [ru if russian else en, ""]
    lines += [f"{n}. {step}" for n, step in enumerate(steps, start=1)]
    lines += ["", end_ru if russian else end_en]
    return "\n".join(lines)


def completion_handler(completers: dict[str, Completer]) -> Callable[..., Any]:
    """One `completion/complete` handler: the completer of the argument's name, whatever
    prompt or resource template asks; values that start with what was typed come first."""

    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        completer = completers.get(argument.name)
        if completer is None:
            return None
        given = dict(context.arguments or {}) if context is not None else {}
        fault = text_fault({"argument": {"value": argument.value}, "context": given})
        if fault is not None:  # refused before the completer's query (core.text_rule)
            message = f"{fault.field}: {fault.message}"
            raise MCPError(INVALID_PARAMS, message, data={"argument": fault.field})
        try:
            values = await on_db_thread(completer, argument.value, given)
        except DomainError:
            return None  # nothing to offer (a service that does not answer, a bad context)
        unique = list(dict.fromkeys(values))
        return Completion(
            values=unique[:MAX_COMPLETIONS],
            total=len(unique),
            has_more=len(unique) > MAX_COMPLETIONS,
        )

    return complete


SUBSCRIPTION_POLL_SECONDS = 1.0


class Subscriptions:
    """`resources/subscribe` for the resources a registry watches (a run while it works).

    Each subscription is a task of the connection that polls its watcher and sends
    `notifications/resources/updated` when the snapshot changes; it ends when the client
    unsubscribes, the resource is final, or the connection is gone. Stateless HTTP has no
    connection to notify: there the client polls `resources/read` instead.
    """

    def __init__(self, watchers: dict[str, Watcher], bus: SubscriptionBus) -> None:
        self.watchers = watchers
        self.bus = bus
        self.listen_handler = ListenHandler(bus)
        self.tasks: dict[tuple[int, str], asyncio.Task[None]] = {}

    def install(self, server: MCPServer[Any], *, subscribe: bool = True) -> None:
        """The handlers on `server`; without `subscribe` (stateless HTTP) the capability is
        not declared and `resources/subscribe` is refused saying why."""
        lowlevel = server._lowlevel_server  # the SDK's public handler registry (mcp 2.3)
        if subscribe:
            lowlevel.add_request_handler(
                "resources/subscribe", SubscribeRequestParams, self.subscribe
            )
            lowlevel.add_request_handler(
                "resources/unsubscribe", UnsubscribeRequestParams, self.unsubscribe
            )
        else:
            lowlevel.middleware.append(subscribe_refused)
        lowlevel.add_request_handler(
            "subscriptions/listen", SubscriptionsListenRequestParams, self.listen
        )

    async def listen(self, ctx: Any, params: SubscriptionsListenRequestParams) -> Any:
        """2026-07-28 clients: the SDK's listen stream, with a follower publishing on the
        bus for each watched resource it asks for, for as long as the stream lasts."""
        notifications = params.notifications
        wanted = (notifications.resource_subscriptions or []) if notifications else []
        follows = []
        caller = await on_db_thread(identity.request_caller, ctx.request) if wanted else None
        for uri in wanted:
            watch = self.watcher(uri)
            follows.append((watch, uri, await self._snapshot(watch, uri, caller)))

        async def publish(uri: str) -> None:
            await self.bus.publish(ResourceUpdated(uri=uri))

        async with anyio.create_task_group() as followers:
            for watch, uri, first in follows:
                followers.start_soon(self._follow, publish, watch, uri, caller, first)
            try:
                return await self.listen_handler(ctx, params)
            finally:
                followers.cancel_scope.cancel()

    def watcher(self, uri: str) -> Watcher:
        for prefix, watch in self.watchers.items():
            if uri.startswith(prefix):
                return watch
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"{uri} cannot be subscribed to; these can: "
            + ", ".join(f"{prefix}…" for prefix in self.watchers),
        )

    async def subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        uri = str(params.uri)
        watch = self.watcher(uri)
        caller = await on_db_thread(identity.request_caller, ctx.request)
        first = await self._snapshot(watch, uri, caller)
        key = (id(connection_of(ctx.session)), uri)
        if key not in self.tasks:
            notify = ctx.session.send_resource_updated
            following = self._follow(notify, watch, uri, caller, first)
            task = asyncio.get_running_loop().create_task(following)
            self.tasks[key] = task
            task.add_done_callback(lambda _: self.tasks.pop(key, None))
        return EmptyResult()

    async def unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        task = self.tasks.pop((id(connection_of(ctx.session)), str(params.uri)), None)
        if task is not None:
            task.cancel()
        return EmptyResult()

    async def _snapshot(self, watch: Watcher, uri: str, caller: Any) -> tuple[object, bool]:
        try:
            return await on_db_thread(watch, uri, caller)
        except DomainError as exc:
            code = RESOURCE_NOT_FOUND if isinstance(exc, NotFound) else INVALID_PARAMS
            raise MCPError(code=code, message=exc.message, data={"uri": uri}) from None

    async def _follow(
        self,
        notify: Callable[[str], Awaitable[None]],
        watch: Watcher,
        uri: str,
        caller: Any,
        seen: tuple[object, bool],
    ) -> None:
        state, final = seen
        try:
            while not final:
                await anyio.sleep(SUBSCRIPTION_POLL_SECONDS)
                now, final = await self._snapshot(watch, uri, caller)
                if now != state:
                    state = now
                    await notify(uri)
        except MCPError:
            await notify(uri)  # gone: a read says so
        except Exception as exc:
            logger.info("subscription to %s ended: %s", uri, exc)
