"""Beyond tools: the apps' resources, prompts and argument completions on the MCP server.

Each app declares them in its `mcp_tools.py` registry (`registry.resource`, `.prompt`,
`.completer`); `core.mcp_server.build_server` adds them here. Resource functions are sync
Django code: they run on a worker thread with fresh database connections, and a domain
error reaches the client as a JSON-RPC error naming what was asked for (-32002 for
something that does not exist, as the MCP spec asks; -32602 for a malformed argument).
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio.to_thread
from django.db import close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from core.exceptions import DomainError, InvalidInput, NotFound
from core.registry import Completer, ResourceSpec, ToolRegistry

logger = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for a resource that does not exist
MAX_COMPLETIONS = 100  # what `completion/complete` may return at most (MCP spec)


def add_content(server: MCPServer[Any], registries: Sequence[ToolRegistry]) -> None:
    """The registries' resource templates, prompts and completions, on `server`."""
    completers: dict[str, Completer] = {}
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
    if completers:
        server.completion()(completion_handler(completers))


def resource_reader(spec: ResourceSpec) -> Callable[..., Any]:
    """The async function the SDK calls for `spec`, with the same signature as its own."""
    fn = spec.fn

    def read_here(params: dict[str, str]) -> str | bytes:
        close_old_connections()
        try:
            return fn(**params)
        finally:
            close_old_connections()

    @functools.wraps(fn)
    async def read(**params: str) -> str | bytes:
        try:
            return await anyio.to_thread.run_sync(read_here, params)
        except DomainError as exc:
            uri = spec.uri.format(**params)
            if isinstance(exc, NotFound):
                code = RESOURCE_NOT_FOUND
            elif isinstance(exc, InvalidInput):
                code = INVALID_PARAMS
            else:  # an upstream that failed, a missing setting: the message names it
                code = INTERNAL_ERROR
            raise MCPError(code=code, message=exc.message, data={"uri": uri}) from None

    read.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return read


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
    `<...>` in an argument stands for a value from an earlier step's answer."""
    line = f"`{tool}` {json.dumps(arguments, ensure_ascii=False)}"
    return f"{line} — {note}" if note else line


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

        def run() -> list[str]:
            close_old_connections()
            try:
                return completer(argument.value, given)
            finally:
                close_old_connections()

        try:
            values = await anyio.to_thread.run_sync(run)
        except DomainError:
            return None  # nothing to offer (a service that does not answer, a bad context)
        unique = list(dict.fromkeys(values))
        return Completion(
            values=unique[:MAX_COMPLETIONS],
            total=len(unique),
            has_more=len(unique) > MAX_COMPLETIONS,
        )

    return complete
