"""`manage.py anki_flush`: deliver the notes queued while Anki was unreachable."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from anki_bridge.journal import notes_flush
from core.exceptions import DomainError


class Command(BaseCommand):
    help = (
        "Send the journal's pending notes to Anki (oldest first). Safe to run at any time and "
        "more than once: a delivered note is never sent again."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            outcome = notes_flush()
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"sent {outcome.sent}, duplicates {outcome.duplicate}, failed {outcome.failed}; "
            f"{outcome.pending} still pending"
        )
