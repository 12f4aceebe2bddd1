"""Pages and probes of the project itself: the home page and /healthz."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core.health import health_report
from core.mcp_http import MCP_PATH
from core.mcp_server import load_registries


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """What the hub is, each service with its tools, and how to connect an MCP client."""
    desktop_config = {"mcpServers": {"tool-hub": desktop_command()}}
    registries = load_registries()
    return render(
        request,
        "home.html",
        {
            "registries": registries,
            "tool_count": sum(len(registry.specs) for registry in registries),
            "desktop_config": json.dumps(desktop_config, ensure_ascii=False, indent=2),
            "mcp_url": request.build_absolute_uri(MCP_PATH),
            "mcp_token_required": bool(settings.MCP_HTTP_TOKEN) or not settings.DEBUG,
        },
    )


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when every component is up; 503 naming what is down."""
    checks = health_report()
    down = [check.name for check in checks if not check.ok]
    body = {
        "status": "ok" if not down else "unavailable",
        "down": down,
        "checks": {check.name: {"ok": check.ok, "detail": check.detail} for check in checks},
    }
    return JsonResponse(body, status=503 if down else 200)


def desktop_command() -> dict[str, object]:
    """How a desktop client launches this installation: the checkout's venv and manage.py,
    or the installed `tool-hub` command (its full path: clients start with a short PATH)."""
    if settings.CHECKOUT:
        base = settings.BASE_DIR
        venv_python = base / ".venv" / "bin" / "python"
        python = venv_python if venv_python.exists() else Path(sys.executable)
        return {"command": str(python), "args": [str(base / "manage.py"), "runmcp"]}
    installed = Path(sys.executable).with_name("tool-hub")
    command = str(installed) if installed.exists() else shutil.which("tool-hub") or "tool-hub"
    return {"command": command, "args": ["mcp"]}
