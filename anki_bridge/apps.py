from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnkiBridgeConfig(AppConfig):
    name = "anki_bridge"
    verbose_name = _("Anki flashcards")

    def ready(self) -> None:
        # the admin (first in INSTALLED_APPS) has imported every app's admin module by now
        from django.contrib import admin

        from anki_bridge.admin import problems_admin_extend

        problems_admin_extend(admin.site)

        from anki_bridge.takeover import notes_takeover_due
        from core.serving import on_serving

        on_serving(notes_takeover_due)  # the web process's /mcp: what a dead sender left

        from django.contrib.auth import get_user_model
        from django.db.models.signals import pre_delete

        from anki_bridge.ledger import owner_keys_release

        pre_delete.connect(owner_keys_release, sender=get_user_model(), weak=False)
