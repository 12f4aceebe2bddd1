from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProjectConfig(AppConfig):
    """The project itself: its management commands (`runmcp`), home page and health checks."""

    name = "config"
    label = "project"
    verbose_name = _("Tool hub")

    def ready(self) -> None:
        from config import celery  # noqa: F401  (the Celery app every shared task binds to)
        from core import links  # noqa: F401  (registers the SITE_URL system check)
