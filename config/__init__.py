"""Project wiring: settings, URLs, the Celery app and the MCP server assembled from the apps.

The Celery app (`config.celery`) is loaded by `ProjectConfig.ready`, with Django, not on
import of this package: `tool-hub mcp` (config/cli.py) starts answering on stdio before
anything heavy is imported.
"""

from typing import Any

__all__ = ["celery_app"]


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from config.celery import app

        return app
    raise AttributeError(f"module 'config' has no attribute {name!r}")
