#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from core.stdio import divert_stdout, use_system_allocator, wants_stdio

    use_system_allocator(sys.argv)
    early = None
    if wants_stdio(sys.argv):
        divert_stdout()  # stdout belongs to the MCP protocol: nothing else may write there
        from core import stdio_early

        # `initialize` is answered while Django and the apps load (core/stdio_early.py).
        early = stdio_early.start(sys.argv, sys.stdin.buffer)
    try:
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
    except Exception as exc:
        if early is None:
            raise
        # A setting that stops Django itself (ImproperlyConfigured): the client, which
        # may have had its `initialize` answer, hears the reason for each request.
        import traceback

        traceback.print_exc()
        early.refuse(f"{type(exc).__name__}: {exc}")
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
