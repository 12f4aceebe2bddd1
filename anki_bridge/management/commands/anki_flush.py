"""`manage.py anki_flush`: deliver the notes queued while Anki was unreachable.

Exit status: 0 when nothing is left pending, 2 when Anki cannot be reached, 3 when notes
remain (held by a sender that is still delivering them, or waiting after an error): a
script or a cron job can tell.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from anki_bridge.exceptions import AnkiUnavailable
from anki_bridge.journal import notes_flush
from anki_bridge.ledger import due
from anki_bridge.models import Note
from core.exceptions import DomainError

UNREACHABLE, REMAINING = 2, 3


class Command(BaseCommand):
    help = (
        "Send the journal's pending notes to Anki (oldest first). Safe to run at any time and "
        "more than once: a delivered note is never sent again. Exit status 0: nothing left "
        "pending; 2: Anki cannot be reached; 3: notes remain."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            outcome = notes_flush()
        except AnkiUnavailable as exc:
            waiting = Note.objects.filter(due()).count()
            raise CommandError(
                f"{exc.message}; {waiting} note(s) wait", returncode=UNREACHABLE
            ) from exc
        except DomainError as exc:
            raise CommandError(exc.message, returncode=REMAINING) from exc
        self.stdout.write(
            f"sent {outcome.sent}, duplicates {outcome.duplicate}, failed {outcome.failed}; "
            f"{outcome.pending} still pending"
        )
        if outcome.pending:
            raise CommandError(f"{outcome.pending} note(s) still pending", returncode=REMAINING)
