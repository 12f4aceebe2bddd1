"""`manage.py serve`: the web app (pages, admin, REST, MCP over HTTP) under uvicorn, as
production runs it.

- The embedded database (SQLite) is migrated first, and a fresh one gets the sample norms;
  a server database with migrations pending is refused, naming the command.
- The static files are collected first (hashed, compressed: far-future caching), unless
  `--no-collectstatic`; without them the pages still work (`core.static`).
- uvicorn's own proxy-header handling is off: it would take the client's address from
  X-Forwarded-For sent by any local process (its default trusts 127.0.0.1), and let it
  slip past the API throttles. Django decides instead, from `DJANGO_BEHIND_PROXY`: only
  a listed proxy names the client (`core.throttling`) and the scheme.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from config.database import database_migrated


class Command(BaseCommand):
    help = "Serve pages, admin, REST and MCP over HTTP with uvicorn (production)."
    requires_system_checks: list[str] = []  # the ASGI app runs them in each worker

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers",
            type=int,
            default=int(os.environ.get("WEB_CONCURRENCY", "1")),
            help="worker processes (default: WEB_CONCURRENCY or 1)",
        )
        parser.add_argument(
            "--no-collectstatic",
            action="store_true",
            help="serve the static files from the apps (unhashed) instead of collecting them",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        import uvicorn  # only this command serves HTTP this way

        # The embedded database is migrated (a fresh data directory gets the sample norms,
        # as `make run` gives a fresh checkout); a server database must be migrated first.
        database_migrated(self.stderr)
        if connection.vendor == "sqlite":
            call_command("normagpt_demo", "--if-empty", stdout=self.stdout)
        if not options["no_collectstatic"]:
            call_command("collectstatic", interactive=False, verbosity=0)
        self.stdout.write(
            f"Serving on http://{options['host']}:{options['port']}/ "
            f"({options['workers']} worker(s)); links name {settings.SITE_URL}"
        )
        uvicorn.run(
            "config.asgi:application",
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            proxy_headers=False,
            server_header=False,
            log_config=None,
        )
