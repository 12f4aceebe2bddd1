"""What the online-judge tools received: every problem, and the daily challenges.

The API stays the source of truth; these rows are a copy for browsing in the admin and
for answering with a marked stored copy while the API is unreachable.
"""

from __future__ import annotations

from django.db import models


class OjProblem(models.Model):
    source = models.CharField(max_length=50)
    problem_id = models.CharField("ID", max_length=200)
    slug = models.CharField(max_length=300, blank=True, db_index=True)
    title = models.CharField(max_length=500, blank=True)
    title_cn = models.CharField(max_length=500, blank=True)
    difficulty = models.CharField(max_length=50, blank=True)
    tags = models.JSONField(default=list, blank=True)
    link = models.URLField(max_length=1000, blank=True, db_index=True)
    ac_rate = models.FloatField("AC rate, %", null=True, blank=True)
    content = models.TextField(blank=True)
    # Every field the API sent that the model knows, as received.
    raw = models.JSONField(default=dict, blank=True)
    fetched_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = "online-judge problem"
        constraints = [
            models.UniqueConstraint(fields=["source", "problem_id"], name="ojproblem_unique_key")
        ]
        ordering = ["source", "problem_id"]

    def __str__(self) -> str:
        return f"{self.source} {self.problem_id}: {self.title or self.slug or '?'}"


class OjDailyChallenge(models.Model):
    DOMAINS = [("com", "leetcode.com"), ("cn", "leetcode.cn")]

    date = models.DateField()
    domain = models.CharField(max_length=3, choices=DOMAINS)
    problems = models.ManyToManyField(OjProblem, through="OjDailyEntry", related_name="dailies")
    fetched_at = models.DateTimeField()

    class Meta:
        verbose_name = "daily challenge"
        constraints = [
            models.UniqueConstraint(fields=["date", "domain"], name="ojdaily_unique_day")
        ]
        ordering = ["-date", "domain"]

    def __str__(self) -> str:
        return f"{self.date} ({self.domain})"


class OjDailyEntry(models.Model):
    daily = models.ForeignKey(OjDailyChallenge, on_delete=models.CASCADE, related_name="entries")
    problem = models.ForeignKey(OjProblem, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["daily", "position"], name="ojdailyentry_unique_pos")
        ]
        ordering = ["daily", "position"]

    def __str__(self) -> str:
        return f"{self.daily} #{self.position}"
