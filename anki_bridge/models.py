"""The journal: every note is written here before it is sent to Anki.

A note stays `pending` until Anki answers for it: `sent` (with its Anki note id),
`duplicate` (Anki already holds it) or `failed` (Anki refused it; `last_error` says why).
While Anki is unreachable notes wait as `pending` and the flush task delivers them later.
A sender holds the notes it is delivering with a lease (`claim`, `claimed_until`) so two
senders never deliver one note; `dedup_key`, unique when given, makes every path
idempotent. Image bytes wait in `Media` until their notes are delivered.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Note(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        SENT = "sent", "sent"
        DUPLICATE = "duplicate", "duplicate"
        FAILED = "failed", "failed"

    deck = models.CharField(max_length=255, db_index=True)
    model = models.CharField(max_length=255)
    fields = models.JSONField(default=dict)  # field name → value, in the model's order
    tags = models.JSONField(default=list, blank=True)
    media = models.JSONField(default=list, blank=True)  # media file names the fields show
    dedup_key = models.CharField(max_length=255, null=True, blank=True, unique=True)
    # Create the deck before delivery (add_from_model does; add_notes leaves decks alone).
    ensure_deck = models.BooleanField(default=False)
    source = models.CharField(max_length=40, blank=True)  # the tool or path that wrote it
    warnings = models.JSONField(default=list, blank=True)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    anki_note_id = models.BigIntegerField(null=True, blank=True)
    # The cards are known to be in `deck` (some Anki builds file new cards elsewhere; a
    # delivery or flush moves them and sets this).
    placed = models.BooleanField(default=False)
    # Set when an addNote for this row went out and no answer came back (Anki closed or
    # killed meanwhile): Anki may hold the note. Cleared by the answer or by reconciling.
    unanswered_since = models.DateTimeField(null=True, blank=True)
    # Who wrote it through the REST API (None: MCP, admin, commands); a user sees their own.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="anki_notes",
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    claim = models.CharField(max_length=32, blank=True, db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status", "id"]),
            models.Index(fields=["status", "placed"], name="anki_note_unplaced"),
        ]

    def __str__(self) -> str:
        first = next(iter(self.fields.values()), "") if isinstance(self.fields, dict) else ""
        text = " ".join(str(first).split())
        return f"#{self.pk} {text[:60]}" if text else f"#{self.pk}"


class Media(models.Model):
    """An image waiting to be stored in Anki's media folder under `filename`."""

    filename = models.CharField(max_length=255, unique=True)
    sha1 = models.CharField(max_length=40)
    size = models.PositiveIntegerField()
    # Emptied once no undelivered note needs the file (the name stays for the admin).
    data = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set whenever a call stores the file: a file is kept at least a lease after that.
    touched_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "media"

    def __str__(self) -> str:
        return self.filename
