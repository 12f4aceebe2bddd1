"""The norms corpus: documents with their days (editions), pages, aliases, clauses,
amendments with their changes and orders, and the stem counts search ranks by."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from normagpt.parsing import clause_label

# Served back at MEDIA_URL + this prefix by normagpt.views.document_file.
DOCUMENT_UPLOAD_TO = "normagpt/documents/"


class NormDocument(models.Model):
    class Kind(models.TextChoices):
        GOST = "gost", "ГОСТ"
        SP = "sp", "СП"
        SNIP = "snip", "СНиП"
        OTHER = "other", _("other")

    class Status(models.TextChoices):
        IN_FORCE = "in_force", _("in force")
        REPLACED = "replaced", _("replaced")

    class Ingest(models.TextChoices):
        PENDING = "pending", _("pending")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        FAILED = "failed", _("failed")

    code = models.CharField(
        max_length=100, unique=True, help_text=_("e.g. СП 63.13330.2018"), verbose_name=_("code")
    )
    # casefolded, spaces removed: how codes named by people and models are matched
    code_key = models.CharField(
        max_length=100, unique=True, editable=False, verbose_name=_("code key")
    )
    title = models.CharField(max_length=500, verbose_name=_("title"))
    kind = models.CharField(
        max_length=8, choices=Kind.choices, default=Kind.OTHER, verbose_name=_("kind")
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.IN_FORCE, verbose_name=_("status")
    )
    replaced_by = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="replaces",
        verbose_name=_("replaced by"),
    )
    file = models.FileField(upload_to=DOCUMENT_UPLOAD_TO, blank=True, verbose_name=_("file"))
    is_sample = models.BooleanField(
        default=False, help_text=_("demo corpus, not a real norm"), verbose_name=_("is sample")
    )
    ingest_status = models.CharField(
        max_length=8,
        choices=Ingest.choices,
        default=Ingest.PENDING,
        verbose_name=_("ingest status"),
    )
    ingest_error = models.TextField(blank=True, verbose_name=_("ingest error"))
    page_count = models.PositiveIntegerField(default=0, verbose_name=_("page count"))
    # where the pages' text comes from when another's work (a public dataset's page texts):
    # its attribution, shown with every page of the document (a licence's terms, CC BY)
    source = models.CharField(
        max_length=300, blank=True, default="",
        help_text=_("where the pages' text comes from, shown with them (a licence's attribution)"),
        verbose_name=_("source"),
    )  # fmt: skip
    # the SHA-256 of the source file its pages were read from: a load of the same file skips it
    source_digest = models.CharField(
        max_length=64, blank=True, default="", editable=False, verbose_name=_("source digest")
    )
    # the ingestion's lease: the process rendering the PDF (core.holders), renewed by its
    # heartbeat; the pages it has rendered of the file's (see normagpt.ingest.lease)
    ingest_holder = models.CharField(
        max_length=80, blank=True, default="", db_default="", editable=False,
        verbose_name=_("ingested by"),
    )  # fmt: skip
    ingest_heartbeat_at = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name=_("ingestion heartbeat at")
    )
    ingest_done = models.PositiveIntegerField(
        default=0, db_default=0, editable=False, verbose_name=_("pages rendered")
    )
    ingest_total = models.PositiveIntegerField(
        default=0, db_default=0, editable=False, verbose_name=_("pages to render")
    )
    # the edition's life: in force from, and until the day it was replaced (None: open);
    # without dates its status alone tells (see `in_force_on`)
    in_force_from = models.DateField(null=True, blank=True, verbose_name=_("in force from"))
    in_force_to = models.DateField(
        null=True, blank=True, help_text=_("the day it stopped being in force"),
        verbose_name=_("in force to"),
    )  # fmt: skip
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("norm document")
        verbose_name_plural = _("norm documents")
        ordering = ["code"]

    def __str__(self) -> str:
        return self.code

    def save(self, *args: object, **kwargs: object) -> None:
        from normagpt.parsing import code_key

        self.code_key = code_key(self.code)
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def clean(self) -> None:
        """A code written another way (case, spaces) is the document it names: refused in
        a form, naming the document (the database would refuse it as a 500)."""
        from normagpt.parsing import code_key

        same = NormDocument.objects.filter(code_key=code_key(self.code)).exclude(pk=self.pk)
        held = same.values_list("code", flat=True).first()
        if held is not None:
            raise ValidationError(
                {
                    "code": _("%(code)s is the document %(held)s, already in the corpus.")
                    % {"code": self.code, "held": held}
                }
            )

    def in_force_on(self, day: date) -> bool:
        """Whether this edition was in force on `day` (see `document_in_force`)."""
        return document_in_force(day.isoformat(), self.status, self.in_force_from, self.in_force_to)


def holds_on(day: str, start: Any, end: Any) -> bool:
    """Whether the span [start, end) holds `day` (ISO strings or dates; None: open)."""
    return (start is None or str(start) <= day) and (end is None or day < str(end))


def document_in_force(day: str, status: str, in_force_from: Any, in_force_to: Any) -> bool:
    """Whether an edition was in force on `day` (ISO): by its dates when it has them, else by
    its status (a document without dates is as its status says, on any day); a replaced one
    whose last day is unknown is not in force. Raw values serve rows read by hand."""
    if in_force_to is None and status == NormDocument.Status.REPLACED:
        return False
    if in_force_from is None and in_force_to is None:
        return status == NormDocument.Status.IN_FORCE
    return holds_on(day, in_force_from, in_force_to)


class NormPage(models.Model):
    document = models.ForeignKey(
        NormDocument, on_delete=models.CASCADE, related_name="pages", verbose_name=_("document")
    )
    number = models.PositiveIntegerField(
        help_text=_("1-based page number in the file"), verbose_name=_("number")
    )
    text = models.TextField(blank=True, verbose_name=_("text"))
    image = models.FileField(upload_to="normagpt/pages/", blank=True, verbose_name=_("image"))
    width = models.PositiveIntegerField(default=0, verbose_name=_("width"))
    height = models.PositiveIntegerField(default=0, verbose_name=_("height"))
    clauses = models.JSONField(
        default=list,
        blank=True,
        help_text=_("clause numbers on the page"),
        verbose_name=_("clauses"),
    )
    has_text_layer = models.BooleanField(default=True, verbose_name=_("has text layer"))
    ocr = models.BooleanField(
        default=False, help_text=_("text recognised by tesseract"), verbose_name=_("ocr")
    )

    class Meta:
        verbose_name = _("norm page")
        verbose_name_plural = _("norm pages")
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="normpage_unique_number")
        ]
        ordering = ["document", "number"]

    def __str__(self) -> str:
        return gettext("%(code)s, page %(number)s") % {
            "code": self.document.code,
            "number": self.number,
        }


class NormPageDraft(models.Model):
    """A page an ingestion has rendered but not yet put in place: the new edition's pages
    wait here (their images stored under new names) until all are rendered, then replace
    the old edition's in one transaction. An ingestion stopped midway leaves them for the
    next start of the same file at the same DPI (`source`) to go on from."""

    document = models.ForeignKey(
        NormDocument, on_delete=models.CASCADE, related_name="+", verbose_name=_("document")
    )
    # the file's SHA-256 and the DPI: which rendering the page belongs to
    source = models.CharField(max_length=80, verbose_name=_("source"))
    number = models.PositiveIntegerField(verbose_name=_("number"))
    text = models.TextField(blank=True, verbose_name=_("text"))
    image = models.FileField(upload_to="normagpt/pages/", blank=True, verbose_name=_("image"))
    width = models.PositiveIntegerField(default=0, verbose_name=_("width"))
    height = models.PositiveIntegerField(default=0, verbose_name=_("height"))
    has_text_layer = models.BooleanField(default=True, verbose_name=_("has text layer"))
    ocr = models.BooleanField(default=False, verbose_name=_("ocr"))

    class Meta:
        verbose_name = _("rendered page")
        verbose_name_plural = _("rendered pages")
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="normpagedraft_unique")
        ]

    def __str__(self) -> str:
        return f"{self.document_id}: {self.number} ({self.source})"


class NormDocumentAlias(models.Model):
    """A short name of a document («СП 63», «сп63», «63.13330»): how people and models name
    it. The code's own short forms are made at ingestion (`automatic`); others are added in
    the admin. One alias may name several documents (an edition in force and a replaced one)."""

    document = models.ForeignKey(
        NormDocument, on_delete=models.CASCADE, related_name="aliases", verbose_name=_("document")
    )
    alias = models.CharField(max_length=100, verbose_name=_("alias"))
    # casefolded, ё→е, spaces and punctuation around digits removed: see parsing.alias_key
    key = models.CharField(max_length=100, db_index=True, editable=False, verbose_name=_("key"))
    automatic = models.BooleanField(
        default=True, help_text=_("made from the code at ingestion"), verbose_name=_("automatic")
    )

    class Meta:
        verbose_name = _("document alias")
        verbose_name_plural = _("document aliases")
        constraints = [
            models.UniqueConstraint(fields=["document", "key"], name="normalias_unique_key")
        ]
        ordering = ["document", "alias"]

    def __str__(self) -> str:
        return f"{self.alias} → {self.document_id}"

    def save(self, *args: object, **kwargs: object) -> None:
        from normagpt.parsing import alias_key

        self.key = alias_key(self.alias)
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def clean(self) -> None:
        """The same alias written another way for the same document is refused in a form."""
        from normagpt.parsing import alias_key

        if self.document_id is None:
            return
        same = NormDocumentAlias.objects.filter(
            document_id=self.document_id, key=alias_key(self.alias)
        ).exclude(pk=self.pk)
        if same.exists():
            raise ValidationError({"alias": _("The document already has this alias.")})


class NormAbbreviation(models.Model):
    """An abbreviation a document defines in its list of abbreviations («КЕО — коэффициент
    естественной освещенности»): a question saying the words finds a clause writing the
    abbreviation (`normagpt.abbreviations`). Made at indexing, never edited."""

    document = models.ForeignKey(
        NormDocument,
        on_delete=models.CASCADE,
        related_name="abbreviations",
        verbose_name=_("document"),
    )
    short = models.CharField(max_length=16, verbose_name=_("abbreviation"))
    expansion = models.CharField(max_length=200, verbose_name=_("expansion"))
    stem = models.CharField(max_length=40, editable=False)  # the abbreviation's search stem
    # the expansion's search stems, space-joined, and the first of them (looked up by)
    stems = models.CharField(max_length=300, editable=False)
    head = models.CharField(max_length=40, db_index=True, editable=False)

    class Meta:
        verbose_name = _("abbreviation")
        verbose_name_plural = _("abbreviations")

    def __str__(self) -> str:
        return f"{self.short} — {self.expansion}"


class NormClause(models.Model):
    """A clause of a document (a numbered paragraph, or a table with its rows), as split at
    ingestion: what search ranks and what a cited claim is checked against.

    `page` is where the clause begins; `start`–`end` its span in that page's text (`end` is
    the page's end when the clause runs on to the next pages, `span` of them, whose parts
    are in `text` too).
    """

    class Kind(models.TextChoices):
        CLAUSE = "clause", _("clause")
        TABLE = "table", _("table")
        TEXT = "text", _("unnumbered text")

    document = models.ForeignKey(
        NormDocument, on_delete=models.CASCADE, related_name="clauses", verbose_name=_("document")
    )
    page = models.ForeignKey(
        NormPage, on_delete=models.CASCADE, related_name="clause_set", verbose_name=_("page")
    )
    kind = models.CharField(
        max_length=8, choices=Kind.choices, default=Kind.CLAUSE, verbose_name=_("kind")
    )
    number = models.CharField(max_length=40, blank=True, verbose_name=_("number"))
    heading = models.CharField(
        max_length=500, blank=True, help_text=_("the headings above it"), verbose_name=_("heading")
    )
    text = models.TextField(verbose_name=_("text"))
    position = models.PositiveIntegerField(
        default=0, help_text=_("order in the document"), verbose_name=_("position")
    )
    start = models.PositiveIntegerField(default=0, verbose_name=_("start"))
    end = models.PositiveIntegerField(default=0, verbose_name=_("end"))
    # how many pages after `page` it runs on to (a clause or table continued overleaf): the
    # agent is shown each of them with the first
    span = models.PositiveSmallIntegerField(
        default=0, db_default=0, help_text=_("pages after its first that it runs on to"),
        verbose_name=_("pages after the first"),
    )  # fmt: skip
    # the stems of its heading and text (parsing.search_stems), space-separated: what
    # full-text search indexes (a GIN index on PostgreSQL, FTS5 on SQLite; migration 0007)
    search_text = models.TextField(blank=True, editable=False, verbose_name=_("search text"))
    # a version of the clause: the text an amendment gave it (`amendment`), holding from
    # `valid_from` until `valid_to` (None: open); the edition's own text has no amendment
    amendment = models.ForeignKey(
        "NormAmendment", on_delete=models.CASCADE, null=True, blank=True,
        related_name="clause_versions", verbose_name=_("amendment"),
    )  # fmt: skip
    valid_from = models.DateField(null=True, blank=True, verbose_name=_("valid from"))
    valid_to = models.DateField(null=True, blank=True, verbose_name=_("valid to"))

    class Meta:
        verbose_name = _("norm clause")
        verbose_name_plural = _("norm clauses")
        ordering = ["document", "position"]
        indexes = [models.Index(fields=["number", "document"], name="normclause_number")]

    def __str__(self) -> str:
        label = clause_label(self.number, table=self.kind == self.Kind.TABLE)
        return f"{self.document.code}, {label}"


class NormAmendment(models.Model):
    """An amendment (Изменение № N) to an edition: from `in_force_from` it gives the clauses
    it changes a new text (`NormAmendmentChange`); search and answers on a later day read
    that text and cite the amendment (`normagpt.editions`)."""

    document = models.ForeignKey(
        NormDocument, on_delete=models.CASCADE, related_name="amendments",
        verbose_name=_("document"),
    )  # fmt: skip
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    in_force_from = models.DateField(verbose_name=_("in force from"))
    title = models.CharField(max_length=300, blank=True, verbose_name=_("title"))
    file = models.FileField(upload_to="normagpt/amendments/", blank=True, verbose_name=_("file"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("amendment")
        verbose_name_plural = _("amendments")
        ordering = ["document", "number"]
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="normamendment_unique")
        ]

    def __str__(self) -> str:
        return gettext("Amendment No. %(number)s to %(code)s") % {
            "number": self.number,
            "code": self.document.code,
        }


class NormAmendmentChange(models.Model):
    """A change an amendment makes (`normagpt.editions`): the new text of a clause, a table,
    the preface or a part of one ('' deletes it), text added at its end or before a part of
    it, words replaced in it, a clause added, a section's or appendix's clauses replaced,
    a section's title. An amendment's changes apply in their order; `applied` says whether
    the last application could make this one (the words replaced stand once in the clause,
    the clause it changes exists, the clause it adds does not)."""

    class Kind(models.TextChoices):
        CLAUSE = "clause", _("clause")
        TABLE = "table", _("table")
        TEXT = "text", _("unnumbered text")
        SECTION = "section", _("section or appendix")

    class Mode(models.TextChoices):
        REPLACE = "replace", _("new text in full")
        APPEND = "append", _("added at the end")
        SUBSTITUTE = "substitute", _("words replaced")
        ADD = "add", _("new clause")
        INSERT = "insert", _("inserted before a part")
        SECTION = "section", _("a section's clauses replaced")
        TITLE = "title", _("a section's title")

    amendment = models.ForeignKey(
        NormAmendment, on_delete=models.CASCADE, related_name="changes",
        verbose_name=_("amendment"),
    )  # fmt: skip
    kind = models.CharField(
        max_length=8, choices=Kind.choices, default=Kind.CLAUSE, verbose_name=_("kind"),
    )  # fmt: skip
    number = models.CharField(
        max_length=40, blank=True, help_text=_("a clause's or table's number, a section's "
                                               "number or an appendix's letter (a section, "
                                               "empty: the whole text)"),
        verbose_name=_("number"),
    )  # fmt: skip
    mode = models.CharField(
        max_length=10, choices=Mode.choices, default=Mode.REPLACE, verbose_name=_("change made"),
    )  # fmt: skip
    part = models.CharField(
        max_length=200, blank=True, default="",
        help_text=_("where in the clause: «абзац 2», «абзац -1» (the last), «перечисление 1», "
                    "«примечание», «после «…»» (the entry or row after those words); "
                    "empty: all of it"),
        verbose_name=_("part"),
    )  # fmt: skip
    replaces = models.TextField(
        blank=True, help_text=_("the words a substitution replaces, as the amendment quotes "
                                "them: they must stand once in the clause's text"),
        verbose_name=_("replaced words"),
    )  # fmt: skip
    text = models.TextField(
        blank=True,
        help_text=_(
            "the clause's new text in full (empty: the clause is deleted), what is added at "
            "its end, or the words put in place of those replaced (empty: they are removed)"
        ),
        verbose_name=_("text"),
    )  # fmt: skip
    order = models.TextField(
        blank=True, default="", editable=False,
        help_text=_("the amendment's words it was read from (empty: typed in)"),
        verbose_name=_("order"),
    )  # fmt: skip
    # [[kind, number], …]: what that order names besides (a clause holding the table it
    # changes: «Пункт 4.4. Таблица 1»): marked too when the change is not made
    targets = models.JSONField(default=list, blank=True, editable=False, verbose_name=_("names"))
    applied = models.BooleanField(
        default=True, help_text=_("false: the last application could not make this change"),
        verbose_name=_("applied"),
    )  # fmt: skip

    class Meta:
        verbose_name = _("amended clause")
        verbose_name_plural = _("amended clauses")
        ordering = ["amendment", "id"]

    def __str__(self) -> str:
        return f"{self.amendment}: {self.number}"

    def save(self, *args: object, **kwargs: object) -> None:
        from normagpt.parsing import number_normal  # numbers compared in one form

        self.number = number_normal("".join(self.number.split())) if self.number else ""
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class NormAmendmentOrder(models.Model):
    """An order of an amendment its reading did not apply (`normagpt.editions`): its words,
    what it names, and why. Kept to be shown (the admin, the command) and to mark the
    clauses it names once the amendment holds: their text served is not the amended one."""

    amendment = models.ForeignKey(
        NormAmendment, on_delete=models.CASCADE, related_name="unread_orders",
        verbose_name=_("amendment"),
    )  # fmt: skip
    position = models.PositiveIntegerField(default=0, verbose_name=_("position"))
    text = models.TextField(verbose_name=_("order"))
    # [[kind, number], …]: NormAmendmentChange.Kind and a number in its stored form
    targets = models.JSONField(default=list, blank=True, verbose_name=_("names"))
    reason = models.CharField(max_length=300, blank=True, verbose_name=_("reason"))

    class Meta:
        verbose_name = _("order not applied")
        verbose_name_plural = _("orders not applied")
        ordering = ["amendment", "position"]

    def __str__(self) -> str:
        return f"{self.amendment}: {self.text[:60]}"


class NormTerm(models.Model):
    """How many clauses of the corpus hold a stem: search weighs rarer words more and
    finds its candidates through them. The row with the empty term counts the clauses.
    Kept in step by indexing (`normagpt.indexing`), never counted per search."""

    term = models.CharField(max_length=40, primary_key=True, verbose_name=_("term"))
    clauses = models.IntegerField(default=0, verbose_name=_("clauses"))

    class Meta:
        verbose_name = _("search term")
        verbose_name_plural = _("search terms")

    def __str__(self) -> str:
        name = {"": "(all)", "#": "(changes)"}.get(self.term, self.term)
        return f"{name}: {self.clauses}"
