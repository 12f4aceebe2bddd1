"""Project wiring: settings, URLs, the Celery app and the MCP server assembled from the apps."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
