"""Variants from the stored bank (issue 30, item 1): the problems of an exam's task numbers,
drawn with a seed.

The same seed gives the same problems whatever was drawn before: each task number is drawn
by its own generator, seeded with the variant's seed, the site and the task number, from its
stored problems in id order. Without a seed one is chosen, and the problems of the caller's
last RECENT variants of the exam are left out while others remain.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping

from core.exceptions import InvalidInput, NotFound
from problems.models import Problem, Topic, Variant
from problems.subjects import Site

RECENT = 5
COUNT_MAX = 20
PROBLEMS_MAX = 60


def variant_make(
    *,
    user_id: int,
    site: Site,
    tasks: Mapping[str, int] | str,
    seed: int | None = None,
) -> Variant:
    """A variant of `site`'s exam: `tasks` is {task number: count} or "full" (one problem
    of each task number)."""
    wanted = _tasks(site, tasks)
    used: set[str] = set()
    if seed is None:
        seed = secrets.randbits(48)
        recent = Variant.objects.filter(
            owner_id=user_id, subject=site.subject, exam=site.exam
        ).values_list("problem_ids", flat=True)[:RECENT]
        used = {problem for ids in recent for problem in ids}
    chosen: list[str] = []
    for number, count in wanted.items():
        stored = sorted(
            Problem.objects.filter(
                subject=site.subject, exam=site.exam, type_number=number
            ).values_list("problem_id", flat=True),
            key=lambda pid: (len(pid), pid),
        )
        if len(stored) < count:
            raise InvalidInput(
                f"tasks: task {number} has {len(stored)} stored problem(s), {count} asked; "
                "store more (the catalog crawl) or ask fewer",
                field="tasks",
            )
        fresh = [pid for pid in stored if pid not in used]
        pool = fresh if len(fresh) >= count else stored
        draw = random.Random(f"{seed}:{site.subject}-{site.exam}:{number}")  # noqa: S311 (reproducible by design)
        chosen += draw.sample(pool, count)
    return Variant.objects.create(
        owner_id=user_id,
        subject=site.subject,
        exam=site.exam,
        tasks=wanted,
        seed=seed,
        problem_ids=chosen,
    )


def variant_get(*, user_id: int, public_id: str) -> Variant:
    found = Variant.objects.filter(public_id=public_id, owner_id=user_id).first()
    if found is None:
        raise NotFound(f"variant: you have no variant {public_id!r}")
    return found


def _tasks(site: Site, tasks: Mapping[str, int] | str) -> dict[str, int]:
    if tasks == "full":
        numbers = _task_numbers(site)
        if not numbers:
            raise InvalidInput(
                f"tasks: no task numbers are known for {site.subject}-{site.exam}: store its "
                "catalog or problems first",
                field="tasks",
            )
        return dict.fromkeys(numbers, 1)
    if isinstance(tasks, str) or not tasks:
        raise InvalidInput('tasks must be {"task number": count} or "full"', field="tasks")
    wanted: dict[str, int] = {}
    for number, count in tasks.items():
        key = str(number).strip()
        if not key.isascii() or not key.isdigit():
            raise InvalidInput(f"tasks: {number!r} is not a task number", field="tasks")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= COUNT_MAX:
            raise InvalidInput(
                f"tasks: the count of task {key} must be 1–{COUNT_MAX}, got {count!r}",
                field="tasks",
            )
        wanted[str(int(key))] = count
    if sum(wanted.values()) > PROBLEMS_MAX:
        raise InvalidInput(f"tasks: a variant holds at most {PROBLEMS_MAX} problems", field="tasks")
    return dict(sorted(wanted.items(), key=lambda item: int(item[0])))


def _task_numbers(site: Site) -> list[str]:
    """The exam's task numbers: its stored catalog's (not the additional topics), else those
    of its stored problems."""
    topics = Topic.objects.filter(subject=site.subject, exam=site.exam, is_additional=False)
    numbers = {t.number for t in topics if t.number.isdigit()}
    if not numbers:
        numbers = set(
            Problem.objects.filter(subject=site.subject, exam=site.exam)
            .exclude(type_number="")
            .values_list("type_number", flat=True)
        )
    return sorted((n for n in numbers if n.isdigit()), key=int)
