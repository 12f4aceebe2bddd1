"""The problem bank's cache of the СДАМ ГИА sites: problems, the catalog tree, tests.

Every row carries `fetched_at`; services serve a row from the database until its TTL
(a setting per kind) expires. Problem ids are per site: every key includes subject+exam.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.ids import random_id

EXAM_CHOICES = [("ege", "ЕГЭ"), ("oge", "ОГЭ")]


class SiteScoped(models.Model):
    subject = models.CharField(max_length=8, db_index=True, verbose_name=_("subject"))
    exam = models.CharField(
        max_length=3, choices=EXAM_CHOICES, db_index=True, verbose_name=_("exam")
    )
    fetched_at = models.DateTimeField(db_index=True, verbose_name=_("fetched at"))

    class Meta:
        abstract = True


class Problem(SiteScoped):
    SOLUTION_KINDS = [
        ("own", _("own")),
        ("prototype", _("a prototype's")),
        ("missing", _("missing")),
    ]

    problem_id = models.CharField(max_length=20, verbose_name=_("problem id"))
    type_number = models.CharField(
        max_length=10, blank=True, db_index=True, verbose_name=_("type number")
    )
    condition_text = models.TextField(blank=True, verbose_name=_("condition text"))
    condition_html = models.TextField(blank=True, verbose_name=_("condition html"))
    figures = models.JSONField(default=list, blank=True, verbose_name=_("figures"))
    formulas = models.JSONField(default=list, blank=True, verbose_name=_("formulas"))
    source_text = models.TextField(blank=True, verbose_name=_("source text"))
    source_html = models.TextField(blank=True, verbose_name=_("source html"))
    solution_text = models.TextField(blank=True, verbose_name=_("solution text"))
    solution_html = models.TextField(blank=True, verbose_name=_("solution html"))
    solution_figures = models.JSONField(
        default=list, blank=True, verbose_name=_("solution figures")
    )
    solution_kind = models.CharField(
        max_length=10, choices=SOLUTION_KINDS, default="missing", verbose_name=_("solution kind")
    )
    answer = models.CharField(max_length=500, blank=True, verbose_name=_("answer"))
    answers = models.JSONField(default=list, blank=True, verbose_name=_("answers"))
    analogs = models.JSONField(default=list, blank=True, verbose_name=_("analogs"))
    codifier = models.JSONField(
        default=list, blank=True, verbose_name=_("codifier")
    )  # [{"code", "title"}]
    internal_id = models.CharField(max_length=20, blank=True, verbose_name=_("internal id"))
    # Normalized condition (+ source) text for fuzzy matching, computed on store.
    search_text = models.TextField(blank=True, verbose_name=_("search text"))
    # Its keywords, stems and numbers (`problems.matching.index_terms`), which the
    # database's full-text index reads: a tsvector column generated from it on PostgreSQL,
    # an FTS5 table kept in step by triggers on SQLite (migration 0004).
    search_terms = models.TextField(blank=True, editable=False, verbose_name=_("search terms"))

    class Meta:
        verbose_name = _("problem")
        verbose_name_plural = _("problems")
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "exam", "problem_id"], name="problem_unique_per_site"
            )
        ]
        indexes = [
            models.Index(fields=["subject", "exam", "type_number"]),
        ]
        ordering = ["subject", "exam", "problem_id"]

    def __str__(self) -> str:
        return f"{self.subject}-{self.exam} №{self.problem_id}"

    def clean(self) -> None:
        """What a hand-written row must be to be read as the site's: a subject of its exam,
        a problem id of digits, and its JSON fields of the shape the parser writes (the
        admin took `subject` «zz», `answers` {"a": 1} and `analogs` "123", which the API
        then served against its schema and «Fetch analogs» read as the ids 1, 2 and 3)."""
        from problems.subjects import SUBJECTS

        errors: dict[str, str] = {}
        if self.subject not in SUBJECTS.get(self.exam, {}):
            errors["subject"] = gettext("%(subject)s is no subject of the exam %(exam)s") % {
                "subject": self.subject, "exam": self.exam,
            }  # fmt: skip
        if not (self.problem_id.isascii() and self.problem_id.isdigit()):
            errors["problem_id"] = gettext("A problem id is 1–20 digits 0-9.")
        texts = ("answers", "figures", "formulas", "solution_figures")
        for name in texts:
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                errors[name] = gettext("A list of texts.")
        if not isinstance(self.analogs, list) or not all(
            isinstance(v, str) and v.isascii() and v.isdigit() for v in self.analogs
        ):
            errors["analogs"] = gettext("A list of problem ids (texts of digits).")
        if not isinstance(self.codifier, list) or not all(
            isinstance(v, dict) and {"code", "title"} <= set(v) for v in self.codifier
        ):
            errors["codifier"] = gettext('A list of {"code": …, "title": …}.')
        if errors:
            raise ValidationError(errors)

    @property
    def site_label(self) -> str:
        return f"{self.subject}-{self.exam}"


class Topic(SiteScoped):
    """An exam task type of the catalog («1. Планиметрия»)."""

    number = models.CharField(max_length=10, blank=True, verbose_name=_("number"))
    title = models.CharField(max_length=500, verbose_name=_("title"))
    count = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("count"))
    is_additional = models.BooleanField(default=False, verbose_name=_("is additional"))
    position = models.PositiveIntegerField(verbose_name=_("position"))

    class Meta:
        verbose_name = _("topic")
        verbose_name_plural = _("topics")
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "exam", "position"], name="topic_unique_position"
            )
        ]
        ordering = ["subject", "exam", "position"]

    def __str__(self) -> str:
        return f"{self.number}. {self.title}" if self.number else self.title


class Category(SiteScoped):
    """A category (subtype) of a topic; its listing holds whole problems."""

    category_id = models.CharField(max_length=20, verbose_name=_("category id"))
    # Null while only the listing is known (fetched before the catalog).
    topic = models.ForeignKey(
        Topic,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="categories",
        verbose_name=_("topic"),
    )
    title = models.CharField(max_length=500, blank=True, verbose_name=_("title"))
    count = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("count"))
    position = models.PositiveIntegerField(default=0, verbose_name=_("position"))
    problems = models.ManyToManyField(
        Problem,
        through="CategoryProblem",
        related_name="categories",
        blank=True,
        verbose_name=_("problems"),
    )
    # Set when the whole listing was read (up to data-total); the TTL counts from here.
    listing_fetched_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("listing fetched at")
    )
    listing_pages = models.PositiveIntegerField(
        null=True, blank=True, verbose_name=_("listing pages")
    )

    class Meta:
        verbose_name = _("category")
        verbose_name_plural = _("categories")
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "exam", "category_id"], name="category_unique_per_site"
            )
        ]
        ordering = ["subject", "exam", "topic__position", "position"]

    def __str__(self) -> str:
        return f"{self.title or gettext('category')} ({self.category_id})"


class CategoryProblem(models.Model):
    """A problem's place in a category listing."""

    category = models.ForeignKey(Category, on_delete=models.CASCADE, verbose_name=_("category"))
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, verbose_name=_("problem"))
    position = models.PositiveIntegerField(verbose_name=_("position"))

    class Meta:
        verbose_name = _("problem of a category")
        verbose_name_plural = _("problems of categories")
        constraints = [
            models.UniqueConstraint(fields=["category", "problem"], name="category_problem_once")
        ]
        ordering = ["category", "position"]

    def __str__(self) -> str:
        return f"{self.category_id} #{self.position}: {self.problem_id}"


class Test(SiteScoped):
    """A test (variant): its problems in order, or the fact that they are hidden."""

    test_id = models.CharField(max_length=20, verbose_name=_("test id"))
    title = models.CharField(max_length=500, blank=True, verbose_name=_("title"))
    problem_ids = models.JSONField(default=list, blank=True, verbose_name=_("problem ids"))
    ids_hidden = models.BooleanField(default=False, verbose_name=_("ids hidden"))
    problem_count = models.PositiveIntegerField(default=0, verbose_name=_("problem count"))

    class Meta:
        verbose_name = _("test")
        verbose_name_plural = _("tests")
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "exam", "test_id"], name="test_unique_per_site"
            )
        ]
        ordering = ["subject", "exam", "test_id"]

    def __str__(self) -> str:
        return gettext("%(site)s test %(id)s") % {
            "site": f"{self.subject}-{self.exam}",
            "id": self.test_id,
        }


__all__ = ["Category", "CategoryProblem", "Problem", "Test", "Topic"]


def _variant_id() -> str:
    return random_id(9)


class Variant(models.Model):
    """A variant a teacher made: problems of one exam in order, drawn from the stored bank
    with `seed` (the same seed, the same problems), or made by the site's constructor (its
    test stored as `Test` too)."""

    public_id = models.CharField(
        max_length=32, unique=True, default=_variant_id, editable=False, verbose_name=_("id")
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="sdamgia_variants",
        verbose_name=_("owner"),
    )
    subject = models.CharField(max_length=8, verbose_name=_("subject"))
    exam = models.CharField(max_length=3, choices=EXAM_CHOICES, verbose_name=_("exam"))
    tasks = models.JSONField(default=dict, verbose_name=_("tasks"))  # task number → count
    source = models.CharField(
        max_length=4, choices=[("bank", _("bank")), ("site", _("site"))], default="bank",
        verbose_name=_("source"),
    )  # fmt: skip
    # bank: the seed it was drawn with; site: the test the site's constructor made
    seed = models.BigIntegerField(null=True, blank=True, verbose_name=_("seed"))
    site_test_id = models.CharField(max_length=20, blank=True, verbose_name=_("test id"))
    problem_ids = models.JSONField(default=list, verbose_name=_("problems"))  # in order
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("variant")
        verbose_name_plural = _("variants")
        ordering = ["-id"]
        indexes = [models.Index(fields=["owner", "subject", "exam", "-id"])]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.subject}-{self.exam}, {len(self.problem_ids)})"


class SeenProblem(models.Model):
    """A problem given to a user by `sdamgia_random_problem`: with `exclude_seen` it is not
    given to them again (the problems of their variants count as seen too)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="sdamgia_seen",
        verbose_name=_("owner"),
    )
    subject = models.CharField(max_length=8, verbose_name=_("subject"))
    exam = models.CharField(max_length=3, choices=EXAM_CHOICES, verbose_name=_("exam"))
    problem_id = models.CharField(max_length=20, verbose_name=_("problem id"))
    seen_at = models.DateTimeField(auto_now=True, verbose_name=_("seen at"))

    class Meta:
        verbose_name = _("problem seen")
        verbose_name_plural = _("problems seen")
        ordering = ["-seen_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "subject", "exam", "problem_id"], name="seen_problem_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject}-{self.exam} {self.problem_id}"
