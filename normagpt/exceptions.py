"""Errors of the norms agent, on the project's DomainError hierarchy."""

from __future__ import annotations

from typing import Any

from core.exceptions import (
    Conflict,
    DomainError,
    InvalidInput,
    NotConfigured,
    NotFound,
    UpstreamError,
)

LLM_SERVICE = "the language model (OPENAI_BASE_URL)"


class DocumentNotFound(NotFound):
    code = "document_not_found"


class PageNotFound(NotFound):
    code = "page_not_found"


class RunNotFound(NotFound):
    code = "run_not_found"


class ThreadNotFound(NotFound):
    """The thread named by `thread` does not exist, or is another user's."""

    code = "thread_not_found"


class RunNotResumable(Conflict):
    """Only a run waiting for review can be resumed."""

    code = "run_not_resumable"


class RunNotAwaitingInput(Conflict):
    """Only a run that asked the asker a question takes a reply."""

    code = "run_not_awaiting_input"


class RunNotYours(DomainError):
    """Only the run's owner answers its questions: staff may read and resume another's run,
    not speak for its asker."""

    code = "run_not_yours"
    http_status = 403


class BadPdf(InvalidInput):
    """The file is not a PDF pypdfium2 can read, or is over the ingestion's limits."""

    code = "bad_pdf"


class IngestRunning(Conflict):
    """Another live process ingests the document (it holds the ingestion's lease)."""

    code = "ingest_running"


class IngestLost(Conflict):
    """An ingestion's lease was taken from it (by the recovery sweep, or another process
    after its heartbeat lapsed): it stops, leaving its rendered pages to the next start."""

    code = "ingest_lost"


class LlmNotConfigured(NotConfigured):
    code = "llm_not_configured"


class LlmUnavailable(UpstreamError):
    """The model server failed, timed out or refused us after the bounded retries."""

    code = "llm_unavailable"

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, service=LLM_SERVICE, **kwargs)
