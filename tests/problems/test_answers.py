"""Checked answers (issue 30, item 3): the answer of every fixture problem, spelled three
other ways, is right; three near misses are wrong. And `sdamgia_check_answer` end to end
over stdio on the stand-in site.

Issue 50, item 4: every wording of "any order" is read («порядок цифр в ответе не важен»
as «в любом порядке»; «в порядке возрастания» keeps the order), and where the condition
asks for a digit string «1, 3, 4», «1 3 4» and «1;3;4» are «134»; where it does not, «134»
is a number. The fixture problems (planimetry) answer numbers only: the conditions below
are the exams' wordings of digit-string tasks."""

from __future__ import annotations

import asyncio
import json
from fractions import Fraction
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from core.mcp_server import build_server
from problems.answers import AnswerForm, answer_correct, answer_form, number
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


# Conditions' closing sentences, in the wordings of the exams' tasks with a digit-string
# answer (the 172 fixture problems are planimetry: each answer a number, none of these).
ANY_ORDER = "Выберите верные утверждения. Запишите в ответе их номера в любом порядке."
NOT_IMPORTANT = "Выберите все верные утверждения. Порядок цифр в ответе не важен."
ASCENDING = (
    "Какие из следующих утверждений верны? В ответе запишите номера выбранных утверждений "
    "без пробелов, запятых и других дополнительных символов. Если ответов несколько, "
    "записывайте их номера в порядке возрастания."
)
MATCHING = (
    "Установите соответствие между величинами и их значениями. Запишите в ответ цифры, "
    "расположив их в порядке, соответствующем буквам."
)
NUMBER = "Найдите площадь треугольника, стороны которого равны 13, 14 и 15."


IN_CM = "Найдите длину отрезка AB. Ответ дайте в сантиметрах."
IN_DEGREES = "Найдите угол ABC. Ответ дайте в градусах."


@pytest.mark.parametrize(
    ("given", "stored", "condition", "right"),
    [
        ("2", "2 или 3", NUMBER, True),
        ("3", "2|3", NUMBER, True),
        ("4", "2|3", NUMBER, False),
        ("314", "134", ANY_ORDER, True),
        ("1, 3, 4", "134", ANY_ORDER, True),
        ("314", "134", NUMBER, False),
        ("0134", "0134", NUMBER, True),
        ("134", "0134", NUMBER, False),
        ("Ёлка", "елка", NUMBER, True),
        ("северный полюс", "Северный Полюс", NUMBER, True),
        ("северныйполюс", "Северный Полюс", NUMBER, True),
        ("южный", "северный", NUMBER, False),
        ("1 000", "1000", NUMBER, True),
        ("12 34", "1234", NUMBER, False),
        ("- 0,5", "−0,5", NUMBER, True),
        ("1 / 4", "0,25", NUMBER, True),
        ("-0,5", "−1/2", NUMBER, True),
        ("", "5", NUMBER, False),
        ("1/0", "0", NUMBER, False),
        # a full stop ends a student's sentence, after a decimal or a fraction too
        ("0.5.", "0,5", NUMBER, True),
        ("0,5.", "0,5", NUMBER, True),
        ("1/2.", "0,5", NUMBER, True),
        ("8.", "8", NUMBER, True),
        ("0,6.", "0,5", NUMBER, False),
        ("½", "0,5", NUMBER, True),
        ("1½", "1,5", NUMBER, True),  # not NFKC's «11⁄2»
        ("1½", "5,5", NUMBER, False),
        ("1⁄4", "0,25", NUMBER, True),  # the fraction slash
        ("５", "5", NUMBER, True),
        ("1 и 3", "13", ANY_ORDER, True),
        ("1 и 3", "13", NUMBER, False),
        # what learners write: a point's name in either script, the answer said, the unit
        # the condition asks in, a list of numbers, a mixed number
        ("AB", "АВ", NUMBER, True),
        ("ab", "АВ", NUMBER, True),
        ("AC", "АВ", NUMBER, False),
        ("Ответ: 12", "12", NUMBER, True),
        ("ответ 0,5", "0,5", NUMBER, True),
        ("12 см", "12", IN_CM, True),
        ("12см", "12", IN_CM, True),
        ("12 м", "12", IN_CM, False),  # another unit: «метр» is no word of «сантиметрах»
        ("12 см", "12", NUMBER, False),  # a unit the condition does not ask for
        ("45°", "45", IN_DEGREES, True),
        ("45 градусов", "45", IN_DEGREES, True),
        ("2,0; 5", "2; 5", NUMBER, True),
        ("2; 6", "2; 5", NUMBER, False),
        ("0; 5", "0; 5,0", NUMBER, True),
        ("2 1/2", "2,5", NUMBER, True),
        ("-1 3/4", "-1,75", NUMBER, True),
        ("ВОДА", "вода", NUMBER, True),
        # «Ответ» before a negative number keeps its minus
        ("Ответ -5", "5", NUMBER, False),
        ("Ответ -5", "-5", NUMBER, True),
        ("ответ −0,5", "0,5", NUMBER, False),
        ("Ответ — 12", "12", NUMBER, True),
        # the unit is the one the answer is asked in, not a word met elsewhere
        ("12 м", "12", "Лестница длиной 5 метров. Ответ дайте в сантиметрах.", False),
        ("5 с", "5", "Найдите скорость. Ответ дайте в метрах в секунду.", False),
        ("30 ч", "30", "Какая часть работы? Ответ дайте в рублях.", False),
        ("500 рублей", "500", "Какая часть работы? Ответ дайте в рублях.", True),
        ("12 метров", "12", "Найдите длину. Ответ дайте в метрах.", True),
        ("12 сантиметров", "12", IN_CM, True),
        ("12 см", "12", "Найдите AB (в сантиметрах).", True),
    ],
)
def test_the_rules(given: str, stored: str, condition: str, right: bool) -> None:
    assert answer_correct(given, stored, condition=condition) is right


@pytest.mark.parametrize(
    ("condition", "form"),
    [
        (ANY_ORDER, AnswerForm(digits=True, any_order=True)),
        (NOT_IMPORTANT, AnswerForm(digits=True, any_order=True)),
        ("Укажите номера верных ответов. Порядок цифр не важен.", AnswerForm(True, True)),
        ("Порядок записи цифр значения не имеет.", AnswerForm(True, True)),
        ("Порядок записи цифр в ответе не имеет значения.", AnswerForm(True, True)),
        ("Запишите цифры в произвольном порядке.", AnswerForm(True, True)),
        ("Запишите номера независимо от их порядка.", AnswerForm(True, True)),
        # the order asked is the answer's order: «213» is not «123»
        (ASCENDING, AnswerForm(digits=True, any_order=False)),
        ("Цифры укажите в порядке возрастания. Запишите номера ответов.", AnswerForm(True)),
        ("Расположите числа в порядке убывания, запишите их номера.", AnswerForm(True)),
        (MATCHING, AnswerForm(digits=True, any_order=False)),
        (
            "Выберите два верных ответа и запишите цифры, под которыми они указаны.",
            AnswerForm(True),
        ),
        (NUMBER, AnswerForm(digits=False, any_order=False)),
        ("В ответе укажите количество чисел, сами числа писать не нужно.", AnswerForm()),
    ],
)
def test_the_answers_form_is_read_from_the_condition(condition: str, form: AnswerForm) -> None:
    assert answer_form(condition) == form


@pytest.mark.parametrize(
    ("condition", "right", "wrong"),
    [
        (NOT_IMPORTANT, ["134", "431", "1, 3, 4", "4 3 1", "1;3;4", "3.1.4"], ["13", "1344"]),
        (ANY_ORDER, ["341", "1, 3, 4", "1 ; 3 ; 4"], ["135", "1, 3"]),
        (ASCENDING, ["134", "1, 3, 4", "1 3 4", "1;3;4"], ["431", "3, 1, 4"]),
        (MATCHING, ["134", "1,3,4", "1 3 4"], ["143", "4 3 1"]),
        (NUMBER, ["134", "134,0", " 134 "], ["1, 3, 4", "1 3 4", "1;3;4", "431"]),
    ],
)
def test_a_digit_string_is_compared_as_its_condition_asks(
    condition: str, right: list[str], wrong: list[str]
) -> None:
    for given in right:
        assert answer_correct(given, "134", condition=condition), (condition, given)
    for given in wrong:
        assert not answer_correct(given, "134", condition=condition), (condition, given)


async def _verdicts(calls: list[tuple[str, str]]) -> list[dict[str, object]]:
    async with Client(build_server(["problems"]), read_timeout_seconds=30) as client:
        results = [
            await client.call_tool(
                "sdamgia_check_answer",
                {"subject": "math", "problem_id": problem_id, "answer": answer},
            )
            for problem_id, answer in calls
        ]
    return [r.structured_content for r in results]  # type: ignore[misc]


@pytest.mark.django_db(transaction=True)
def test_check_answer_reads_any_order_and_separators_from_the_condition(fake_site) -> None:  # type: ignore[no-untyped-def]
    for pid, condition in (("601", NOT_IMPORTANT), ("602", ASCENDING), ("603", NUMBER)):
        fake_site.add_problem("math-ege", pid, block(pid, condition, answer="134"))
    calls = [
        ("601", "431"),
        ("601", "1, 3, 4"),
        ("601", "4 1 3"),
        ("602", "1, 3, 4"),
        ("602", "1;3;4"),
        ("602", "431"),
        ("603", "1, 3, 4"),
        ("603", "134"),
    ]
    verdicts = [v["verdict"] for v in asyncio.run(_verdicts(calls))]
    assert verdicts == [
        "correct", "correct", "correct", "correct", "correct", "incorrect", "incorrect", "correct",
    ]  # fmt: skip


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
