"""The norms corpus (documents and their pages) and the agent's runs with their checkpoints.

A run's `shared` JSON is the agent's shared store; it is written together with an
`AgentStep` after every node (the checkpoint), so a run resumes from its last finished node.
Every LLM request is recorded in `LlmCall` the moment it returns, finished node or not.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

# Served back at MEDIA_URL + this prefix by normagpt.views.document_file.
DOCUMENT_UPLOAD_TO = "normagpt/documents/"


class NormDocument(models.Model):
    class Kind(models.TextChoices):
        GOST = "gost", "ГОСТ"
        SP = "sp", "СП"
        SNIP = "snip", "СНиП"
        OTHER = "other", "other"

    class Status(models.TextChoices):
        IN_FORCE = "in_force", "in force"
        REPLACED = "replaced", "replaced"

    class Ingest(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    code = models.CharField(max_length=100, unique=True, help_text="e.g. СП 63.13330.2018")
    # casefolded, spaces removed: how codes named by people and models are matched
    code_key = models.CharField(max_length=100, unique=True, editable=False)
    title = models.CharField(max_length=500)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.OTHER)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.IN_FORCE)
    replaced_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replaces"
    )
    file = models.FileField(upload_to=DOCUMENT_UPLOAD_TO, blank=True)
    is_sample = models.BooleanField(default=False, help_text="demo corpus, not a real norm")
    ingest_status = models.CharField(max_length=8, choices=Ingest.choices, default=Ingest.PENDING)
    ingest_error = models.TextField(blank=True)
    page_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return self.code

    def save(self, *args: object, **kwargs: object) -> None:
        from normagpt.parsing import code_key

        self.code_key = code_key(self.code)
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class NormPage(models.Model):
    document = models.ForeignKey(NormDocument, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField(help_text="1-based page number in the file")
    text = models.TextField(blank=True)
    image = models.FileField(upload_to="normagpt/pages/", blank=True)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    clauses = models.JSONField(default=list, blank=True, help_text="clause numbers on the page")
    has_text_layer = models.BooleanField(default=True)
    ocr = models.BooleanField(default=False, help_text="text recognised by tesseract")
    # code, title and text, ё→е: what full-text search indexes (GIN on PostgreSQL, FTS5 on SQLite)
    search_text = models.TextField(blank=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="normpage_unique_number")
        ]
        ordering = ["document", "number"]

    def __str__(self) -> str:
        return f"{self.document.code}, p. {self.number}"


class AgentRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        NEEDS_REVIEW = "needs_review", "needs review"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"

    FINISHED = (Status.COMPLETED, Status.FAILED)

    question = models.TextField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.QUEUED)
    shared = models.JSONField(default=dict, blank=True)
    next_node = models.CharField(max_length=10, blank=True, default="planner")
    step_count = models.PositiveIntegerField(default=0)
    final_answer = models.TextField(blank=True)
    answer = models.JSONField(default=dict, blank=True)  # conditions, questions, dropped sources
    sources = models.JSONField(default=list, blank=True)
    incomplete = models.BooleanField(default=False)
    incomplete_reason = models.CharField(max_length=300, blank=True)
    error = models.TextField(blank=True)
    review_reason = models.TextField(blank=True)
    review_note = models.TextField(blank=True)
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_estimate = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    active_seconds = models.FloatField(default=0)
    # the lease: who advances the run now, renewed by a heartbeat while a node runs
    owner = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.question[:60]}"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class AgentStep(models.Model):
    """One finished node of a run: the checkpoint written with the run's shared store."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    node = models.CharField(max_length=10)
    input_summary = models.TextField(blank=True)
    output = models.JSONField(default=dict, blank=True)
    decision = models.CharField(max_length=14, blank=True)
    duration = models.FloatField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="agentstep_unique_index")
        ]
        ordering = ["run", "index"]

    def __str__(self) -> str:
        return f"run {self.run_id} #{self.index} {self.node}"


class RunEvent(models.Model):
    """Something that happened to a run besides its nodes: a takeover after its advancer
    died, a retried model call, a cap, a failure. Shown on the run's page, in the admin and
    over MCP."""

    class Kind(models.TextChoices):
        TAKEOVER = "takeover", "взят другим исполнителем"
        RETRY = "retry", "повтор запроса к модели"
        CAP = "cap", "достигнут предел"
        FAILED = "failed", "сбой"

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    node = models.CharField(max_length=10, blank=True)
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "created_at", "id"]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.kind}: {self.message[:60]}"


class LlmCall(models.Model):
    """One request to the model, recorded when it returns (or fails)."""

    run = models.ForeignKey(
        AgentRun, on_delete=models.CASCADE, related_name="llm_call_log", null=True, blank=True
    )
    node = models.CharField(max_length=10)
    step_index = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=100, blank=True)
    ok = models.BooleanField(default=True)
    error = models.CharField(max_length=500, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    duration = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.node} call ({self.prompt_tokens}+{self.completion_tokens} tokens)"


class ReviewQueueRun(AgentRun):
    """Runs waiting for a person's review (the admin's review queue)."""

    class Meta:
        proxy = True
        verbose_name = "run waiting for review"
        verbose_name_plural = "review queue"
