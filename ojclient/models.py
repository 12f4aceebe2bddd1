"""What the online-judge tools received: every problem, and the daily challenges.

The API stays the source of truth; these rows are a copy for browsing in the admin and
for answering with a marked stored copy while the API is unreachable.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class OjProblem(models.Model):
    source = models.CharField(max_length=50, verbose_name=_("source"))
    problem_id = models.CharField(max_length=200, verbose_name=_("problem id"))
    slug = models.CharField(max_length=300, blank=True, db_index=True, verbose_name=_("slug"))
    title = models.CharField(max_length=500, blank=True, verbose_name=_("title"))
    title_cn = models.CharField(max_length=500, blank=True, verbose_name=_("title cn"))
    difficulty = models.CharField(max_length=50, blank=True, verbose_name=_("difficulty"))
    tags = models.JSONField(default=list, blank=True, verbose_name=_("tags"))
    link = models.URLField(max_length=1000, blank=True, db_index=True, verbose_name=_("link"))
    ac_rate = models.FloatField(null=True, blank=True, verbose_name=_("AC rate, %"))
    content = models.TextField(blank=True, verbose_name=_("content"))
    # Every field the API sent that the model knows, as received.
    raw = models.JSONField(default=dict, blank=True, verbose_name=_("raw"))
    fetched_at = models.DateTimeField(db_index=True, verbose_name=_("fetched at"))

    class Meta:
        verbose_name = _("online-judge problem")
        verbose_name_plural = _("online-judge problems")
        constraints = [
            models.UniqueConstraint(fields=["source", "problem_id"], name="ojproblem_unique_key")
        ]
        ordering = ["source", "problem_id"]

    def __str__(self) -> str:
        return f"{self.source} {self.problem_id}: {self.title or self.slug or '?'}"


class OjDailyChallenge(models.Model):
    DOMAINS = [("com", "leetcode.com"), ("cn", "leetcode.cn")]

    date = models.DateField(verbose_name=_("date"))
    domain = models.CharField(max_length=3, choices=DOMAINS, verbose_name=_("domain"))
    problems = models.ManyToManyField(
        OjProblem, through="OjDailyEntry", related_name="dailies", verbose_name=_("problems")
    )
    fetched_at = models.DateTimeField(verbose_name=_("fetched at"))

    class Meta:
        verbose_name = _("daily challenge")
        verbose_name_plural = _("daily challenges")
        constraints = [
            models.UniqueConstraint(fields=["date", "domain"], name="ojdaily_unique_day")
        ]
        ordering = ["-date", "domain"]

    def __str__(self) -> str:
        return f"{self.date} ({self.domain})"


class OjDailyEntry(models.Model):
    daily = models.ForeignKey(
        OjDailyChallenge, on_delete=models.CASCADE, related_name="entries", verbose_name=_("daily")
    )
    problem = models.ForeignKey(
        OjProblem, on_delete=models.CASCADE, related_name="+", verbose_name=_("problem")
    )
    position = models.PositiveSmallIntegerField(default=0, verbose_name=_("position"))

    class Meta:
        verbose_name = _("daily challenge entry")
        verbose_name_plural = _("daily challenge entries")
        constraints = [
            models.UniqueConstraint(fields=["daily", "position"], name="ojdailyentry_unique_pos")
        ]
        ordering = ["daily", "position"]

    def __str__(self) -> str:
        return f"{self.daily} #{self.position}"
