#!/usr/bin/env python
"""Django's command-line utility for administrative tasks (installed: `tool-hub`)."""

import sys


def main() -> None:
    from config.cli import manage

    manage(sys.argv)


if __name__ == "__main__":
    main()
