"""WSGI entry point (pages and API only; MCP over HTTP needs the ASGI app)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

from core.serving import serving_started  # noqa: E402

serving_started()  # what the apps start in a serving process (normagpt: its run sweeper)
