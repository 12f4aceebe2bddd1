"""Errors of the Anki bridge, on the project's DomainError hierarchy."""

from __future__ import annotations

from typing import Any

from core.exceptions import NotConfigured, NotFound, UpstreamError

ANKI = "Anki"
SEARCH = "search API"


class AnkiUnavailable(UpstreamError):
    """Anki is closed, has no AnkiConnect, or did not answer in time (retryable)."""

    code = "anki_unavailable"
    http_status = 503

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, service=ANKI, **kwargs)


class AnkiError(UpstreamError):
    """Anki answered, but refused the request or answered something unexpected."""

    code = "anki_error"
    retryable = False

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, service=ANKI, **kwargs)


class AnkiRefused(AnkiError):
    """Anki refused something a batch of notes needs (its deck, its model): they fail."""

    code = "anki_refused"


class AnkiModelNotFound(NotFound):
    code = "anki_model_not_found"


class SearchNotConfigured(NotConfigured):
    code = "search_not_configured"


class SearchUnavailable(UpstreamError):
    code = "search_unavailable"

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, service=SEARCH, **kwargs)
