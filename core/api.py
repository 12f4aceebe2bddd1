"""The REST error shape: every API error as `{"code", "message", "extra"}`."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.exceptions import DomainError

logger = logging.getLogger(__name__)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every API error as `{"code", "message", "extra"}` with its HTTP status."""
    if isinstance(exc, DomainError):
        return Response(
            {"code": exc.code, "message": exc.message, "extra": exc.extra}, status=exc.http_status
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # Django's 500 handling: logged with its traceback, no details shown
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
