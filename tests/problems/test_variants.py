"""Variants from the stored bank (issue 30, item 1): the same seed gives the same
problems, a full variant holds one problem of each task number, and a variant made without
a seed leaves out what the caller's last variants used. Over REST, a user sees only their
own."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from core.exceptions import InvalidInput
from problems.models import Problem, Variant
from problems.subjects import site_resolve
from problems.variants import variant_make

pytestmark = pytest.mark.django_db

TASKS = {"1": 6, "2": 6, "3": 3}  # task number → stored problems


@pytest.fixture
def bank() -> None:
    for number, count in TASKS.items():
        for n in range(count):
            Problem.objects.create(
                subject="math",
                exam="ege",
                problem_id=f"{number}{n:03d}",
                type_number=number,
                condition_text=f"Задача типа {number}, номер {n}.",
                answer=str(n),
                fetched_at=timezone.now(),
            )


def _user(name: str) -> object:
    return get_user_model().objects.create_user(username=name, password="x")


def test_the_same_seed_gives_the_same_problems_whatever_came_before(bank: None) -> None:
    site = site_resolve(subject="math", exam="ege")
    alice, bob = _user("alice"), _user("bob")
    first = variant_make(user_id=alice.pk, site=site, tasks={"1": 2, "2": 3}, seed=42)
    variant_make(user_id=alice.pk, site=site, tasks={"1": 4}, seed=None)  # in between
    again = variant_make(user_id=bob.pk, site=site, tasks={"2": 3, "1": 2}, seed=42)
    assert again.problem_ids == first.problem_ids
    assert len(first.problem_ids) == 5
    types = list(
        Problem.objects.filter(problem_id__in=first.problem_ids).values_list(
            "problem_id", "type_number"
        )
    )
    by_id = dict(types)
    assert [by_id[p] for p in first.problem_ids] == ["1", "1", "2", "2", "2"]  # task order
    other = variant_make(user_id=alice.pk, site=site, tasks={"1": 2, "2": 3}, seed=43)
    assert other.problem_ids != first.problem_ids


def test_a_full_variant_holds_one_problem_of_each_task_number(bank: None) -> None:
    site = site_resolve(subject="math", exam="ege")
    made = variant_make(user_id=_user("t").pk, site=site, tasks="full", seed=7)
    types = dict(
        Problem.objects.filter(problem_id__in=made.problem_ids).values_list(
            "problem_id", "type_number"
        )
    )
    assert [types[p] for p in made.problem_ids] == ["1", "2", "3"]
    assert made.tasks == {"1": 1, "2": 1, "3": 1}


def test_without_a_seed_the_last_variants_problems_are_left_out(bank: None) -> None:
    site = site_resolve(subject="math", exam="ege")
    user = _user("t")
    first = variant_make(user_id=user.pk, site=site, tasks={"1": 3})
    second = variant_make(user_id=user.pk, site=site, tasks={"1": 3})
    assert not set(first.problem_ids) & set(second.problem_ids)  # 6 stored: all fresh
    third = variant_make(user_id=user.pk, site=site, tasks={"1": 3})  # none fresh: any
    assert len(set(third.problem_ids)) == 3


@pytest.mark.parametrize(
    ("tasks", "rule"),
    [
        ({"3": 4}, "task 3 has 3 stored problem"),
        ({"x": 1}, "'x' is not a task number"),
        ({"1": 0}, "count of task 1 must be 1–20"),
        ({"1": 2, "01": 3}, "task 1 is named twice"),
        ("all", '"full"'),
    ],
)
def test_a_variant_that_cannot_be_made_is_refused_naming_tasks(
    bank: None, tasks: object, rule: str
) -> None:
    site = site_resolve(subject="math", exam="ege")
    with pytest.raises(InvalidInput, match=rule) as refused:
        variant_make(user_id=_user("t").pk, site=site, tasks=tasks, seed=1)  # type: ignore[arg-type]
    assert refused.value.field == "tasks"
    assert not Variant.objects.exists()


def test_over_rest_a_user_makes_and_reads_only_their_own_variants(bank: None) -> None:
    alice, bob = APIClient(), APIClient()
    alice.force_authenticate(_user("alice"))
    bob.force_authenticate(_user("bob"))
    made = alice.post(
        "/api/problems/математика/ЕГЭ/variants/", {"tasks": "full", "seed": 5}, format="json"
    )
    assert made.status_code == 201, made.content
    variant = made.json()
    assert (variant["subject"], variant["exam"], len(variant["problem_ids"])) == ("math", "ege", 3)
    assert alice.get(f"/api/problems/variants/{variant['id']}/").json() == variant
    assert bob.get(f"/api/problems/variants/{variant['id']}/").status_code == 404
    assert [v["id"] for v in alice.get("/api/problems/variants/").json()["results"]] == [
        variant["id"]
    ]
    assert bob.get("/api/problems/variants/").json()["results"] == []
    assert APIClient().post(
        "/api/problems/math/ege/variants/", {"tasks": "full"}, format="json"
    ).status_code in (401, 403)
    refused = alice.post("/api/problems/math/ege/variants/", {"tasks": {"9": 1}}, format="json")
    assert refused.status_code == 400
    assert "tasks" in refused.content.decode()


def test_a_variant_is_graded_per_task_with_the_primary_score(bank: None) -> None:
    teacher, other = APIClient(), APIClient()
    user = _user("teacher")
    teacher.force_authenticate(user)
    other.force_authenticate(_user("other"))
    site = site_resolve(subject="math", exam="ege")
    made = variant_make(user_id=user.pk, site=site, tasks={"1": 1, "2": 1, "3": 1}, seed=3)
    first, second, third = made.problem_ids
    right = {pid: Problem.objects.get(problem_id=pid).answer for pid in made.problem_ids}
    graded = teacher.post(
        f"/api/problems/variants/{made.public_id}/check/",
        {"answers": {"1": f"{right[first]},0", second: "999"}},  # by number and by id
        format="json",
    )
    assert graded.status_code == 200, graded.content
    assert graded.json() == {
        "variant": made.public_id,
        "tasks": [
            {"number": 1, "problem_id": first, "verdict": "correct"},
            {"number": 2, "problem_id": second, "verdict": "incorrect"},
            {"number": 3, "problem_id": third, "verdict": "missing"},
        ],
        "score": 1,
        "max_score": 3,
    }
    unknown = teacher.post(
        f"/api/problems/variants/{made.public_id}/check/", {"answers": {"7": "1"}}, format="json"
    )
    assert unknown.status_code == 400
    assert "answers" in unknown.content.decode()
    # one task answered under its number and its id: which one counts was the keys' order
    twice = teacher.post(
        f"/api/problems/variants/{made.public_id}/check/",
        {"answers": {"2": "1", second: "2"}},
        format="json",
    )
    assert twice.status_code == 400
    assert (
        f"answers: task 2 is answered twice, as '2' and as '{second}'" in (twice.json()["message"])
    )
    assert (
        other.post(
            f"/api/problems/variants/{made.public_id}/check/", {"answers": {}}, format="json"
        ).status_code
        == 404
    )


@pytest.mark.django_db(transaction=True)
def test_a_variant_is_a_resource_of_its_owner(bank: None) -> None:
    import asyncio

    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from core.identity import stdio_caller
    from core.mcp_server import build_server

    site = site_resolve(subject="math", exam="ege")
    own = variant_make(user_id=stdio_caller().pk, site=site, tasks="full", seed=9)
    foreign = variant_make(user_id=_user("someone").pk, site=site, tasks="full", seed=9)

    async def read() -> tuple[str, str]:
        async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
            text = (await client.read_resource(f"sdamgia://variant/{own.public_id}")).contents[0]
            try:
                await client.read_resource(f"sdamgia://variant/{foreign.public_id}")
            except MCPError as exc:
                refused = str(exc)
            else:
                refused = ""
        return text.text, refused  # type: ignore[union-attr]

    text, refused = asyncio.run(read())
    for number, pid in enumerate(own.problem_ids, start=1):
        assert f"## {number}. Problem {pid}" in text
    assert "Задача типа 3" in text
    assert "no variant" in refused


def test_a_variant_made_by_the_sites_constructor_stores_its_test(fake_site, settings) -> None:  # type: ignore[no-untyped-def]
    from problems.models import Test
    from tests.problems.blocks import block

    for pid, number in (("101", "1"), ("102", "1"), ("103", "1"), ("201", "2"), ("202", "2")):
        fake_site.add_problem(
            "math-ege", pid, block(pid, f"Задача {pid} типа {number}.", type_number=number)
        )
    teacher = APIClient()
    teacher.force_authenticate(_user("teacher"))
    made = teacher.post(
        "/api/problems/math/ege/variants/",
        {"tasks": {"1": 2, "2": 1}, "source": "site"},
        format="json",
    )
    assert made.status_code == 201, made.content
    variant = made.json()
    asked = [r.params for r in fake_site.requests_to("/test") if r.params.get("a") == "generate"]
    assert asked == [{"a": "generate", "prb1": "2", "prb2": "1"}]
    test = Test.objects.get(subject="math", exam="ege", test_id=variant["site_test_id"])
    assert variant["problem_ids"] == test.problem_ids == ["101", "102", "201"]
    assert (variant["source"], variant["seed"]) == ("site", None)
    from problems.models import Variant
    from problems.variants import variant_markdown

    heading = variant_markdown(Variant.objects.get(public_id=variant["id"])).splitlines()[0]
    assert heading.endswith(f"(math, ege, site test {variant['site_test_id']})")  # not «None»
    assert Problem.objects.filter(problem_id__in=["101", "102", "201"]).count() == 3  # stored
    seeded = teacher.post(
        "/api/problems/math/ege/variants/",
        {"tasks": {"1": 1}, "source": "site", "seed": 4},
        format="json",
    )
    assert seeded.status_code == 400
    assert seeded.json()["message"] == "seed: the site's constructor takes no seed"
