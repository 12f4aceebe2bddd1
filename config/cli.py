"""`tool-hub`: the project's one command once installed as a package, and `manage.py`'s body.

    tool-hub serve | mcp | mcp-http | worker | beat | migrate | superuser | crawl | ingest
             | flush | <any manage.py command> [options]

`pip install tool-hub…` or `uvx --from <wheel, checkout or git URL> tool-hub mcp` gives it.
Outside a checkout the embedded database, uploads and `.env` live in the user's data
directory (config/settings.py: DATA_DIR); in a checkout, `make run` and `make mcp` remain
the way in.
"""

from __future__ import annotations

import os
import sys

from config.startup import collector_paused

# The short names, each a manage.py command with its options.
SHORT = {
    "serve": (["serve"], "pages, admin, REST and MCP over HTTP (migrates the embedded database)"),
    "mcp": (["runmcp"], "the MCP server on stdio: what a desktop client launches"),
    "mcp-http": (["runmcp", "--transport", "http"], "the MCP server alone on streamable HTTP"),
    "migrate": (["migrate"], "apply the database migrations"),
    "superuser": (["createsuperuser"], "create an admin account"),
    "crawl": (["sdamgia_crawl"], "fetch СДАМ ГИА problems into the database"),
    "ingest": (["normagpt_ingest"], "add norm documents (PDF) to the NormaGPT corpus"),
    "flush": (["anki_flush"], "deliver the Anki notes queued while Anki was closed"),
}
CELERY = {
    "worker": (["worker", "--loglevel", "INFO"], "a Celery worker on REDIS_URL"),
    "beat": (["beat", "--loglevel", "INFO"], "the periodic tasks (one per deployment)"),
}


def main(argv: list[str] | None = None) -> None:
    """`tool-hub …`: a short name, a Celery role, or any manage.py command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(usage())
        return
    name, rest = args[0], args[1:]
    if name in CELERY:
        celery(CELERY[name][0] + rest)
        return
    command = SHORT[name][0] if name in SHORT else [name]
    manage(["tool-hub", *command, *rest])


def usage() -> str:
    rows = [*SHORT.items(), *CELERY.items()]
    width = max(len(name) for name, _ in rows)
    lines = [f"  {name.ljust(width)}  {about}" for name, (_, about) in rows]
    return (
        "usage: tool-hub COMMAND [options]\n\n"
        + "\n".join(lines)
        + "\n\nAny other manage.py command works too (`tool-hub check`, `tool-hub shell`);\n"
        "`tool-hub COMMAND --help` gives its options.\n"
    )


def manage(argv: list[str]) -> None:
    """Run the manage.py command in `argv` (argv[0] the program's name)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from core.stdio import divert_stdout, use_system_allocator, wants_stdio

    use_system_allocator(argv)
    early = None
    if wants_stdio(argv):
        divert_stdout()  # stdout belongs to the MCP protocol: nothing else may write there
        from core import stdio_early

        # `initialize` is answered while Django and the apps load (core/stdio_early.py).
        early = stdio_early.start(argv, sys.stdin.buffer)
    try:
        from django.core.management import execute_from_command_line

        with collector_paused():
            _loaded(argv)
        execute_from_command_line(argv)
    except Exception as exc:
        if early is None:
            if _unreachable(exc, argv):
                sys.stderr.write(f"error: {exc}\n")  # the reason, not a traceback to it
                raise SystemExit(1) from None
            raise
        # A setting that stops Django itself (ImproperlyConfigured): the client, which
        # may have had its `initialize` answer, hears the reason for each request.
        import traceback

        traceback.print_exc()
        early.refuse(f"{type(exc).__name__}: {exc}")
        raise SystemExit(1) from None


def _unreachable(exc: Exception, argv: list[str]) -> bool:
    """Whether `exc` is a database that cannot be reached (no server, no such database, a
    refused role: its message says which and names the database, core/postgresql), unless
    the command line asks for tracebacks (`--traceback`)."""
    from django.db.utils import OperationalError

    return isinstance(exc, OperationalError) and "--traceback" not in argv


def _loaded(argv: list[str]) -> None:
    """Django set up and the command's module imported, as `execute_from_command_line`
    would before running it (it finds both done): the start-up, run by `manage` with the
    collector paused. Not for a command line naming its own settings or path, nor one
    naming no command (help, a version, a typo: Django's own answer)."""
    if (
        len(argv) < 2
        or argv[1].startswith("-")
        or any(arg.startswith(("--settings", "--pythonpath")) for arg in argv)
    ):
        return
    import django
    from django.core.management import get_commands, load_command_class

    django.setup()
    app = get_commands().get(argv[1])
    if isinstance(app, str):
        load_command_class(app, argv[1])


def celery(args: list[str]) -> None:
    """A Celery worker or beat of this project's app (settings read as for every command)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if not os.environ.get("REDIS_URL", "").strip():
        from django.conf import settings

        settings.INSTALLED_APPS  # noqa: B018 (reads `.env`, which may set REDIS_URL)
    if not os.environ.get("REDIS_URL", "").strip():
        raise SystemExit(
            "REDIS_URL is not set: without a broker, tasks run in the process that asks for "
            "them and no worker or beat is needed"
        )
    if args[0] == "beat" and "--schedule" not in args:
        from django.conf import settings

        args += ["--schedule", str(settings.DATA_DIR / "celerybeat-schedule")]
    from celery.bin.celery import main as celery_main

    sys.argv = ["celery", "-A", "config", *args]
    celery_main()
