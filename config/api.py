"""Project-level API: the root, the MCP tool catalog, and the one exception handler."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from config.exceptions import DomainError
from config.mcp_server import tool_specs

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


class McpToolSerializer(serializers.Serializer):
    name = serializers.CharField()
    app = serializers.CharField()
    title = serializers.CharField(allow_null=True)
    description = serializers.CharField()
    read_only = serializers.BooleanField()  # type: ignore[assignment]
    idempotent = serializers.BooleanField()
    open_world = serializers.BooleanField()
    destructive = serializers.BooleanField()


class ApiRootApi(APIView):
    """The API's entry points."""

    permission_classes = (AllowAny,)

    @extend_schema(
        responses=inline_serializer(
            "ApiRoot", {"links": serializers.DictField(child=serializers.URLField())}
        )
    )
    def get(self, request: Request) -> Response:
        links = {
            name: reverse(view, request=request)
            for name, view in [
                ("schema", "api-schema"),
                ("docs", "api-docs"),
                ("mcp_tools", "api-mcp-tools"),
                ("token", "api-token"),
                ("health", "healthz"),
            ]
        }
        return Response({"links": links})


class McpToolListApi(APIView):
    """Every MCP tool the server exposes, with its behaviour hints."""

    permission_classes = (AllowAny,)

    @extend_schema(responses={200: McpToolSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(McpToolSerializer(tool_specs(), many=True).data)
