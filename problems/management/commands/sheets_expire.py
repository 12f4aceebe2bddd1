"""`manage.py sheets_expire`: delete printed sheets older than `SDAMGIA_SHEET_TTL_DAYS`
(what the beat task `problems.sheets_expire` does daily), for a deployment without beat."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from problems import sheets


class Command(BaseCommand):
    help = (
        "Delete printed variant sheets not printed for SDAMGIA_SHEET_TTL_DAYS days, from "
        "whatever storage holds them (0 days: none are deleted)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = sheets.sheets_expire()
        self.stdout.write(f"{deleted} sheet file(s) deleted")
