"""The journal: every note is written here before it is sent to Anki.

A note stays `pending` until Anki answers for it: `sent` (with its Anki note id),
`duplicate` (Anki already holds it) or `failed` (Anki refused it; `last_error` says why).
While Anki is unreachable notes wait as `pending` and the flush task delivers them later.
A sender holds the notes it is delivering with a lease (`claim`, `claimed_until`) so two
senders never deliver one note; `dedup_key`, unique per owner when given, makes every
path idempotent. Image bytes wait in `Media` until their notes are delivered.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from core.ids import random_id


class Note(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        SENT = "sent", _("sent")
        DUPLICATE = "duplicate", _("duplicate")
        FAILED = "failed", _("failed")

    deck = models.CharField(max_length=255, db_index=True, verbose_name=_("deck"))
    model = models.CharField(max_length=255, verbose_name=_("model"))
    fields = models.JSONField(
        default=dict, verbose_name=_("fields")
    )  # field name → value, in the model's order
    tags = models.JSONField(default=list, blank=True, verbose_name=_("tags"))
    media = models.JSONField(
        default=list, blank=True, verbose_name=_("media")
    )  # media file names the fields show
    # unique per owner (`Meta.constraints`): one user's key never answers for another's
    # note; None for no key (the constraints skip it) and once the note is gone from Anki
    dedup_key = models.CharField(  # noqa: DJ001
        max_length=255, null=True, blank=True, verbose_name=_("dedup key")
    )
    # Create the deck before delivery (add_from_model does; add_notes leaves decks alone).
    ensure_deck = models.BooleanField(default=False, verbose_name=_("ensure deck"))
    source = models.CharField(
        max_length=40, blank=True, verbose_name=_("source")
    )  # the tool or path that wrote it
    warnings = models.JSONField(default=list, blank=True, verbose_name=_("warnings"))
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.PENDING,
        db_index=True,
        verbose_name=_("status"),
    )
    anki_note_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("anki note id"))
    # The cards are known to be in `deck` (some Anki builds file new cards elsewhere; a
    # delivery or flush moves them and sets this).
    placed = models.BooleanField(default=False, verbose_name=_("placed"))
    # Set when an addNote for this row went out and no answer came back (Anki closed or
    # killed meanwhile): Anki may hold the note. Cleared by the answer or by reconciling.
    unanswered_since = models.DateTimeField(
        null=True, blank=True, verbose_name=_("unanswered since")
    )
    # Who wrote it through the REST API (None: MCP, admin, commands); a user sees their own.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="anki_notes",
        verbose_name=_("owner"),
    )
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("attempts"))
    last_error = models.TextField(blank=True, verbose_name=_("last error"))
    # The sender's token: its host, pid and start time (`core.holders`) and a unique part.
    claim = models.CharField(max_length=80, blank=True, db_index=True, verbose_name=_("claim"))
    claimed_until = models.DateTimeField(null=True, blank=True, verbose_name=_("claimed until"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))
    sent_at = models.DateTimeField(null=True, blank=True, verbose_name=_("sent at"))

    class Meta:
        verbose_name = _("note")
        verbose_name_plural = _("notes")
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status", "id"]),
            models.Index(fields=["status", "placed"], name="anki_note_unplaced"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["dedup_key"],
                condition=models.Q(owner__isnull=True),
                name="anki_note_dedup_key_unowned",
            ),
            models.UniqueConstraint(
                fields=["owner", "dedup_key"],
                condition=models.Q(owner__isnull=False),
                name="anki_note_dedup_key_owned",
            ),
        ]

    def __str__(self) -> str:
        first = next(iter(self.fields.values()), "") if isinstance(self.fields, dict) else ""
        text = " ".join(str(first).split())
        return f"#{self.pk} {text[:60]}" if text else f"#{self.pk}"

    def clean(self) -> None:
        """A dedup key its owner (or, unowned, nobody) already uses is refused in a form:
        the owner is no field of the admin's, so Django's own check of the constraint
        skips it and the database refused it as a 500."""
        if not self.dedup_key:
            return
        same = Note.objects.filter(dedup_key=self.dedup_key, owner_id=self.owner_id)
        if same.exclude(pk=self.pk).exists():
            raise ValidationError({"dedup_key": _("Another note of the same owner has this key.")})


class Media(models.Model):
    """An image waiting to be stored in Anki's media folder under `filename`."""

    filename = models.CharField(max_length=255, unique=True, verbose_name=_("filename"))
    sha1 = models.CharField(max_length=40, verbose_name=_("sha1"))
    size = models.PositiveIntegerField(verbose_name=_("size"))
    # Emptied once no undelivered note needs the file (the name stays for the admin).
    data = models.BinaryField(null=True, blank=True, verbose_name=_("data"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    # Set whenever a call stores the file: a file is kept at least a lease after that.
    touched_at = models.DateTimeField(db_index=True, verbose_name=_("touched at"))

    class Meta:
        verbose_name = _("media file")
        verbose_name_plural = _("media")
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.filename


def _session_id() -> str:
    return random_id(12)


class ReviewSession(models.Model):
    """A review held by the server (`anki.review_start`): the cards of a deck in Anki's
    order, each shown, revealed and rated at most once. It belongs to its user and expires
    when unused for `ANKI_REVIEW_SESSION_HOURS`."""

    public_id = models.CharField(
        max_length=32, unique=True, default=_session_id, editable=False, verbose_name=_("id")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="anki_review_sessions",
        verbose_name=_("owner"),
    )
    deck = models.CharField(max_length=255, verbose_name=_("deck"))
    include_new = models.BooleanField(default=False, verbose_name=_("include new cards"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    expires_at = models.DateTimeField(db_index=True, verbose_name=_("expires at"))

    class Meta:
        verbose_name = _("review session")
        verbose_name_plural = _("review sessions")
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.deck})"


class ReviewCard(models.Model):
    """A card of a review session and how far it went: queued → shown (its front) →
    revealed (its back) → rating (sent to Anki) → rated; skipped when Anki no longer
    holds it."""

    class State(models.TextChoices):
        QUEUED = "queued", _("queued")
        SHOWN = "shown", _("shown")
        REVEALED = "revealed", _("revealed")
        RATING = "rating", _("rating")
        RATED = "rated", _("rated")
        SKIPPED = "skipped", _("skipped")

    class Kind(models.TextChoices):
        LEARNING = "learning", _("learning")
        REVIEW = "review", _("review")
        NEW = "new", _("new")

    session = models.ForeignKey(
        ReviewSession, on_delete=models.CASCADE, related_name="cards", verbose_name=_("session")
    )
    card_id = models.BigIntegerField(verbose_name=_("card id"))
    position = models.PositiveIntegerField(verbose_name=_("position"))
    kind = models.CharField(max_length=10, choices=Kind.choices, verbose_name=_("kind"))
    state = models.CharField(
        max_length=10, choices=State.choices, default=State.QUEUED, verbose_name=_("state")
    )
    ease = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("ease"))
    revealed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("revealed at"))
    # Anki's count of the card's answers when it was revealed: an answer since (ours that
    # lost its reply, or one given in Anki or another session) shows as a higher count.
    reps_at_reveal = models.IntegerField(null=True, blank=True, verbose_name=_("answers before"))
    # The call sending the rating holds the card until then (a crashed call's hold lapses).
    claimed_until = models.DateTimeField(null=True, blank=True, verbose_name=_("claimed until"))
    rated_at = models.DateTimeField(null=True, blank=True, verbose_name=_("rated at"))

    class Meta:
        verbose_name = _("review card")
        verbose_name_plural = _("review cards")
        ordering = ["session", "position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "card_id"], name="anki_review_card_once")
        ]

    def __str__(self) -> str:
        return f"{self.card_id} ({self.get_state_display()})"


class NoteChange(models.Model):
    """The journal of `anki.update_note`: a change is written down before it is sent, and
    says how it ended (`sent`, or `failed` with Anki's reason)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        SENT = "sent", _("sent")
        FAILED = "failed", _("failed")

    anki_note_id = models.BigIntegerField(db_index=True, verbose_name=_("anki note id"))
    fields = models.JSONField(default=dict, blank=True, verbose_name=_("fields"))
    tags = models.JSONField(null=True, blank=True, verbose_name=_("tags"))
    before = models.JSONField(default=dict, blank=True, verbose_name=_("before"))
    status = models.CharField(
        max_length=10,
        choices=Status.choices,
        default=Status.PENDING,
        db_index=True,
        verbose_name=_("status"),
    )
    last_error = models.TextField(blank=True, verbose_name=_("last error"))
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="anki_note_changes",
        verbose_name=_("owner"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    sent_at = models.DateTimeField(null=True, blank=True, verbose_name=_("sent at"))

    class Meta:
        verbose_name = _("note change")
        verbose_name_plural = _("note changes")
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"#{self.anki_note_id} ({self.get_status_display()})"


def _package_id() -> str:
    return random_id(12)


class AnkiPackage(models.Model):
    """An `.apkg` file made for a user without a running Anki (`anki.export_package`):
    stored in Django's storage under `file`, theirs alone, gone after `expires_at`."""

    public_id = models.CharField(
        max_length=32, unique=True, default=_package_id, editable=False, verbose_name=_("id")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="anki_packages",
        verbose_name=_("owner"),
    )
    name = models.CharField(max_length=120, verbose_name=_("file name"))
    deck = models.CharField(max_length=255, verbose_name=_("deck"))
    file = models.CharField(max_length=255, verbose_name=_("stored file"))
    notes = models.PositiveIntegerField(default=0, verbose_name=_("notes"))
    cards = models.PositiveIntegerField(default=0, verbose_name=_("cards"))
    media = models.PositiveIntegerField(default=0, verbose_name=_("media files"))
    size = models.PositiveBigIntegerField(default=0, verbose_name=_("size, bytes"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    expires_at = models.DateTimeField(db_index=True, verbose_name=_("expires at"))

    class Meta:
        verbose_name = _("Anki package")
        verbose_name_plural = _("Anki packages")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.notes})"
