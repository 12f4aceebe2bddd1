from django.apps import AppConfig


class AnkiBridgeConfig(AppConfig):
    name = "anki_bridge"
    verbose_name = "Anki flashcards"
