from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OjclientConfig(AppConfig):
    name = "ojclient"
    verbose_name = _("Online judge")

    def ready(self) -> None:
        from ojclient import checks  # noqa: F401  (registers the settings check)
