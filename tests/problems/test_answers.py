"""Checked answers (issue 30, item 3): the answer of every fixture problem, spelled three
other ways, is right; three near misses are wrong. And `sdamgia_check_answer` end to end
over stdio on the stand-in site."""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from problems.answers import answer_correct, any_order_asked, number
from problems.parsing import parse_problem_page
from tests.conftest import MANAGE, PYTHON, ROOT, subprocess_env, text_of
from tests.problems.blocks import block

BLOCKS = Path(__file__).resolve().parents[1] / "fixtures" / "sdamgia"
BLOCKS = BLOCKS / "math-ege_type1_problem_blocks_2023-01.json"


def fixture_answers() -> dict[str, str]:
    """Each fixture problem's stored answer, by problem id (as the parser reads it)."""
    items = json.loads(BLOCKS.read_text(encoding="utf-8"))["items"]
    found = {}
    for item in items:
        parsed = parse_problem_page(item["block_html"], base_url="https://math-ege.sdamgia.ru")
        found[str(item["problem_id"])] = parsed.answer
    return found


def spelled(value: Fraction) -> str:
    """A decimal as the site writes it: a comma, no trailing zeros."""
    if value.denominator == 1:
        return str(value.numerator)
    text = f"{float(value):.10f}".rstrip("0").rstrip(".")
    return text.replace(".", ",")


def equivalents(answer: str) -> list[str]:
    value = number(answer)
    assert value is not None, answer
    sign = "−" if value < 0 else ""  # the typographic minus
    magnitude = spelled(abs(value))
    dotted = magnitude.replace(",", ".")
    fraction = (
        f"{value.numerator}/{value.denominator}"
        if value.denominator != 1
        else f"{value.numerator * 4}/4"
    )
    trailing = f"{magnitude},00" if "," not in magnitude else f"{magnitude}0"
    return [f"{sign}{dotted}", f" {sign}{trailing} ", fraction]


def near_misses(answer: str) -> list[str]:
    value = number(answer)
    assert value is not None
    another = spelled(value + 1)
    digits = [i for i, c in enumerate(answer) if c.isdigit()]
    dropped = next(
        candidate
        for i in digits
        if (candidate := answer[:i] + answer[i + 1 :]) and number(candidate) != value
    ) if len(digits) > 1 else spelled(value * 10 + 1)  # fmt: skip
    flipped = spelled(-value) if value else "-1"
    return [another, dropped, flipped]


def test_every_fixture_answer_and_its_spellings_are_right_and_near_misses_wrong() -> None:
    answers = fixture_answers()
    assert len(answers) == 172
    for problem_id, answer in answers.items():
        assert answer_correct(answer, answer), (problem_id, answer)
        for spelling in equivalents(answer):
            assert answer_correct(spelling, answer), (problem_id, answer, spelling)
        for miss in near_misses(answer):
            assert not answer_correct(miss, answer), (problem_id, answer, miss)


@pytest.mark.parametrize(
    ("given", "stored", "any_order", "right"),
    [
        ("2", "2 или 3", False, True),
        ("3", "2|3", False, True),
        ("4", "2|3", False, False),
        ("314", "134", True, True),
        ("1, 3, 4", "134", True, True),
        ("314", "134", False, False),
        ("0134", "0134", False, True),
        ("134", "0134", False, False),
        ("Ёлка", "елка", False, True),
        ("северный полюс", "Северный Полюс", False, True),
        ("северныйполюс", "Северный Полюс", False, True),
        ("южный", "северный", False, False),
        ("1 000", "1000", False, True),
        ("12 34", "1234", False, False),
        ("- 0,5", "−0,5", False, True),
        ("1 / 4", "0,25", False, True),
        ("-0,5", "−1/2", False, True),
        ("", "5", False, False),
        ("1/0", "0", False, False),
    ],
)
def test_the_rules(given: str, stored: str, any_order: bool, right: bool) -> None:
    assert answer_correct(given, stored, any_order=any_order) is right


def test_any_order_is_read_from_the_condition() -> None:
    assert any_order_asked("Цифры в ответе могут повторяться. Запишите в любом порядке.")
    # the order asked is the answer's order: «213» is not «123»
    assert not any_order_asked("Расположите числа в порядке возрастания, запишите номера.")
    assert not any_order_asked("Установите соответствие между величинами и их значениями.")


async def _checks(params: StdioServerParameters) -> list[object]:
    async with Client(params, read_timeout_seconds=60) as client:
        asked = [
            {"answer": "0.25"},
            {"answer": "1/4", "reveal": True},
            {"answer": "0,3"},
            {"answer": "0,3", "reveal": True},
        ]
        return [
            await client.call_tool(
                "sdamgia_check_answer",
                {"subject": "math", "exam": "ege", "problem_id": "500", **arguments},
            )
            for arguments in asked
        ]


@pytest.mark.django_db(transaction=True)
def test_check_answer_over_stdio_reveals_only_when_asked(
    fake_site, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    fake_site.add_problem("math-ege", "500", block("500", "Найдите вероятность…", answer="0,25"))
    env = subprocess_env(
        **subprocess_db_env,
        SDAMGIA_URL_TEMPLATE=settings.SDAMGIA_URL_TEMPLATE,
        SDAMGIA_MIN_INTERVAL="0",
    )
    params = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp", "--apps", "problems"], cwd=str(ROOT), env=env
    )
    results = asyncio.run(_checks(params))
    verdicts = [r.structured_content for r in results]  # type: ignore[attr-defined]
    assert verdicts == [
        {"problem_id": "500", "verdict": "correct"},
        {"problem_id": "500", "verdict": "correct", "answer": "0,25"},
        {"problem_id": "500", "verdict": "incorrect"},
        {"problem_id": "500", "verdict": "incorrect", "answer": "0,25"},
    ]
    assert "0,25" not in text_of(results[2])  # not revealed unless asked
