"""Reads of the journal (no network)."""

from __future__ import annotations

from django.db.models import QuerySet

from anki_bridge.models import Note


def note_list(*, status: str | None = None, deck: str | None = None) -> QuerySet[Note]:
    """Journal entries, newest first, optionally of one status and deck."""
    notes = Note.objects.order_by("-id")
    if status:
        notes = notes.filter(status=status)
    if deck:
        notes = notes.filter(deck=deck)
    return notes
