#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from core.stdio import divert_stdout, use_system_allocator, wants_stdio

    use_system_allocator(sys.argv)
    if wants_stdio(sys.argv):
        divert_stdout()  # stdout belongs to the MCP protocol: nothing else may write there
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
