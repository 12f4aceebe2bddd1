"""Reads of the journal (no network)."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet

from anki_bridge.models import Note


def note_list(
    *, viewer: AbstractBaseUser | AnonymousUser, status: str | None = None, deck: str | None = None
) -> QuerySet[Note]:
    """Journal entries `viewer` may see (their own; staff: all), newest first, optionally
    of one status and deck."""
    notes = Note.objects.order_by("-id")
    if not getattr(viewer, "is_staff", False):
        notes = notes.filter(owner_id=viewer.pk)
    if status:
        notes = notes.filter(status=status)
    if deck:  # as Anki names it: «A :: B» is «A::B», in any case
        spelled = "::".join(part.strip() for part in deck.split("::"))
        notes = notes.filter(Q(deck__iexact=spelled) | Q(deck__iexact=deck))
    return notes
