"""A teacher's workbench over MCP (issue 30): `sdamgia_make_variant`, `sdamgia_check_variant`,
`sdamgia_variant_pdf` and `sdamgia_random_problem`, called through the SDK client on
`manage.py runmcp` over stdio, on the stand-in site and the test database.

The bank is the real problems of the fixture (their conditions and answers as the parser
reads them), spread over four task numbers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from django.contrib.auth import get_user_model
from django.test import Client as WebClient
from django.utils import timezone
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from problems.models import Problem, SeenProblem, Variant
from problems.models import Test as SiteTest
from problems.parsing import parse_problem_page
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of
from tests.problems.blocks import block, listing

FIXTURE = ROOT / "tests" / "fixtures" / "sdamgia" / "math-ege_type1_problem_blocks_2023-01.json"
TASKS = 4  # task numbers the bank's problems are spread over
PER_TASK = 6
SITE_URL = "http://127.0.0.1:8999"


def real_problems() -> list[tuple[str, str, str]]:
    """(problem id, condition, answer) of fixture problems with a short answer."""
    found = []
    for item in json.loads(FIXTURE.read_text(encoding="utf-8"))["items"]:
        parsed = parse_problem_page(item["block_html"], base_url="https://math-ege.sdamgia.ru")
        text = " ".join(parsed.condition_text.split())
        if parsed.answer and len(text) > 40 and parsed.problem_id not in {p for p, *_ in found}:
            found.append((parsed.problem_id, text, parsed.answer))
    return found


@pytest.fixture
def bank(fake_site) -> dict[str, tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    """problem id → (task number, condition, answer): stored and on the stand-in site."""
    chosen = real_problems()[: TASKS * PER_TASK]
    stored = {}
    for n, (pid, condition, answer) in enumerate(chosen):
        number = str(1 + n % TASKS)
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number=number,
            condition_text=condition, answer=answer, fetched_at=timezone.now(),
        )  # fmt: skip
        fake_site.add_problem(
            "math-ege", pid, block(pid, condition, answer=answer, type_number=number)
        )
        stored[pid] = (number, condition, answer)
    return stored


def pdf_text(data: bytes) -> str:
    document = pdfium.PdfDocument(data)
    return "\n".join(" ".join(page.get_textpage().get_text_range().split()) for page in document)


def server(settings, db_env: dict[str, str], media: Path) -> StdioServerParameters:  # type: ignore[no-untyped-def]
    env = subprocess_env(
        **db_env,
        SDAMGIA_URL_TEMPLATE=settings.SDAMGIA_URL_TEMPLATE,
        SDAMGIA_MIN_INTERVAL="0",
        DJANGO_MEDIA_ROOT=str(media),
        SITE_URL=SITE_URL,
    )
    return StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "problems"], cwd=str(ROOT), env=env
    )


Calls = list[tuple[str, dict[str, Any]]]


def calls(
    params: StdioServerParameters,
    asked: Calls,
    then: Callable[[list[Any]], Calls] | None = None,
) -> list[Any]:
    """Each (tool, arguments) called in order in one session, then those `then` makes of
    their results; all the results."""

    async def run() -> list[Any]:
        async with Client(params, read_timeout_seconds=90) as client:
            results = [await client.call_tool(tool, arguments) for tool, arguments in asked]
            for tool, arguments in then(results) if then else []:
                results.append(await client.call_tool(tool, arguments))
            return results

    return asyncio.run(run())


MATH = {"subject": "math", "exam": "ege"}


@pytest.mark.django_db(transaction=True)
def test_variants_are_made_graded_and_printed_over_stdio(  # type: ignore[no-untyped-def]
    bank, settings, subprocess_db_env, tmp_path
) -> None:
    made = [
        ("sdamgia_make_variant", {**MATH, "tasks": "full", "seed": 7}),
        ("sdamgia_make_variant", {**MATH, "tasks": {"1": 2, "3": 1}, "seed": 11}),
        ("sdamgia_make_variant", {**MATH, "tasks": {"3": 1, "1": 2}, "seed": 11}),
        ("sdamgia_make_variant", {**MATH, "tasks": {"1": 2, "3": 1}, "seed": 12}),
    ]

    def then(results: list[Any]) -> list[tuple[str, dict[str, Any]]]:
        """Grade and print the full variant: the first answer right (by sheet number, with
        spaces), the second wrong (by problem id), the third missing, the fourth right."""
        variant, ids = (
            results[0].structured_content["variant"],
            results[0].structured_content["problem_ids"],
        )
        answers = {"1": f" {bank[ids[0]][2]} ", ids[1]: "не знаю", ids[3]: bank[ids[3]][2]}
        return [
            ("sdamgia_check_variant", {"variant": variant, "answers": answers}),
            ("sdamgia_variant_pdf", {"variant": variant}),
            ("sdamgia_variant_pdf", {"variant": variant, "with_solutions": True}),
            ("sdamgia_check_variant", {"variant": "nosuchvariant", "answers": {"1": "2"}}),
        ]

    results = calls(server(settings, subprocess_db_env, tmp_path), made, then)
    full, seeded, again, other = (r.structured_content for r in results[:4])
    assert not any(r.is_error for r in results[:4]), [text_of(r) for r in results]
    # a full variant: one problem of each task number, in task order
    assert [bank[pid][0] for pid in full["problem_ids"]] == ["1", "2", "3", "4"]
    assert full["seed"] == 7
    # the same seed, the same problems (in between, other variants were drawn)
    assert seeded["problem_ids"] == again["problem_ids"] != other["problem_ids"]
    assert [bank[pid][0] for pid in seeded["problem_ids"]] == ["1", "1", "3"]
    # the text shows the conditions in order and none of the answers
    sections = text_of(results[0]).split("\n## ")[1:]
    assert len(sections) == 4
    for number, (section, pid) in enumerate(zip(sections, full["problem_ids"], strict=True), 1):
        assert section.startswith(f"{number}. Problem {pid}")
        assert bank[pid][1] in " ".join(section.split())
    assert "Ответ:" not in text_of(results[0])
    assert "answer" not in text_of(results[0]).lower()

    graded, printed, keyed, foreign = results[4:]
    assert [t["verdict"] for t in graded.structured_content["tasks"]] == [
        "correct", "incorrect", "missing", "correct",
    ]  # fmt: skip
    assert (graded.structured_content["score"], graded.structured_content["max_score"]) == (2, 4)
    url = printed.structured_content["url"]
    assert url.startswith(f"{SITE_URL}/media/sheets/?t=")
    settings.MEDIA_ROOT = str(tmp_path)  # where the server stored it
    downloaded = WebClient().get(url.removeprefix(SITE_URL))  # any web process answers it
    assert downloaded.status_code == 200, downloaded.content
    sheet = pdf_text(b"".join(downloaded.streaming_content))
    at = 0
    for pid in full["problem_ids"]:  # each condition, in order (their openings repeat)
        at = sheet.index(bank[pid][1][-40:], at)
    assert sheet.index("Ответы") > at  # the key after the conditions
    assert keyed.structured_content["url"] != url
    assert foreign.is_error
    assert "variant" in text_of(foreign)


@pytest.mark.django_db(transaction=True)
def test_random_problems_leave_out_what_the_learner_was_given(  # type: ignore[no-untyped-def]
    bank, fake_site, settings, subprocess_db_env, tmp_path
) -> None:
    learner = get_user_model().objects.create_user(username=settings.MCP_STDIO_USER)
    of_task_2 = sorted(pid for pid, (number, *_) in bank.items() if number == "2")
    in_a_variant = of_task_2[0]
    Variant.objects.create(
        owner=learner, subject="math", exam="ege", tasks={"2": 1}, seed=1,
        problem_ids=[in_a_variant],
    )  # fmt: skip
    # category 77: a listing the site serves (three problems not stored yet)
    listed = [("9001", "Найдите корень уравнения 3^(x-5) = 81."), ("9002", "Решите уравнение x^2 = 64."),
              ("9003", "Найдите значение выражения 5^0,36 · 25^0,32.")]  # fmt: skip
    blocks = [(pid, block(pid, text, type_number="5")) for pid, text in listed]
    fake_site.add_page(
        "math-ege", "/test", {"filter": "all", "category_id": "77", "page": 1},
        listing(blocks, page=1, total=1),
    )  # fmt: skip
    draws = len(of_task_2) - 1
    asked: list[tuple[str, dict[str, Any]]] = [
        ("sdamgia_random_problem", {**MATH, "task_number": "2", "response_format": "json"})
    ] * (draws + 1)
    asked += [
        ("sdamgia_random_problem", {**MATH, "task_number": "2", "exclude_seen": False}),
        ("sdamgia_random_problem", {**MATH, "category_id": "77"}),
        ("sdamgia_random_problem", {**MATH}),
        ("sdamgia_random_problem", {**MATH, "task_number": "2", "category_id": "77"}),
        ("sdamgia_random_problem", {**MATH, "task_number": "19"}),
    ]
    results = calls(server(settings, subprocess_db_env, tmp_path), asked)
    given = [r.structured_content["id"] for r in results[:draws]]
    assert not any(r.is_error for r in results[:draws]), [text_of(r) for r in results]
    # each of the task's problems once, never the one already in the learner's variant
    assert sorted(given) == of_task_2[1:]
    assert json.loads(text_of(results[0]))["id"] == given[0]  # response_format json
    exhausted = results[draws]
    assert exhausted.is_error
    assert "exclude_seen" in text_of(exhausted)
    assert not results[draws + 1].is_error  # seen ones again when asked
    assert results[draws + 2].structured_content["id"] in {"9001", "9002", "9003"}
    neither, both, unknown = results[draws + 3 :]
    for refused in (neither, both):
        assert refused.is_error
        assert "task_number or category_id" in text_of(refused)
    assert unknown.is_error
    assert "task 19 of math-ege" in text_of(unknown)
    assert "catalog could not be read" in text_of(unknown)  # the site has no catalog here
    assert set(SeenProblem.objects.filter(owner=learner).values_list("problem_id", flat=True)) >= {
        *given
    }


@pytest.mark.django_db(transaction=True)
def test_the_sites_constructor_and_bad_arguments_over_stdio(  # type: ignore[no-untyped-def]
    bank, fake_site, settings, subprocess_db_env, tmp_path
) -> None:
    made, seeded, bad_tasks, too_many = calls(
        server(settings, subprocess_db_env, tmp_path),
        [
            ("sdamgia_make_variant", {**MATH, "tasks": {"1": 2, "2": 1}, "source": "site"}),
            ("sdamgia_make_variant", {**MATH, "tasks": {"1": 1}, "source": "site", "seed": 3}),
            ("sdamgia_make_variant", {**MATH, "tasks": {"первое": 1}}),
            ("sdamgia_make_variant", {**MATH, "tasks": {"1": PER_TASK + 1}}),
        ],
    )
    assert not made.is_error, text_of(made)
    variant = made.structured_content
    asked = [r.params for r in fake_site.requests_to("/test") if r.params.get("a") == "generate"]
    assert asked == [{"a": "generate", "prb1": "2", "prb2": "1"}]
    test = SiteTest.objects.get(subject="math", exam="ege", test_id=variant["test_id"])
    assert variant["problem_ids"] == test.problem_ids
    assert [bank[pid][0] for pid in test.problem_ids] == ["1", "1", "2"]
    assert seeded.is_error
    assert text_of(seeded) == "seed: the site's constructor takes no seed"
    assert bad_tasks.is_error
    assert "tasks" in text_of(bad_tasks)
    assert too_many.is_error
    assert "task 1 has 6 stored problem(s), 7 asked" in text_of(too_many)


@pytest.mark.django_db
def test_a_task_with_nothing_new_stored_reads_its_categories_from_the_site(fake_site) -> None:  # type: ignore[no-untyped-def]
    from problems.subjects import site_resolve
    from problems.variants import problem_random

    catalog = (
        '<html><body><div class="cat_main"><div class="cat_category"><b class="cat_name">'
        '<span class="pcat_num">5</span>. Простейшие уравнения</b><div class="cat_children">'
        + "".join(
            f'<div class="cat_category" data-id="{c}"><a class="cat_name" '
            f'href="/test?filter=all&amp;category_id={c}">Уравнения {c}</a>'
            '<div class="cat_count">2</div></div>'
            for c in ("501", "502", "503")
        )
        + "</div></div></div></body></html>"
    )
    fake_site.add_page("math-ege", "/prob_catalog", {}, catalog)
    for c in ("501", "502", "503"):
        ids = [f"{c}1", f"{c}2"]
        blocks = [
            (pid, block(pid, f"Решите уравнение номер {pid}.", type_number="5")) for pid in ids
        ]
        fake_site.add_page(
            "math-ege", "/test", {"filter": "all", "category_id": c, "page": 1},
            listing(blocks, page=1, total=1),
        )  # fmt: skip
    learner = get_user_model().objects.create_user(username="learner")
    site = site_resolve(subject="math", exam="ege")
    drawn = [problem_random(user_id=learner.pk, site=site, task_number="5").value.problem_id]
    listings = [r for r in fake_site.requests_to("/test") if r.params.get("category_id")]
    assert len(listings) == 2  # LISTINGS_PER_DRAW categories, not the whole task
    drawn += [problem_random(user_id=learner.pk, site=site, task_number="5").value.problem_id
              for _ in range(5)]  # fmt: skip
    assert sorted(drawn) == ["5011", "5012", "5021", "5022", "5031", "5032"]  # all, once each
