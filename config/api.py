"""Project-level API: the root and the MCP tool catalog."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView, get_view_name

from core.mcp_server import tool_specs


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
    """The API's entry points: its schema and docs, and every app's endpoints (the rest are
    in the schema)."""

    permission_classes = (AllowAny,)
    name = _("Tool hub API")  # the page's title (the class name would read "Api Root Api")
    # What the browsable page says of it, in the page's language (the docstring would not).
    description = _(
        "The API's entry points: its schema and docs, and every app's endpoints (the rest "
        "are in the schema)."
    )

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
                ("problems", "problems:problem-list"),
                ("anki_notes", "anki_bridge:notes"),
                ("oj_daily", "ojclient:daily"),
                ("oj_stored_problems", "ojclient:stored-problems"),
                ("normagpt_runs", "normagpt_api:run-list"),
            ]
        }
        return Response({"links": links})


class McpToolListApi(APIView):
    """Every MCP tool the server exposes, with its behaviour hints."""

    permission_classes = (AllowAny,)
    name = _("MCP tools")
    description = _("Every MCP tool the server exposes, with its behaviour hints.")

    @extend_schema(responses={200: McpToolSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(McpToolSerializer(tool_specs(), many=True).data)


def view_name(view: Any) -> str:
    """The browsable API's title of a view, in the page's language: its `name` when it has
    one, else its class name as words without the `Api` suffix («VariantDetailApi» →
    "Variant detail" → «Составленный вариант»), through the project's catalog (config/locale)."""
    if getattr(view, "name", None):
        return str(view.name)
    words = get_view_name(view).removesuffix(" Api")
    return pgettext("API view", words[:1] + words[1:].lower())
