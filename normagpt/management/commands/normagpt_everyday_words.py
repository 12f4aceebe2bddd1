"""`manage.py normagpt_everyday_words`: write `normagpt/everyday_words.txt`, how common each
everyday Russian word is, from wordfreq (the `dev` extra): what a whole question's common
words weigh in search (`normagpt.everyday`)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from normagpt.everyday import WORDS, everyday_words_written


class Command(BaseCommand):
    help = "Write normagpt/everyday_words.txt from wordfreq's Russian list (the dev extra)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = everyday_words_written()
        except ModuleNotFoundError as exc:
            raise CommandError(
                "wordfreq is not installed: it comes with the dev extra (make test installs it)"
            ) from exc
        self.stdout.write(self.style.SUCCESS(f"{count} word(s) written to {WORDS}"))
