"""WSGI entry point (pages and API only; MCP over HTTP needs the ASGI app)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

from normagpt.recovery import serving_process_start  # noqa: E402

serving_process_start()  # no broker: this process advances runs, and resumes its own
