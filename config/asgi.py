"""ASGI entry point: one process serves the pages, the REST API and MCP at /mcp.

The MCP session manager needs the ASGI lifespan, which Django does not speak, so the
outer app is the SDK's Starlette app with Django mounted beneath it at `/`.
"""

from __future__ import annotations

import os
from typing import cast

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from django.conf import settings  # noqa: E402 (after Django is set up)
from starlette.routing import Mount  # noqa: E402
from starlette.types import ASGIApp  # noqa: E402

from core.mcp_http import mcp_http_app  # noqa: E402
from core.mcp_server import build_server  # noqa: E402


def build_application() -> ASGIApp:
    app = mcp_http_app(
        build_server(stateless=settings.MCP_HTTP_STATELESS),
        allowed_hosts=settings.ALLOWED_HOSTS,
        # In production the bind address is the proxy's business: no token, no MCP.
        token_required=not settings.DEBUG,
    )
    app.router.routes.append(Mount("/", app=cast(ASGIApp, django_application)))
    return app


application = build_application()

from core.serving import serving_started  # noqa: E402

serving_started()  # what the apps start in a serving process (normagpt: its run sweeper)
