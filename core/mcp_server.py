"""The one MCP server, assembled from every app's `mcp_tools.py`.

Every tool goes through the adapter here: strict pydantic arguments (an unknown argument is
an error, never silently dropped), a worker thread with fresh database connections for
sync tools, domain errors turned into tool errors whose text the model can act on, and
unexpected errors logged with their traceback on stderr and reported as a generic error.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, get_args, get_origin

from django.conf import settings
from django.db import close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, ValidationError

from core.exceptions import DomainError
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
) -> MCPServer[Any]:
    """A new MCPServer with the tools of `apps` (all apps when None)."""
    tools: list[Tool] = [
        build_tool(spec) for registry in load_registries(apps) for spec in registry.specs
    ]
    return MCPServer(
        SERVER_NAME,
        title="Tool hub",
        instructions=INSTRUCTIONS,
        version=str(settings.SPECTACULAR_SETTINGS["VERSION"]),
        tools=tools,
        lifespan=lifespan,
        log_level=settings.LOG_LEVEL,
    )


def tool_specs(apps: Iterable[str] | None = None) -> list[ToolSpec]:
    """Every registered tool, in server order (for listings: the home page, `--list`, API)."""
    return [
        spec
        for registry in load_registries(list(apps) if apps is not None else None)
        for spec in registry.specs
    ]


def accepts_text(annotation: Any) -> bool:
    """Whether a string is a valid value as it is: `str`, `str | None`, `Literal["a", ...]`."""
    if annotation is str:
        return True
    if get_origin(annotation) is Literal:
        return any(isinstance(arg, str) for arg in get_args(annotation))
    return any(accepts_text(arg) for arg in get_args(annotation))


class TextSafeFuncMetadata(FuncMetadata):
    """The SDK's argument handling without its JSON pre-parsing of text arguments.

    The SDK json-decodes string values of every argument not annotated exactly `str` (a
    workaround for clients that send lists as JSON text). For `id: str | None` that turns
    the id `"null"` into None and `"true"` into True. Here an argument that accepts text
    keeps its text; lists and objects sent as JSON text are still decoded.
    """

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        fields = self.arg_model.model_fields
        textual = {
            key
            for name, info in fields.items()
            if accepts_text(info.annotation)
            for key in (name, info.alias)
            if key
        }
        kept = {key: value for key, value in data.items() if key in textual}
        parsed = super().pre_parse_json(
            {key: value for key, value in data.items() if key not in textual}
        )
        return {key: kept[key] if key in kept else parsed[key] for key in data}


class StrictTool(Tool):
    """A tool whose argument errors read as one sentence naming each field and its rule."""

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        try:
            validated = self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            raise ToolError(describe_validation_error(self.name, exc)) from exc
        direct = {self.context_kwarg: context} if self.context_kwarg else {}
        result = await self.fn_metadata.call_fn(self.fn, self.is_async, validated, direct)
        if not convert_result:
            return result
        try:
            return self.fn_metadata.convert_result(result)
        except Exception as exc:
            raise unexpected_tool_error(self.name, exc) from exc


def build_tool(spec: ToolSpec) -> StrictTool:
    """The SDK tool for `spec`: guarded function, strict argument model, annotations."""
    base = Tool.from_function(
        guard(spec),
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=None if spec.read_only else spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=spec.open_world,
        ),
        structured_output=spec.structured_output,
    )
    loose = base.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        loose.__name__,
        (loose,),
        {"model_config": ConfigDict(extra="forbid", title=loose.__name__), "__module__": __name__},
    )
    fields = {name: getattr(base, name) for name in Tool.model_fields}
    if spec.output_model is not None:
        fields["fn_metadata"] = TextSafeFuncMetadata(
            arg_model=strict, output_model=spec.output_model
        )
    else:
        fields["fn_metadata"] = TextSafeFuncMetadata(
            arg_model=strict,
            output_schema=base.fn_metadata.output_schema,
            output_model=base.fn_metadata.output_model,
            wrap_output=base.fn_metadata.wrap_output,
        )
    fields["parameters"] = schema_for_strict_clients(strict.model_json_schema(by_alias=True))
    return StrictTool(**fields)


def schema_for_strict_clients(schema: dict[str, Any]) -> dict[str, Any]:
    """Optional arguments as plain typed properties: `anyOf [X, null]` → X, no `default: null`.

    Strict function-calling clients reject `anyOf` and `nullable`; an omitted optional
    argument means the same as null, so the schema loses nothing. Validation still accepts
    an explicit null.
    """
    properties = schema.get("properties", {})
    for name, prop in list(properties.items()):
        branches = prop.get("anyOf")
        if not isinstance(branches, list):
            continue
        non_null = [branch for branch in branches if branch != {"type": "null"}]
        if len(non_null) != 1 or len(non_null) == len(branches):
            continue
        flat = {**non_null[0], **{key: value for key, value in prop.items() if key != "anyOf"}}
        if flat.get("default", 0) is None:
            del flat["default"]
        properties[name] = flat
    return schema


def guard(spec: ToolSpec) -> Callable[..., Any]:
    """Wrap a tool function so every failure leaves it as a ToolError.

    Sync tools run on an SDK worker thread: they get fresh database connections and give
    them back, as a request would.
    """
    fn = spec.fn
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                raise as_tool_error(spec.name, exc) from exc

        return guarded_async

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise as_tool_error(spec.name, exc) from exc
        finally:
            close_old_connections()

    return guarded


def as_tool_error(tool: str, exc: Exception) -> ToolError:
    """The one mapping from an exception raised in a tool to what the model reads."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, DomainError):
        return ToolError(exc.message)
    if isinstance(exc, ValidationError):
        return ToolError(describe_validation_error(tool, exc))
    return unexpected_tool_error(tool, exc)


def unexpected_tool_error(tool: str, exc: BaseException) -> ToolError:
    logger.error("Tool %s failed unexpectedly", tool, exc_info=exc)
    return ToolError(
        f"Internal error in tool {tool}: the call could not be completed. "
        "The failure is logged on the server; retrying will not help until it is fixed."
    )


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    """`Invalid arguments for greet: name: required argument missing; x: unknown argument`."""
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            rule = "required argument missing"
        elif error["type"] == "extra_forbidden":
            rule = "unknown argument (not accepted by this tool)"
        else:
            rule = error["msg"]
        problems.append(f"{where}: {rule}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)
