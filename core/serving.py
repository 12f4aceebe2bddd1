"""Work a serving process (the web app, ASGI or WSGI) starts besides serving requests.

Apps register it in their `AppConfig.ready` (`on_serving`); the entry points call
`serving_started` once the app is built, so config names no app. (`runmcp` has the
per-app `ToolRegistry.on_serve` for the same.)
"""

from __future__ import annotations

from collections.abc import Callable

_hooks: list[Callable[[], None]] = []


def on_serving(hook: Callable[[], None]) -> None:
    """Have `hook` called when this process starts serving (once per hook)."""
    if hook not in _hooks:
        _hooks.append(hook)


def serving_started() -> None:
    for hook in _hooks:
        hook()
