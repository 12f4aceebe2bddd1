from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NormagptConfig(AppConfig):
    name = "normagpt"
    verbose_name = _("NormaGPT norms agent")

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from core.rows import sqlite_functions
        from core.serving import on_serving
        from normagpt.recovery import serving_process_start

        on_serving(serving_process_start)  # no broker: the web process sweeps stalled runs
        connection_created.connect(sqlite_functions)  # the search weighs stems in SQL
