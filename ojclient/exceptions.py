"""Errors of the online-judge client, on the project's DomainError hierarchy.

The contract (seed 003 and its companion rules) fixes the exact text of most of them: the
messages below are what the model reads, so they are kept verbatim — after the name of
the service that failed («OJ API: [500] …», «OJ API: invalid JSON: …»), which a failure
of an outside service always names.
"""

from __future__ import annotations

from typing import Any

from core.exceptions import InvalidInput, NotConfigured, NotFound, UpstreamError

SERVICE = "OJ API"


class OjInvalidInput(InvalidInput):
    """A tool argument broke a rule; raised before any request is made."""

    code = "oj_invalid_input"


class OjNotConfigured(NotConfigured):
    code = "oj_not_configured"


class OjProblemNotFound(NotFound):
    code = "oj_problem_not_found"


class OjUpstreamError(UpstreamError):
    """The OJ API failed or answered something we cannot use."""

    code = "oj_upstream_error"

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, service=SERVICE, **kwargs)


class OjRequestFailed(OjUpstreamError):
    """No answer at all: connection refused, DNS, timeout, too many redirects, too large."""

    code = "oj_request_failed"


class OjHttpError(OjUpstreamError):
    """An answer with a status other than 200 (or 202 where that is expected)."""

    code = "oj_http_error"

    def __init__(self, message: str, *, status: int, **kwargs: Any) -> None:
        super().__init__(f"{SERVICE}: {message}", **kwargs)
        self.status = status
        self.extra.setdefault("status", status)
        if status < 500:
            # The API judged the request itself: a 4xx is the caller's to fix, not ours.
            self.http_status = status if status in (400, 401, 403, 404, 409, 422, 429) else 400
            self.retryable = status == 429


class OjBadResponse(OjUpstreamError):
    """A 200 whose body is not JSON, or JSON of the wrong shape."""

    code = "oj_bad_response"
    retryable = False

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(f"{SERVICE}: {message}", **kwargs)
