"""`manage.py runmcp`: serve every app's tools over MCP (stdio, or streamable HTTP)."""

from __future__ import annotations

import gc
import logging
from typing import Any

import anyio
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.database import database_migrated
from config.startup import collector_paused
from core import stdio_early
from core.holders import exit_on_signals
from core.mcp_server import build_server, load_registries, tool_specs
from core.registry import ToolRegistry
from core.stdio import stdout_to_stderr
from core.stdio_transport import serve_stdio

logger = logging.getLogger(__name__)

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
SETTINGS_CHECKS = ["core", "ojclient", "caches"]


GC_YOUNG = 10_000  # net container allocations between two young collections (default 700)


class Command(BaseCommand):
    help = "Serve the project's tools over MCP: stdio (default) or streamable HTTP at /mcp."
    # Checked in handle(), after the command-line overrides of settings are applied.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
        parser.add_argument("--host", default=settings.MCP_HTTP_HOST, help="HTTP bind address.")
        parser.add_argument(
            "--port",
            type=int,
            default=settings.MCP_HTTP_PORT,
            help="HTTP port (default %(default)s; 8765 is AnkiConnect's).",
        )
        parser.add_argument(
            "--apps",
            default="",
            help="Comma-separated app labels to expose (default: all), e.g. problems,ojclient.",
        )
        parser.add_argument("--list", action="store_true", help="Print the tool table and exit.")
        parser.add_argument(
            "--write-catalog",
            action="store_true",
            help="Record the answers to initialize and tools/list given while the server "
            "starts (core/mcp_catalog.json; `make catalog`) and exit.",
        )
        for registry in load_registries():
            for option in registry.options:
                parser.add_argument(option.flag, dest=option.dest, default=None, help=option.help)

    def handle(self, *args: Any, **options: Any) -> None:
        # DEBUG is for the development pages: with it Django renders every SQL statement
        # (a fifth of a cached call's CPU), which a tool server never shows anyone.
        settings.DEBUG = False
        apps = [app.strip() for app in options["apps"].split(",") if app.strip()] or None
        logging.captureWarnings(True)
        if options["write_catalog"]:
            from core.mcp_catalog import catalog_write

            self.stdout.write(f"wrote {catalog_write()}")
            return
        early = stdio_early.current()
        try:
            served = self._prepared(apps, options)
        except CommandError as exc:
            if early is not None:
                # The client may have its `initialize` answer: each request it sends now
                # is answered with the reason, until it closes stdin; then exit 1.
                logger.error("%s", exc)
                early.refuse(str(exc))
            raise
        # What start-up made lives as long as the process: frozen out of the collector's
        # sight, it is no longer walked by each full collection (the first came during the
        # first tool call: +0.13 s). Not collected first: that would cost start-up 0.09 s.
        gc.freeze()
        # A call allocates thousands of short-lived containers (rows, model instances, the
        # answer's dicts): at the default 700 the young generation is walked several times a
        # call (0.3 M instructions of a norms search); most of them are gone by refcount
        # before a collection every GC_YOUNG allocations sees them.
        gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
        try:
            if options["list"]:
                self._print_table(apps)
                return
            if options["transport"] == "stdio":
                logger.info("MCP server on stdio (apps: %s)", ", ".join(apps or ["all"]))
                exit_on_signals()  # stopped by its client: leases go as on an exit
                with collector_paused():  # the tools' models: made once, kept (config/startup.py)
                    server = build_server(apps, lifespan=stdout_to_stderr)
                if early is not None and early.tools_listed:
                    catalog_compare(early, served)
                anyio.run(serve_stdio, server, early)
            else:
                self._serve_http(apps, host=options["host"], port=options["port"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

    def _prepared(self, apps: list[str] | None, options: dict[str, Any]) -> list[ToolRegistry]:
        """Settings applied and checked, the embedded database migrated, each served app
        ready: the registries served."""
        try:
            served = load_registries(apps)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        for registry in load_registries():
            for option in registry.options:
                if options[option.dest] is not None:
                    setattr(settings, option.setting, options[option.dest])
        # A malformed setting (SITE_URL, OJ_API_BASE_URL, ...) stops start-up with exit
        # code 1. Only the settings checks: the URL, model and admin checks (run by the web
        # process and `manage.py check`) would import every view and DRF for nothing.
        self.check(tags=SETTINGS_CHECKS, display_num_errors=False)
        if not options["list"] and database_migrated(self.stderr):
            # A new embedded database (a first start): the sample norms, as `make run`
            # and `tool-hub serve` give one, so that every tool has something to show.
            call_command("normagpt_demo", "--if-empty", stdout=self.stderr)
        for registry in served:
            if registry.on_serve is not None and not options["list"]:
                registry.on_serve()
        return served

    def _serve_http(self, apps: list[str] | None, *, host: str, port: int) -> None:
        import uvicorn  # the HTTP transport's own: a stdio server never loads it

        from core.mcp_http import MCP_PATH, is_loopback, mcp_http_app

        # Beyond loopback every request needs a token: a user's API token, or the shared
        # MCP_HTTP_TOKEN when set (a deployment of users' tokens needs no shared one).
        open_to_others = not is_loopback(host)
        allowed = [*settings.ALLOWED_HOSTS, host] if open_to_others else LOOPBACK_HOSTS
        with collector_paused():
            server = build_server(apps, stateless=settings.MCP_HTTP_STATELESS)
        app = mcp_http_app(server, allowed_hosts=allowed, token_required=open_to_others)
        display = f"[{host}]" if ":" in host else host
        if settings.MCP_HTTP_TOKEN:
            tokens = "required: MCP_HTTP_TOKEN or a user's API token"
        elif open_to_others:
            tokens = "required: a user's API token (no MCP_HTTP_TOKEN)"
        else:
            tokens = "not required on loopback"
        logger.info("MCP server on http://%s:%s%s (token: %s)", display, port, MCP_PATH, tokens)
        uvicorn.run(app, host=host, port=port, log_config=None, access_log=False)

    def _print_table(self, apps: list[str] | None) -> None:
        specs = tool_specs(apps)
        rows = [("tool", "app", "hints", "description")]
        for spec in specs:
            hints = ",".join(
                hint
                for hint, on in (
                    ("read-only", spec.read_only),
                    ("idempotent", spec.idempotent),
                    ("open-world", spec.open_world),
                    ("destructive", spec.destructive),
                )
                if on
            )
            rows.append((spec.name, spec.app, hints or "-", spec.summary))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            self.stdout.write(
                "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
                + "  "
                + row[3]
            )
        self.stdout.write(f"\n{len(specs)} tool(s)")


def catalog_compare(early: stdio_early.Early, served: list[ToolRegistry]) -> None:
    """The tools the client was shown early are the tools served (core/stdio_early.py):
    a catalog left behind by a change of the code is reported, naming the fix."""
    shown = [tool["name"] for tool in early.tools]
    serving = [spec.name for registry in served for spec in registry.specs]
    if shown != serving:
        logger.error(
            "the tools listed while starting (core/mcp_catalog.json) are not the tools "
            "served: run `make catalog` (listed %s, served %s)",
            shown,
            serving,
        )
