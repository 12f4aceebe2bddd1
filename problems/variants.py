"""Variants (issue 30, item 1): the problems of an exam's task numbers, drawn from the
stored bank with a seed, or made by the site's own constructor (`variant_from_site`).

The same seed gives the same problems whatever was drawn before: each task number is drawn
by its own generator, seeded with the variant's seed, the site and the task number, from its
stored problems in id order. Without a seed one is chosen, and the problems of the caller's
last RECENT variants of the exam are left out while others remain.

`problem_random` draws one problem of a task number or a category for a learner, leaving out
(with `exclude_seen`) what they were given before.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from core.exceptions import DomainError, InvalidInput, NotFound
from problems import answers as answers_rules
from problems import catalog, services
from problems.catalog import exam_test_store
from problems.client import SdamgiaClient, run_with_client, site_base_url
from problems.entities import TestPage
from problems.exceptions import SdamgiaBadPage
from problems.models import CategoryProblem, Problem, SeenProblem, Topic, Variant
from problems.parsing import PageStructureError, parse_test_page
from problems.schemas import COUNT_MAX
from problems.stored import Answer
from problems.subjects import Site

RECENT = 5
PROBLEMS_MAX = 60
LISTINGS_PER_DRAW = 2  # category listings read from the site for one random problem
LISTING_ALL = 100_000


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


def variant_create(
    *,
    user_id: int,
    site: Site,
    tasks: Mapping[str, int] | str,
    seed: int | None = None,
    source: str = "bank",
) -> Variant:
    """A variant from `source`: "bank" (`variant_make`, with `seed`) or "site"
    (`variant_from_site`, which takes no seed)."""
    if source == "site":
        if seed is not None:
            raise InvalidInput("seed: the site's constructor takes no seed", field="seed")
        return variant_from_site(user_id=user_id, site=site, tasks=tasks)
    return variant_make(user_id=user_id, site=site, tasks=tasks, seed=seed)


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
        if str(int(key)) in wanted:
            raise InvalidInput(
                f"tasks: task {int(key)} is named twice ({number!r} and another); name each "
                "task once with its count",
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


def variant_check(*, user_id: int, public_id: str, answers: Mapping[str, str]) -> dict[str, Any]:
    """A learner's answers to a variant graded as the site would grade each (`answers` by
    the number a problem has on the sheet, 1…, or by its problem id): a verdict per task —
    correct, incorrect, missing (no answer given), unchecked (no short answer on the site) —
    and the primary score, a point per correct answer."""
    variant = variant_get(user_id=user_id, public_id=public_id)
    problems = variant_problems(variant)
    by_number = {str(n): pid for n, pid in enumerate(variant.problem_ids, start=1)}
    given: dict[str, str] = {}
    named: dict[str, str] = {}  # problem id → the key its answer was given under
    for key, answer in answers.items():
        pid = key if key in problems else by_number.get(str(key).strip())
        if pid is None:
            raise InvalidInput(
                f"answers: {key!r} is neither a number on the sheet (1–{len(by_number)}) nor a "
                "problem of the variant",
                field="answers",
            )
        if pid in named:
            number = variant.problem_ids.index(pid) + 1
            raise InvalidInput(
                f"answers: task {number} is answered twice, as {named[pid]!r} and as {key!r}; "
                "give each task one answer",
                field="answers",
            )
        named[pid] = key
        given[pid] = str(answer)
    tasks = []
    for number, pid in enumerate(variant.problem_ids, start=1):
        problem = problems.get(pid)
        if problem is None or not problem.answer.strip():
            verdict = "unchecked"
        elif not given.get(pid, "").strip():
            verdict = "missing"
        else:
            right = answers_rules.answer_correct(
                given[pid], problem.answer, condition=problem.condition_text
            )
            verdict = "correct" if right else "incorrect"
        tasks.append({"number": number, "problem_id": pid, "verdict": verdict})
    return {
        "variant": variant.public_id,
        "tasks": tasks,
        "score": sum(1 for t in tasks if t["verdict"] == "correct"),
        "max_score": sum(1 for t in tasks if t["verdict"] != "unchecked"),
    }


def variant_problems(variant: Variant) -> dict[str, Problem]:
    """The stored problems of `variant`, by problem id (one no longer stored is absent)."""
    return {
        p.problem_id: p
        for p in Problem.objects.filter(
            subject=variant.subject, exam=variant.exam, problem_id__in=variant.problem_ids
        )
    }


def variant_markdown(variant: Variant) -> str:
    """A variant for reading: its problems in order with their conditions (no answers)."""
    problems = variant_problems(variant)
    made = (
        f"seed {variant.seed}" if variant.seed is not None else f"site test {variant.site_test_id}"
    )
    lines = [f"# Variant {variant.public_id} ({variant.subject}, {variant.exam}, {made})", ""]
    for number, pid in enumerate(variant.problem_ids, start=1):
        problem = problems.get(pid)
        condition = " ".join(problem.condition_text.split()) if problem else "(not stored)"
        lines += [f"## {number}. Problem {pid}", "", condition, ""]
    return "\n".join(lines).rstrip() + "\n"


def variant_from_site(*, user_id: int, site: Site, tasks: Mapping[str, int] | str) -> Variant:
    """A variant made by the site's own constructor: the test it returns is stored (`Test`,
    its problems too) and becomes the variant."""
    wanted = _tasks(site, tasks)

    async def made(client: SdamgiaClient) -> tuple[str, TestPage]:
        page = await client.test_generated(site, wanted)
        test_id = parse_qs(urlsplit(page.url).query).get("id", [""])[0]
        if not test_id.isdigit():
            raise SdamgiaBadPage(
                f"{site.label}.sdamgia.ru made no test (its constructor led to {page.url})"
            )
        try:
            return test_id, parse_test_page(page.text, base_url=site_base_url(site))
        except PageStructureError as exc:
            raise SdamgiaBadPage.unreadable(site.label, f"page of test {test_id}", exc) from None

    test_id, parsed = run_with_client(made)
    test = exam_test_store(site=site, test_id=test_id, parsed=parsed)
    return Variant.objects.create(
        owner_id=user_id,
        subject=site.subject,
        exam=site.exam,
        tasks=wanted,
        source="site",
        site_test_id=test.test_id,
        problem_ids=list(test.problem_ids),
    )


def _task_draw_pool(
    site: Site, task_number: str, seen: set[str]
) -> tuple[str, list[str], DomainError | None]:
    """What a task number draws from: its stored problems and listings, and when none is new
    to the user, up to LISTINGS_PER_DRAW more of its categories read from the site; with
    the site's failure to list them, if any."""
    number = task_number.strip()
    if not number.isascii() or not number.isdigit() or len(number) > 3:
        raise InvalidInput(
            f"task_number: {task_number!r} is not a task number", field="task_number"
        )
    number = str(int(number))
    ids = _task_pool(site, number)
    unread: DomainError | None = None
    if not set(ids) - seen:
        try:
            _task_listings_read(site, number, LISTINGS_PER_DRAW)
        except DomainError as exc:
            unread = exc
        ids = _task_pool(site, number)
    return f"task {number}", list(ids), unread


def problem_random(
    *,
    user_id: int,
    site: Site,
    task_number: str | None = None,
    category_id: str | None = None,
    exclude_seen: bool = True,
) -> Answer[Problem]:
    """A random problem of a task number or of a catalog category (one of them), recorded
    as seen by the user; with `exclude_seen`, one they were not given before (by this or
    in their variants).

    A category is read as `sdamgia_get_category_problems` reads it. A task number draws
    from the stored problems of the task and the stored listings of its categories; when
    none of them is new to the user, up to LISTINGS_PER_DRAW more of its categories are read
    from the site (the catalog says which).
    """
    if (task_number is None) == (category_id is None):
        raise InvalidInput(
            "task_number or category_id: give exactly one of them", field="task_number"
        )
    seen = _seen(user_id, site) if exclude_seen else set()
    unread: DomainError | None = None  # the site's failure to list more of the task
    if category_id is not None:
        where = f"category {category_id}"
        read = catalog.category_problems_read(site=site, category_id=category_id, limit=LISTING_ALL)
        ids = read.value.ids
    else:
        where, ids, unread = _task_draw_pool(site, task_number or "", seen)
    pool = sorted(set(ids) - seen, key=lambda pid: (len(pid), pid))
    if not pool:
        more = f"; the site's catalog could not be read: {unread.message}" if unread else ""
        if not ids:
            raise NotFound(
                f"{where} of {site.label}.sdamgia.ru: no problem is stored or listed for it"
                f"{more or ' (see sdamgia_get_catalog for its task numbers and categories)'}"
            )
        raise InvalidInput(
            f"exclude_seen: you were given all {len(set(ids))} problem(s) of {where} already; "
            f"set exclude_seen to false to see them again{more}",
            field="exclude_seen",
        )
    problem_id = secrets.choice(pool)
    read_problem = services.problem_read(site=site, problem_id=problem_id)
    SeenProblem.objects.update_or_create(
        owner_id=user_id, subject=site.subject, exam=site.exam, problem_id=problem_id
    )
    return read_problem


def _seen(user_id: int, site: Site) -> set[str]:
    """The problems of `site` the user was given: drawn at random, or in their variants."""
    given = set(
        SeenProblem.objects.filter(
            owner_id=user_id, subject=site.subject, exam=site.exam
        ).values_list("problem_id", flat=True)
    )
    for ids in Variant.objects.filter(
        owner_id=user_id, subject=site.subject, exam=site.exam
    ).values_list("problem_ids", flat=True):
        given.update(ids)
    return given


def _task_pool(site: Site, number: str) -> list[str]:
    """The problem ids known for task `number`: stored with that number, or in the stored
    listings of the task's categories."""
    stored = Problem.objects.filter(subject=site.subject, exam=site.exam, type_number=number)
    listed = CategoryProblem.objects.filter(
        category__subject=site.subject,
        category__exam=site.exam,
        category__topic__number=number,
        category__topic__is_additional=False,
    )
    return [
        *stored.values_list("problem_id", flat=True),
        *listed.values_list("problem__problem_id", flat=True),
    ]


def _task_listings_read(site: Site, number: str, listings: int) -> None:
    """Up to `listings` categories of task `number` not listed yet, read from the site (the
    catalog says which)."""
    unread = [
        category
        for topic in catalog.catalog_read(site=site).value
        if topic.number == number and not topic.is_additional
        for category in topic.categories.all()
        if category.listing_fetched_at is None
    ]
    for category in random.sample(unread, min(listings, len(unread))):
        catalog.category_problems_read(
            site=site, category_id=category.category_id, limit=LISTING_ALL
        )
