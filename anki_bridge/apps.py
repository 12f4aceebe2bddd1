from django.apps import AppConfig


class AnkiBridgeConfig(AppConfig):
    name = "anki_bridge"
    verbose_name = "Anki flashcards"

    def ready(self) -> None:
        from anki_bridge import tasks  # noqa: F401 (connects the flush to notes_queued)
