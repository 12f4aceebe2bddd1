"""The one error hierarchy every app raises and every adapter maps.

Services raise these; the DRF exception handler, the MCP adapter, admin actions, Celery
tasks and management commands each translate them in exactly one place.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """An expected failure with a message a caller (person or model) can act on."""

    code = "error"
    http_status = 400
    retryable = False

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class InvalidInput(DomainError):
    """Input broke a rule; the message names the field and the rule."""

    code = "invalid_input"
    http_status = 400

    def __init__(self, message: str, *, field: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.field = field
        if field is not None:
            self.extra.setdefault("field", field)


class NotFound(DomainError):
    code = "not_found"
    http_status = 404


class Conflict(DomainError):
    code = "conflict"
    http_status = 409


class NotConfigured(DomainError):
    """A service needs a setting that is not set; the message names the setting."""

    code = "not_configured"
    http_status = 503


class UpstreamError(DomainError):
    """An outside service failed; the message names the service. Worth retrying."""

    code = "upstream_error"
    http_status = 502
    retryable = True

    def __init__(self, message: str, *, service: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.service = service
        self.extra.setdefault("service", service)
