"""ASGI entry point: one process serves the pages, the REST API and MCP at /mcp.

The MCP session manager needs the ASGI lifespan, which Django does not speak, so the
outer app is the SDK's Starlette app with Django mounted beneath it at `/`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from django.core.asgi import get_asgi_application

from config.startup import collector_paused

if TYPE_CHECKING:
    from starlette.types import ASGIApp

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def build_application() -> ASGIApp:
    """Django set up and mounted beneath the MCP app (each imported here: `application` is
    built with the collector paused, config/startup.py)."""
    django_application = get_asgi_application()

    from django.conf import settings
    from starlette.routing import Mount

    from core.mcp_http import mcp_http_app
    from core.mcp_server import build_server

    app = mcp_http_app(
        build_server(stateless=settings.MCP_HTTP_STATELESS),
        allowed_hosts=settings.ALLOWED_HOSTS,
        # In production the bind address is the proxy's business: no token, no MCP.
        token_required=not settings.DEBUG,
    )
    app.router.routes.append(Mount("/", app=cast("ASGIApp", django_application)))
    return app


with collector_paused():
    application = build_application()

from core.serving import serving_started  # noqa: E402

serving_started()  # what the apps start in a serving process (normagpt: its run sweeper)
