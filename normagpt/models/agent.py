"""The agent's runs with their checkpoints: threads, runs, steps, events, the claims
checked and every LLM call.

A run's `shared` JSON is the agent's shared store; it is written together with an
`AgentStep` after every node (the checkpoint), so a run resumes from its last finished node.
Every LLM request is recorded in `LlmCall` the moment it returns, finished node or not.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.ids import random_id
from normagpt.models.corpus import NormClause, NormPage


def run_public_id() -> str:
    """A run's id in URLs and resource URIs: 22 random URL-safe characters, not guessable."""
    return random_id(16)


class Thread(models.Model):
    """A conversation: runs asked one after another, each given the earlier questions,
    answers and sources as context (`normagpt.threads`). It belongs to its user."""

    public_id = models.CharField(
        max_length=32, unique=True, default=run_public_id, editable=False,
        verbose_name=_("public id"),
    )  # fmt: skip
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        verbose_name=_("user"),
    )
    title = models.CharField(max_length=200, verbose_name=_("title"))  # its first question
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, db_index=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("thread")
        verbose_name_plural = _("threads")
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.title


class AgentRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        NEEDS_REVIEW = "needs_review", _("needs review")
        AWAITING_INPUT = "awaiting_input", _("awaiting your reply")
        COMPLETED = "completed", _("completed")
        FAILED = "failed", _("failed")

    FINISHED = (Status.COMPLETED, Status.FAILED)

    public_id = models.CharField(
        max_length=32, unique=True, default=run_public_id, editable=False,
        verbose_name=_("public id"),
    )  # fmt: skip
    question = models.TextField(verbose_name=_("question"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        verbose_name=_("user"),
    )
    thread = models.ForeignKey(
        Thread,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="runs",
        verbose_name=_("thread"),
    )
    status = models.CharField(
        max_length=14, choices=Status.choices, default=Status.QUEUED, verbose_name=_("status")
    )
    # the day the answer is for: the editions in force then, with their amendments to then
    as_of = models.DateField(null=True, blank=True, verbose_name=_("as of"))
    shared = models.JSONField(default=dict, blank=True, verbose_name=_("shared"))
    next_node = models.CharField(
        max_length=10, blank=True, default="planner", verbose_name=_("next node")
    )
    step_count = models.PositiveIntegerField(default=0, verbose_name=_("step count"))
    final_answer = models.TextField(blank=True, verbose_name=_("final answer"))
    answer = models.JSONField(
        default=dict, blank=True, verbose_name=_("answer")
    )  # conditions, questions, dropped sources
    sources = models.JSONField(default=list, blank=True, verbose_name=_("sources"))
    incomplete = models.BooleanField(default=False, verbose_name=_("incomplete"))
    incomplete_reason = models.CharField(
        max_length=300, blank=True, verbose_name=_("incomplete reason")
    )
    error = models.TextField(blank=True, verbose_name=_("error"))
    review_reason = models.TextField(blank=True, verbose_name=_("review reason"))
    review_note = models.TextField(blank=True, verbose_name=_("review note"))
    # the judge's questions to the asker while the run waits for the reply (awaiting_input)
    questions = models.JSONField(default=list, blank=True, verbose_name=_("questions"))
    asked_at = models.DateTimeField(null=True, blank=True, verbose_name=_("asked at"))
    llm_calls = models.PositiveIntegerField(default=0, verbose_name=_("llm calls"))
    prompt_tokens = models.PositiveIntegerField(default=0, verbose_name=_("prompt tokens"))
    completion_tokens = models.PositiveIntegerField(default=0, verbose_name=_("completion tokens"))
    cost_estimate = models.DecimalField(
        max_digits=12, decimal_places=6, default=0, verbose_name=_("cost estimate")
    )
    active_seconds = models.FloatField(default=0, verbose_name=_("active seconds"))
    # the lease: who advances the run now, renewed by a heartbeat while a node runs
    owner = models.CharField(max_length=64, blank=True, verbose_name=_("owner"))
    heartbeat_at = models.DateTimeField(null=True, blank=True, verbose_name=_("heartbeat at"))
    # waiting since then for the user's earlier runs (normagpt.turns), not for a worker
    turn_since = models.DateTimeField(
        null=True, blank=True, verbose_name=_("waiting its turn since")
    )
    created_at = models.DateTimeField(
        auto_now_add=True, db_index=True, verbose_name=_("created at")
    )
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("agent run")
        verbose_name_plural = _("agent runs")
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"]),
            models.Index(fields=["status", "asked_at"], name="agentrun_awaiting"),
        ]

    def __str__(self) -> str:
        return gettext("run %(id)s: %(question)s") % {
            "id": self.public_id,
            "question": self.question[:60],
        }

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class AgentStep(models.Model):
    """One finished node of a run: the checkpoint written with the run's shared store."""

    run = models.ForeignKey(
        AgentRun, on_delete=models.CASCADE, related_name="steps", verbose_name=_("run")
    )
    index = models.PositiveIntegerField(verbose_name=_("index"))
    node = models.CharField(max_length=10, verbose_name=_("node"))
    input_summary = models.TextField(blank=True, verbose_name=_("input summary"))
    output = models.JSONField(default=dict, blank=True, verbose_name=_("output"))
    decision = models.CharField(max_length=14, blank=True, verbose_name=_("decision"))
    duration = models.FloatField(default=0, verbose_name=_("duration"))
    prompt_tokens = models.PositiveIntegerField(default=0, verbose_name=_("prompt tokens"))
    completion_tokens = models.PositiveIntegerField(default=0, verbose_name=_("completion tokens"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("agent step")
        verbose_name_plural = _("agent steps")
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="agentstep_unique_index")
        ]
        ordering = ["run", "index"]

    def __str__(self) -> str:
        return gettext("run %(run)s #%(index)s %(node)s") % {
            "run": self.run_id,
            "index": self.index,
            "node": self.node,
        }


class RunEvent(models.Model):
    """Something that happened to a run besides its nodes: a takeover after its advancer
    died, a retried model call, a cap, a failure. Shown on the run's page, in the admin and
    over MCP."""

    class Kind(models.TextChoices):
        TAKEOVER = "takeover", _("taken over by another worker")
        RETRY = "retry", _("model request retried")
        CAP = "cap", _("limit reached")
        FAILED = "failed", _("failure")
        TURN = "turn", _("waiting its turn")

    run = models.ForeignKey(
        AgentRun, on_delete=models.CASCADE, related_name="events", verbose_name=_("run")
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, verbose_name=_("kind"))
    node = models.CharField(max_length=10, blank=True, verbose_name=_("node"))
    message = models.TextField(verbose_name=_("message"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("run event")
        verbose_name_plural = _("run events")
        ordering = ["run", "created_at", "id"]

    def __str__(self) -> str:
        return gettext("run %(run)s %(kind)s: %(message)s") % {
            "run": self.run_id,
            "kind": self.kind,
            "message": self.message[:60],
        }


class ClaimCheck(models.Model):
    """One claim of a run's answer (a sentence) checked against the clause it cites: every
    value with its unit and every quoted phrase must be in the clause's text."""

    class Verdict(models.TextChoices):
        CONFIRMED = "confirmed", _("confirmed")
        UNCONFIRMED = "unconfirmed", _("unconfirmed")

    class Origin(models.TextChoices):
        ANSWER = "answer", _("answer")
        FALLBACK = "fallback", _("answer without the model")
        FINDING = "finding", _("executor's quote")

    run = models.ForeignKey(
        AgentRun, on_delete=models.CASCADE, related_name="checks", verbose_name=_("run")
    )
    index = models.PositiveIntegerField(verbose_name=_("index"))
    origin = models.CharField(
        max_length=8, choices=Origin.choices, default=Origin.ANSWER, verbose_name=_("origin")
    )
    claim = models.TextField(verbose_name=_("claim"))
    reference = models.CharField(max_length=200, blank=True, verbose_name=_("reference"))
    document_code = models.CharField(max_length=100, blank=True, verbose_name=_("document"))
    clause_number = models.CharField(max_length=40, blank=True, verbose_name=_("clause"))
    page_number = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("page"))
    clause = models.ForeignKey(
        NormClause, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("norm clause"),
    )  # fmt: skip
    page = models.ForeignKey(
        NormPage, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("norm page"),
    )  # fmt: skip
    verdict = models.CharField(max_length=12, choices=Verdict.choices, verbose_name=_("verdict"))
    reason = models.TextField(blank=True, verbose_name=_("reason"))
    details = models.JSONField(default=dict, blank=True, verbose_name=_("details"))

    class Meta:
        verbose_name = _("claim check")
        verbose_name_plural = _("claim checks")
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="claimcheck_unique_index")
        ]
        ordering = ["run", "index"]

    def __str__(self) -> str:
        return gettext("run %(run)s claim %(index)s: %(verdict)s") % {
            "run": self.run_id,
            "index": self.index,
            "verdict": self.verdict,
        }


class LlmCall(models.Model):
    """One request to the model, recorded when it returns (or fails)."""

    run = models.ForeignKey(
        AgentRun,
        on_delete=models.CASCADE,
        related_name="llm_call_log",
        null=True,
        blank=True,
        verbose_name=_("run"),
    )
    node = models.CharField(max_length=10, verbose_name=_("node"))
    step_index = models.PositiveIntegerField(default=0, verbose_name=_("step index"))
    model = models.CharField(max_length=100, blank=True, verbose_name=_("model"))
    ok = models.BooleanField(default=True, verbose_name=_("ok"))
    error = models.CharField(max_length=500, blank=True, verbose_name=_("error"))
    prompt_tokens = models.PositiveIntegerField(default=0, verbose_name=_("prompt tokens"))
    completion_tokens = models.PositiveIntegerField(default=0, verbose_name=_("completion tokens"))
    duration = models.FloatField(default=0, verbose_name=_("duration"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("LLM call")
        verbose_name_plural = _("LLM calls")
        ordering = ["id"]

    def __str__(self) -> str:
        return gettext("%(node)s call (%(prompt)s+%(completion)s tokens)") % {
            "node": self.node,
            "prompt": self.prompt_tokens,
            "completion": self.completion_tokens,
        }


class ReviewQueueRun(AgentRun):
    """Runs waiting for a person's review (the admin's review queue)."""

    class Meta:
        verbose_name = _("run waiting for review")
        verbose_name_plural = _("review queue")
        proxy = True
