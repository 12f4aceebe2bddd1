"""The REST error shape: every API error as `{"code", "message", "extra"}`.

`exception_handler` maps what a DRF view raises; `api_limits_middleware` refuses a URL
no view should see (an over-long query string, a NUL) and puts every other error answered
under /api/ (no such URL, a bad Host, a crash in a middleware) in the same shape, so no
caller ever sees an HTML page or a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.decorators import sync_and_async_middleware
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.exceptions import DomainError, InvalidInput
from core.parsers import RequestTooLarge

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
# The code of an error answered outside a DRF view, by status.
STATUS_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    414: "uri_too_long",
    429: "throttled",
}
# Headers an error response keeps when it is rewritten into the shape.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every API error as `{"code", "message", "extra"}` with its HTTP status."""
    if isinstance(exc, SuspiciousOperation):
        exc = _request_error(exc)
    if isinstance(exc, exceptions.ParseError):
        exc = InvalidInput(f"request body: {exc.detail}", extra={"rule": "parse"})
    if isinstance(exc, DomainError):
        return Response(
            {"code": exc.code, "message": exc.message, "extra": exc.extra}, status=exc.http_status
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # Django's 500 handling logs the traceback; the middleware hides it
    if isinstance(exc, exceptions.APIException):
        detail = exc.detail
        message = detail if isinstance(detail, str) else _first_message(detail)
        response.data = {
            "code": getattr(exc, "default_code", "error"),
            "message": str(message),
            "extra": {} if isinstance(detail, str) else {"fields": response.data},
        }
        if isinstance(exc, exceptions.ValidationError):
            response.data["code"] = "invalid_input"
    return response


def _request_error(exc: SuspiciousOperation) -> DomainError:
    """Django's refusals of a request (limits, malformed input) as domain errors."""
    if isinstance(exc, RequestDataTooBig):
        return RequestTooLarge.over_limit()
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return InvalidInput(f"more than {limit} parameters", extra={"rule": "max_fields"})
    if isinstance(exc, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return InvalidInput(f"more than {limit} files", extra={"rule": "max_files"})
    logger.warning("refused a request: %s", exc)
    return InvalidInput("the request is malformed", extra={"rule": "request"})


@sync_and_async_middleware
def api_limits_middleware(
    get_response: Callable[[HttpRequest], Any],
) -> Callable[[HttpRequest], Any]:
    """Refuse an over-long query string (414) or a NUL in the URL (400); serve an /api/ URL
    asked without its trailing slash as with it; give /api/ errors the one JSON shape."""
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponseBase:
            refused = _refuse_url(request)
            if refused is not None:
                return refused
            _slash_added(request)
            return _in_shape(request, await get_response(request))

        return markcoroutinefunction(async_middleware)

    def middleware(request: HttpRequest) -> HttpResponseBase:
        refused = _refuse_url(request)
        if refused is not None:
            return refused
        _slash_added(request)
        return _in_shape(request, get_response(request))

    return middleware


def _slash_added(request: HttpRequest) -> None:
    """An /api/ path that names an endpoint once a slash is added is that endpoint. Django
    would redirect it (301, or a 500 for a POST under DEBUG), and a client following the
    redirect sends its POST again as a GET: the note or run it meant was never made."""
    path = request.path_info
    if not request.path.startswith(API_PREFIX) or path.endswith("/"):
        return
    urlconf = getattr(request, "urlconf", None)
    try:
        resolve(path, urlconf)
        return  # it names something as it is
    except Resolver404:
        pass
    try:
        resolve(path + "/", urlconf)
    except Resolver404:
        return
    request.path_info, request.path = path + "/", request.path + "/"


def _refuse_url(request: HttpRequest) -> HttpResponse | None:
    """414 for an over-long query string; 400 for a NUL in the URL (PostgreSQL refuses it
    in any text it is compared with, a 500 in whatever view filters on it)."""
    query = request.META.get("QUERY_STRING", "")
    limit = settings.MAX_QUERY_STRING_BYTES
    if len(query) > limit:
        message = f"the query string is longer than {limit} bytes"
        return _refusal(request, 414, message, limit=limit)
    if "%00" in query or "\x00" in query or "\x00" in request.path:
        return _refusal(request, 400, "the URL contains a NUL character (%00)", rule="url_nul")
    return None


def _refusal(request: HttpRequest, status: int, message: str, **extra: Any) -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        return _error(status, message, extra, code="invalid_input" if status == 400 else None)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


def _in_shape(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """An error answered under /api/ outside the exception handler, rewritten into the shape."""
    if (
        response.status_code < 400
        or not request.path.startswith(API_PREFIX)
        or isinstance(response, Response)  # the handler's, as JSON or the browsable API's page
        or "json" in response.get("Content-Type", "")
    ):
        return response
    status = response.status_code
    try:
        message = HTTPStatus(status).phrase
    except ValueError:
        message = "error"
    error = _error(status, message)
    for header in KEPT_HEADERS:
        if header in response:
            error[header] = response[header]
    return error


def _error(
    status: int, message: str, extra: dict[str, Any] | None = None, code: str | None = None
) -> JsonResponse:
    code = code or STATUS_CODES.get(status, "server_error" if status >= 500 else "error")
    return JsonResponse({"code": code, "message": message, "extra": extra or {}}, status=status)


def _first_message(detail: Any, path: str = "") -> str:
    """`field: message` for the first error in a nested DRF error structure."""
    if isinstance(detail, dict):
        key, value = next(iter(detail.items()))
        return _first_message(value, f"{path}.{key}" if path else str(key))
    if isinstance(detail, list) and detail:
        return _first_message(detail[0], path)
    return f"{path}: {detail}" if path and path != "non_field_errors" else str(detail)


class ErrorSerializer(serializers.Serializer):
    """The shape of every API error."""

    code = serializers.CharField()
    message = serializers.CharField()
    extra = serializers.DictField()
