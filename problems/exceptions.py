"""Errors of the problems app, on the project's DomainError hierarchy."""

from __future__ import annotations

from typing import Any

from core.exceptions import InvalidInput, NotFound, UpstreamError

SERVICE = "СДАМ ГИА"


class InvalidSubject(InvalidInput):
    code = "invalid_subject"


class ProblemNotFound(NotFound):
    code = "problem_not_found"


class SdamgiaUnavailable(UpstreamError):
    """The site could not be reached or answered with an error (retryable)."""

    code = "sdamgia_unavailable"

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, service=SERVICE, **kwargs)


class SdamgiaBlocked(SdamgiaUnavailable):
    """The site refused us (403 or a challenge page): not retried, never parsed as data."""

    code = "sdamgia_blocked"
    http_status = 503
    retryable = False


class SdamgiaBadPage(SdamgiaUnavailable):
    """The site answered, but not with the page structure we know."""

    code = "sdamgia_bad_page"
    retryable = False

    @classmethod
    def unreadable(cls, site: str, page: str, reason: object) -> SdamgiaBadPage:
        """The page `page` of `site` (its label) could not be read as one: `reason`."""
        return cls(
            f"the {page} of {site}.sdamgia.ru cannot be read ({reason}); nothing was stored",
            extra={"site": site, "page": page},
        )
