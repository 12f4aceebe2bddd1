"""`manage.py normagpt_resume RUN_ID --note …`: a reviewer sends a run back to work (RUN_ID:
the run's id in its page's URL, as `--list` shows it)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core import background
from core.exceptions import DomainError
from normagpt import selectors, services
from normagpt.models import AgentRun


class Command(BaseCommand):
    help = (
        "Resume a run waiting for human review with the reviewer's note; with --list, show "
        "the review queue. Runs on a worker with REDIS_URL set, here otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id", nargs="?", help="The run's id, as --list shows it.")
        parser.add_argument("--note", help="What the agent should know or do.")
        parser.add_argument("--decision", choices=["CONTINUE", "REPLAN", "FINALIZE"])
        parser.add_argument("--list", action="store_true", help="List runs waiting for review.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            waiting = list(selectors.run_list(status=AgentRun.Status.NEEDS_REVIEW))
            for run in waiting:
                self.stdout.write(
                    f"{run.public_id}\t{run.question[:80]}\t{run.review_reason[:120]}"
                )
            if not waiting:
                self.stdout.write("No run is waiting for review.")
            return
        if options["run_id"] is None or not options["note"]:
            raise CommandError("give RUN_ID and --note (or --list)")
        try:
            run = selectors.run_get_public(public_id=options["run_id"], viewer=None)
            services.run_resume(run_id=run.pk, note=options["note"], decision=options["decision"])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        background.drain()  # without a broker the run goes on in this process: see it end
        run = selectors.run_get(run_id=run.pk)
        self.stdout.write(f"run {run.public_id}: {run.status}")
        if run.final_answer:
            self.stdout.write(run.final_answer)
