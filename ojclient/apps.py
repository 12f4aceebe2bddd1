from django.apps import AppConfig


class OjclientConfig(AppConfig):
    name = "ojclient"
    verbose_name = "Online judge"

    def ready(self) -> None:
        from ojclient import checks  # noqa: F401  (registers the settings check)
