"""How an app declares its MCP tools.

Each app's `mcp_tools.py` holds one `ToolRegistry` named `registry` and decorates its
tool functions with `@registry.tool(...)`. `core.mcp_server` gathers the registries
listed in `settings.MCP_TOOL_MODULES` into one server, the way `urls.py` gathers URLconfs.
The decorator only records the tool: the function stays a plain, testable function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its contract name, the function, and truthful behaviour hints."""

    name: str
    fn: Callable[..., Any]
    app: str
    description: str
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    structured_output: bool | None = None
    # A pydantic model of the structured result, for tools that return a CallToolResult
    # (text for the model + structured content): advertised as the output schema.
    output_model: type[Any] | None = None
    # The tool whose output schema is this one's too (its description says "as X gives
    # it"): the shape is declared once in tools/list, and this tool's result is still
    # checked against `output_model`.
    shape_of: str | None = None

    @property
    def summary(self) -> str:
        """The first paragraph of the description, for listings."""
        return self.description.split("\n\n", 1)[0].strip()


@dataclass(frozen=True)
class ResourceSpec:
    """A resource template: `uri` with `{variables}` the function takes as text keywords.

    The function runs on a worker thread with fresh database connections and returns text
    (Markdown, JSON) or bytes (an image); a `DomainError` reaches the client as a protocol
    error naming what was asked for. A function with a `caller` parameter is also given
    the Django user the client acts as (`core.identity`): for what is someone's own.
    """

    uri: str
    fn: Callable[..., str | bytes]
    app: str
    name: str
    title: str
    description: str
    mime_type: str
    takes_caller: bool = False


@dataclass(frozen=True)
class PromptSpec:
    """A prompt: a workflow of the seeds as messages a client shows as a command."""

    name: str
    fn: Callable[..., Any]
    app: str
    title: str
    description: str


# `watch(uri, caller)`: a snapshot of a subscribable resource — whatever changes when it
# does — and whether it is final (no later change will come), for `caller` (the Django user
# the client acts as, `core.identity`). Raises NotFound as a read by that caller would.
Watcher = Callable[[str, Any], tuple[object, bool]]

CALLER = "caller"  # the parameter of a resource function that receives the caller


@dataclass(frozen=True)
class ListedResource:
    """A concrete resource `resources/list` offers (a client's "attach" menu): something
    recently used, or the caller's own; `when` orders them, newest first."""

    uri: str
    name: str
    title: str
    when: datetime
    description: str = ""
    mime_type: str = "text/markdown"


# `lister(caller, limit)`: at most `limit` resources to offer `caller`, newest first.
Lister = Callable[[Any, int], list[ListedResource]]


# `completer(value, context)`: the values offered for a partly typed argument; `context`
# holds the arguments already given (`subject` when completing `category_id`).
Completer = Callable[[str, dict[str, str]], list[str]]


@dataclass(frozen=True)
class CliOption:
    """A `runmcp` option an app contributes: `--flag VALUE` overrides `settings.<setting>`."""

    flag: str
    setting: str
    help: str

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass
class ToolRegistry:
    """The tools one app contributes to the MCP server.

    `options` are the app's `runmcp` command-line options (applied to settings before the
    system checks run); `on_serve` is called once the app's tools are about to be served
    (after the checks), e.g. to log the upstream it will talk to.
    """

    app: str
    title: str
    description: str = ""
    specs: list[ToolSpec] = field(default_factory=list)
    options: list[CliOption] = field(default_factory=list)
    on_serve: Callable[[], None] | None = None
    resources: list[ResourceSpec] = field(default_factory=list)
    prompts: list[PromptSpec] = field(default_factory=list)
    completers: dict[str, Completer] = field(default_factory=dict)
    watchers: dict[str, Watcher] = field(default_factory=dict)  # URI prefix → its watcher
    listers: list[Lister] = field(default_factory=list)  # what `resources/list` offers

    def lister(self, fn: Lister) -> Lister:
        """Register `fn(caller, limit)`: resources offered by `resources/list`."""
        self.listers.append(fn)
        return fn

    def resource(
        self, uri: str, *, name: str, title: str, mime_type: str = "text/markdown"
    ) -> Callable[[F], F]:
        """Register the decorated function as the resource template `uri`."""

        def decorator(fn: F) -> F:
            self.resources.append(
                ResourceSpec(
                    uri=uri,
                    fn=fn,
                    app=self.app,
                    name=name,
                    title=title,
                    description=inspect.cleandoc(fn.__doc__ or ""),
                    mime_type=mime_type,
                    takes_caller=CALLER in inspect.signature(fn).parameters,
                )
            )
            return fn

        return decorator

    def prompt(self, *, name: str, title: str) -> Callable[[F], F]:
        """Register the decorated function as the prompt `name` (its docstring describes it)."""

        def decorator(fn: F) -> F:
            self.prompts.append(
                PromptSpec(
                    name=name,
                    fn=fn,
                    app=self.app,
                    title=title,
                    description=inspect.cleandoc(fn.__doc__ or ""),
                )
            )
            return fn

        return decorator

    def watcher(self, uri_prefix: str) -> Callable[[Watcher], Watcher]:
        """Make the resources under `uri_prefix` subscribable (`resources/subscribe`): the
        decorated function is polled, and a change of its snapshot notifies the client."""

        def decorator(fn: Watcher) -> Watcher:
            self.watchers[uri_prefix] = fn
            return fn

        return decorator

    def completer(self, *arguments: str) -> Callable[[Completer], Completer]:
        """Register the decorated function as the completion of these argument names (of
        every prompt and resource template that has one)."""

        def decorator(fn: Completer) -> Completer:
            for argument in arguments:
                self.completers[argument] = fn
            return fn

        return decorator

    def tool(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        read_only: bool,
        open_world: bool,
        idempotent: bool = False,
        destructive: bool = False,
        structured_output: bool | None = None,
        output_model: type[Any] | None = None,
        shape_of: str | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated function as a tool.

        `read_only` and `open_world` have no default on purpose: every tool states whether
        it changes anything and whether it reaches a service outside this project.
        """

        def decorator(fn: F) -> F:
            tool_name = name or fn.__name__
            if any(spec.name == tool_name for spec in self.specs):
                raise ValueError(f"tool {tool_name!r} is registered twice in {self.app}")
            self.specs.append(
                ToolSpec(
                    name=tool_name,
                    fn=fn,
                    app=self.app,
                    description=inspect.cleandoc(description or fn.__doc__ or ""),
                    title=title,
                    read_only=read_only,
                    destructive=destructive,
                    idempotent=read_only or idempotent,
                    open_world=open_world,
                    structured_output=structured_output,
                    output_model=output_model,
                    shape_of=shape_of,
                )
            )
            return fn

        return decorator
