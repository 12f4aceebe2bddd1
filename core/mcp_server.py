"""The one MCP server, assembled from every app's `mcp_tools.py`.

Every tool goes through the adapter here: strict pydantic arguments (an unknown argument is
an error, never silently dropped; integers accepted as text ids), a worker thread with
fresh database connections for sync tools, domain errors turned into tool errors whose
text the model can act on, and unexpected errors logged with their traceback on stderr and
reported as a generic error.

Only the SDK's public API is used (mcp 2.3, pinned by tests/test_mcp_adapter.py): the
`Tool` model and `Tool.from_function`, `FuncMetadata` and its documented hooks
(`pre_parse_json`, `validate_arguments`), and `Tool.run`'s contract of handing
`validate_arguments`' result to the function as keyword arguments. One exception: the
server's tool manager is replaced by one that builds each tool when first used
(`core.mcp_deferred`; the SDK takes built tools only), pinned by tests/test_mcp_deferred.py.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, ValidationError

from core.exceptions import DomainError
from core.mcp_arguments import (
    RAW_ARGUMENTS,
    ToolArguments,
    compact_output_schema,
    describe_validation_error,
    schema_for_strict_clients,
    without_titles,
)
from core.mcp_content import HubServer, add_content
from core.mcp_deferred import recorded_tools
from core.mcp_logging import SessionLogging
from core.registry import ToolRegistry, ToolSpec

logger = logging.getLogger(__name__)

SERVER_NAME = "tool-hub"
INSTRUCTIONS = (
    "Tools of one hub: СДАМ ГИА exam problems (sdamgia_*), Anki flashcards (anki.*), "
    "online-judge problems and the NormaGPT agent on Russian construction norms. "
    "Errors name the argument or the service at fault; fix the argument or retry later."
)


def load_registries(apps: Sequence[str] | None = None) -> list[ToolRegistry]:
    """The registries of `settings.MCP_TOOL_MODULES`, limited to `apps` when given.

    Raises ValueError naming the unknown labels when `apps` lists an app with no tools module.
    """
    registries = [importlib.import_module(path).registry for path in settings.MCP_TOOL_MODULES]
    if apps is None:
        return registries
    known = {registry.app for registry in registries}
    unknown = [app for app in apps if app not in known]
    if unknown:
        raise ValueError(
            f"unknown app(s) {', '.join(unknown)}; apps with MCP tools: {', '.join(sorted(known))}"
        )
    return [registry for registry in registries if registry.app in apps]


def build_server(
    apps: Sequence[str] | None = None,
    *,
    lifespan: Callable[[MCPServer[Any]], AbstractAsyncContextManager[Any]] | None = None,
    stateless: bool = False,
    recorded: bool = True,
) -> HubServer:
    """A new MCPServer with the tools of `apps` (all apps when None), each built when
    first used, and `tools/list` answered from the catalog when `recorded` and the catalog
    matches (`core.mcp_deferred`). `stateless`: for stateless HTTP (MCP_HTTP_STATELESS),
    where no connection outlives a request, so `resources/subscribe` is neither offered nor
    accepted."""
    registries = load_registries(apps)
    specs = [spec for registry in registries for spec in registry.specs]
    bus = InMemorySubscriptionBus()
    server = HubServer(
        SERVER_NAME,
        title="Tool hub",
        instructions=INSTRUCTIONS,
        version=str(settings.SPECTACULAR_SETTINGS["VERSION"]),
        lifespan=lifespan,
        log_level=settings.LOG_LEVEL,
        subscriptions=bus,
    )
    listed = recorded_tools(specs, [r.app for r in registries]) if recorded else None
    server.tools_defer(specs, build_tool, listed)
    add_content(server, registries, bus, subscribe=not stateless)
    SessionLogging().install(server)
    return server


def tool_specs(apps: Iterable[str] | None = None) -> list[ToolSpec]:
    """Every registered tool, in server order (for listings: the home page, `--list`, API)."""
    return [
        spec
        for registry in load_registries(list(apps) if apps is not None else None)
        for spec in registry.specs
    ]


def build_tool(spec: ToolSpec) -> Tool:
    """The SDK tool for `spec`: guarded function, strict argument model, annotations.

    Built from the SDK's public pieces: `Tool.from_function` reads the signature (argument
    model, output schema, context parameter); the tool is then re-assembled around the
    guard, with `ToolArguments` as its metadata and a schema strict clients accept.
    """
    base = Tool.from_function(
        spec.fn,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=tool_annotations(spec),
        structured_output=spec.structured_output,
    )
    loose = base.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        loose.__name__,
        (loose,),
        {"model_config": ConfigDict(extra="forbid", title=loose.__name__), "__module__": __name__},
    )
    if spec.shape_of is not None and spec.output_model is not None:
        arguments = ToolArguments.shape_declared_elsewhere(strict, spec.output_model)
    elif spec.output_model is not None:
        arguments = ToolArguments(arg_model=strict, output_model=spec.output_model)
    else:
        arguments = ToolArguments(
            arg_model=strict,
            output_schema=base.fn_metadata.output_schema,
            output_model=base.fn_metadata.output_model,
            wrap_output=base.fn_metadata.wrap_output,
        )
    if arguments.output_schema is not None:
        arguments.output_schema = compact_output_schema(arguments.output_schema)
    fields = {name: getattr(base, name) for name in Tool.model_fields}
    fields["fn"] = guard(spec, arguments)
    fields["fn_metadata"] = arguments
    fields["parameters"] = without_titles(
        schema_for_strict_clients(strict.model_json_schema(by_alias=True))
    )
    return Tool(**fields)


def tool_annotations(spec: ToolSpec) -> ToolAnnotations:
    """The behaviour hints of `spec`, each written only where it differs from the value the
    MCP spec gives an absent hint (read-only false, destructive true, idempotent false, open
    world true): the same meaning for every client, in fewer of the model's tokens.
    Destructive and idempotent mean something only for a tool that changes things."""
    changes = not spec.read_only
    return ToolAnnotations(
        read_only_hint=True if spec.read_only else None,
        destructive_hint=False if changes and not spec.destructive else None,
        idempotent_hint=True if changes and spec.idempotent else None,
        open_world_hint=False if not spec.open_world else None,
    )


def guard(spec: ToolSpec, arguments: ToolArguments) -> Callable[..., Any]:
    """The function the SDK calls for `spec`: validates the raw arguments, calls the tool,
    and turns every failure into a tool error result (`isError: true`) the model can read.

    Sync tools run on an SDK worker thread: they get fresh database connections and give
    them back, as a request would. A protocol error (`MCPError`) passes through.
    """
    fn = spec.fn
    if inspect.iscoroutinefunction(fn):

        async def guarded_async(**kwargs: Any) -> Any:
            raw = kwargs.pop(RAW_ARGUMENTS)
            try:
                return await fn(**arguments.parse(raw), **kwargs)
            except MCPError:
                raise
            except Exception as exc:
                return failure(spec.name, exc)

        return guarded_async

    def guarded(**kwargs: Any) -> Any:
        raw = kwargs.pop(RAW_ARGUMENTS)
        close_old_connections()
        try:
            return fn(**arguments.parse(raw), **kwargs)
        except MCPError:
            raise
        except Exception as exc:
            return failure(spec.name, exc)
        finally:
            close_old_connections()

    return guarded


def failure(tool: str, exc: Exception) -> CallToolResult:
    """The one mapping from an exception raised in a tool to what the model reads."""
    return CallToolResult(
        content=[TextContent(type="text", text=failure_text(tool, exc))], is_error=True
    )


def failure_text(tool: str, exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        text = describe_validation_error(tool, exc)
    elif isinstance(exc, DomainError):
        text = exc.message
    elif isinstance(exc, ToolError):
        text = str(exc)
    else:
        logger.error("Tool %s failed unexpectedly", tool, exc_info=exc)
        return (
            f"Internal error in tool {tool}: the call could not be completed. "
            "The failure is logged on the server; retrying will not help until it is fixed."
        )
    logger.info("Tool %s failed: %r", tool, text)
    return text
