from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnkiBridgeConfig(AppConfig):
    name = "anki_bridge"
    verbose_name = _("Anki flashcards")
