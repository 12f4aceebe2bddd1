"""Signals of the Anki bridge (services send them; adapters such as tasks listen)."""

from django.dispatch import Signal

# Notes wait in the journal for Anki: someone should deliver them later.
notes_queued = Signal()
