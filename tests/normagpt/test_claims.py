"""Claims checked against the clause text: reading claims (pure), checking them against the
demo corpus, and whole runs with a model that errs the way real models do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from normagpt import claims as c
from normagpt import services
from normagpt.agent.store import store_new
from normagpt.claim_results import CONFIRMED, MARK, UNCONFIRMED, ClaimResult, answer_marked
from normagpt.tasks import run_advance_task
from normagpt.verification import Checker
from tests.normagpt.scripted_llm import (
    CORROSION_STEP,
    COVER_STEP,
    final,
    plan,
    step,
    verdict,
)

pytestmark = pytest.mark.django_db

# --- reading claims ------------------------------------------------------------------------


def test_sentences_keep_references_whole() -> None:
    text = (
        "**Не менее 20 мм** (п. 10.3.2 СП 63.13330.2018). Для сборных — по пп. 10.3.3 и 10.3.4.\n"
        "- В агрессивной среде 45 мм по п. 5.2.7 СП 2.13130.2020.\n\n"
        "Уточните класс среды!"
    )
    assert c.sentences_split(text) == [
        "Не менее 20 мм (п. 10.3.2 СП 63.13330.2018).",
        "Для сборных — по пп. 10.3.3 и 10.3.4.",
        "В агрессивной среде 45 мм по п. 5.2.7 СП 2.13130.2020.",
        "Уточните класс среды!",
    ]


def test_a_source_in_brackets_after_an_abbreviation_stays_with_its_sentence() -> None:
    """«… штраф составляет 500 руб. (п. 18.5 СанПиН 2.2.1).»: «руб.» is no sentence's end,
    and the bracket alone is no claim of its own (it held no value to fail, and was
    «confirmed»: a trap's confabulation of the benchmark answered as right). A sentence in
    brackets that cites nothing stays apart."""
    text = (
        "За стоянку на газоне штраф составляет 500 руб. (п. 18.5 СанПиН 2.2.1). Сумма — "
        "10 тыс. руб. (табл. 5.1 СП 1.13130.2020). Высота 2,5 м. (Это не так.)"
    )
    assert c.sentences_split(text) == [
        "За стоянку на газоне штраф составляет 500 руб. (п. 18.5 СанПиН 2.2.1).",
        "Сумма — 10 тыс. руб. (табл. 5.1 СП 1.13130.2020).",
        "Высота 2,5 м.",
        "(Это не так.)",
    ]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("15 мм (п. 10.3.2 СП 63.13330.2018)", [("clause", "10.3.2", "СП 63.13330.2018")]),
        ("по пункту 10.3.2 СП 63", [("clause", "10.3.2", "СП 63")]),
        ("«10.3.2 СП 63…» требует", [("clause", "10.3.2", "СП 63")]),
        ("СП 28.13330.2017, п. 5.5.1", [("clause", "5.5.1", "СП 28.13330.2017")]),
        ("по табл. 5.1 и таблице Б.2", [("table", "5.1", ""), ("table", "Б.2", "")]),
        ("пп. 10.3.3 и 10.3.4", [("clause", "10.3.3", ""), ("clause", "10.3.4", "")]),
        ("согласно 10.3.2 не менее 20 мм", [("clause", "10.3.2", "")]),
        ("класса Ф1.3 и высотой 28 м", []),
        ("коэффициент 1.5 по ГОСТ 10180-2012", []),
    ],
)
def test_references_are_found_however_written(claim: str, expected: list) -> None:
    found = [(r.kind, r.number, r.document) for r in c.references_find(claim)]
    assert found == expected


def test_values_are_numbers_with_units_and_bounds() -> None:
    values = c.values_find(
        "не менее 20 мм; не должна превышать 50 °С; минус 40 °С; от 20 до 30 мм; 0,5 %; "
        "REI 60 по п. 10.3.2 СП 63.13330.2018 в 2018 году"
    )
    assert [(v.number, v.unit, v.bound) for v in values] == [
        (20.0, "мм", "min"),
        (50.0, "°С", "max"),
        (-40.0, "°С", ""),
        (20.0, "мм", "min"),
        (30.0, "мм", "max"),
        (0.5, "%", ""),
    ]


@given(
    millimetres=st.integers(min_value=1, max_value=99_999),
    unit=st.sampled_from([("мм", 1), ("см", 10), ("м", 1000)]),
)
def test_a_length_is_held_in_any_unit(millimetres: int, unit: tuple[str, int]) -> None:
    name, per = unit
    written = f"{millimetres / per:.6g}".replace(".", ",")
    [claimed] = c.values_find(f"{written} {name}")
    [held] = c.values_find(f"{millimetres} мм")
    assert c.value_held(claimed, [held]) is held
    [other] = c.values_find(f"{millimetres + 1} мм")
    assert c.value_held(claimed, [other]) is None


@pytest.mark.parametrize(
    "cited",
    ["стр. 2", "с. 12", "см. страницу 2", "на странице 3–4", "p. 2", "стр.2"],
)
def test_a_page_cited_is_no_value(cited: str) -> None:
    """A model cites the page it read: its number is where the value is, not one."""
    values = c.values_find(f"Не менее 25 мм (СП 63.13330.2018, п. 10.3.2, {cited}).")
    assert [(v.number, v.unit) for v in values] == [(25, "мм")]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Скорость не более 2 м/с. 3 раза в смену — проверка.", [(2, "м/с"), (3, "раз")]),
        ("Выдержка не более 5 с. 2 м от стены.", [(5, "с"), (2, "м")]),
        ("Не менее 30 с. 15 мм по толщине.", [(30, "с"), (15, "мм")]),
        ("Слой 12,5 мм (стр. 12,5).", [(12.5, "мм"), (12.5, "")]),
    ],
)
def test_a_number_after_seconds_or_a_decimal_is_no_page(text: str, values: list) -> None:
    """«с.» after a number is seconds, and a decimal is not cut to a page's digits."""
    assert [(v.number, v.unit) for v in c.values_find(text)] == values


def test_bounds_said_as_nearer_farther_earlier_later_longer() -> None:
    """«не ближе», «не ранее» bound from below; «не дальше», «не позднее», «не дольше»,
    «не глубже» from above; «не должен быть более», «не должен превышать» (masculine too),
    «не более чем на» (not «более чем»). СП 8.13130.2020 п. 8.8 (the dataset's text) puts a hydrant at
    most 2,5 м from the roadway and at least 5 м from walls: «не ближе 2,5 м от стен» is
    not what it says."""
    values = c.values_find(
        "не ближе 5 м; не дальше 100 м; не ранее 7 сут; не позднее 10 сут; не дольше 60 с; "
        "не глубже 0,5 м; не должен быть более 3 мм; не должно быть менее 2 м; не должен "
        "превышать 5 мм; не более чем на 1,1 м; более чем на 2 м"
    )
    assert [(v.number, v.bound) for v in values] == [
        (5.0, "min"),
        (100.0, "max"),
        (7.0, "min"),
        (10.0, "max"),
        (60.0, "max"),
        (0.5, "max"),
        (3.0, "max"),
        (2.0, "min"),
        (5.0, "max"),
        (1.1, "max"),
        (2.0, "min"),
    ]
    clause = (
        "8.8 Пожарные гидранты необходимо предусматривать вдоль автомобильных дорог на "
        "расстоянии не более 2,5 м от края проезжей части, но не ближе 5 м от стен зданий; "
        "допускается располагать\nгидранты на проезжей части."
    )
    [claimed] = c.values_find("не ближе 2,5 м")
    assert c.value_held(claimed, c.values_find(clause)) is None
    [claimed] = c.values_find("не ближе 5 м")
    assert c.value_held(claimed, c.values_find(clause)) is not None


def test_the_opposite_bound_does_not_hold() -> None:
    [claimed] = c.values_find("не более 20 мм")
    held = c.values_find("принимается не менее 20 мм")
    assert c.value_held(claimed, held) is None
    assert c.opposite_bound(claimed, held) == held[0]


def test_quotes_are_found_across_line_breaks_and_ellipses() -> None:
    text = "10.3.2 Минимальная толщина защитного слоя бетона рабочей арма-\nтуры для плит"
    assert c.quote_held("толщина защитного слоя … рабочей арматуры", text)
    assert not c.quote_held("толщина защитного слоя в бассейнах", text)
    assert c.quotes_find("по «10.3.2 СП 63» и «защитный слой бетона»") == ["защитный слой бетона"]


# --- checking claims against the corpus -------------------------------------------------------

PAGES = [{"document": "СП 63.13330.2018"}, {"document": "СП 28.13330.2017"}]


def check(text: str, sources: list | None = None) -> list:
    return Checker(sources=sources or [], pages=PAGES).answer(text)


def test_a_right_claim_is_confirmed(corpus) -> None:  # type: ignore[no-untyped-def]
    [result] = check("Не менее 20 мм для плит перекрытия (п. 10.3.2 СП 63.13330.2018).")
    assert result.confirmed, result.reason
    assert (result.document_code, result.clause_number, result.page_number) == (
        "СП 63.13330.2018",
        "10.3.2",
        2,
    )


def test_a_wrong_value_under_a_real_clause_says_what_the_clause_holds(corpus) -> None:  # type: ignore[no-untyped-def]
    [result] = check("**15 мм** (п. 10.3.2 СП 63.13330.2018).")
    assert not result.confirmed
    assert result.reason.startswith("значения 15 мм нет в п. 10.3.2 СП 63.13330.2018")
    assert "20 мм" in result.reason
    assert "25 мм" in result.reason


def test_the_same_value_in_other_units_holds_and_the_opposite_bound_does_not(corpus) -> None:  # type: ignore[no-untyped-def]
    [metres] = check("Не менее 0,02 м для плит (п. 10.3.2 СП 63).")
    assert metres.confirmed, metres.reason
    [upper] = check("Не более 20 мм для плит (п. 10.3.2 СП 63).")
    assert not upper.confirmed
    assert "не менее 20 мм, а не не более 20 мм" in upper.reason


def test_a_clause_named_only_in_the_text_is_checked(corpus) -> None:  # type: ignore[no-untyped-def]
    [result] = check("В среднеагрессивной среде защитный слой 45 мм по п. 5.5.2 СП 28.13330.2017.")
    assert not result.confirmed
    assert "значения 45 мм нет в п. 5.5.2 СП 28.13330.2017" in result.reason
    assert "30 мм" in result.reason


def test_a_right_claim_citing_its_page_is_confirmed(corpus) -> None:  # type: ignore[no-untyped-def]
    [result] = check(
        "При повышенной влажности в закрытых помещениях защитный слой — не менее 25 мм "
        "(СП 63.13330.2018, п. 10.3.2, стр. 2)."
    )
    assert result.confirmed, result.reason


def test_each_row_of_a_markdown_table_is_a_claim_with_its_condition(corpus) -> None:  # type: ignore[no-untyped-def]
    """A model answers in a table: each row is checked as a sentence saying its condition
    and its value (the unit from the column's head). Rows giving another condition's value
    are flagged; a right row holds."""
    answer = (
        "Толщина защитного слоя по п. 10.3.2 СП 63.13330.2018:\n\n"
        "| Условия эксплуатации | Толщина защитного слоя, мм |\n"
        "|---|---|\n"
        "| На открытом воздухе | 40 |\n"
        "| В грунте | 30 |\n"
        "| В закрытых помещениях при повышенной влажности | 25 |\n"
    )
    sources = [{"document": "СП 63.13330.2018", "clause": "10.3.2", "page": 2}]
    results = check(answer, sources)
    rows = {r.claim: r for r in results if "—" in r.claim}
    assert list(rows) == [
        "Толщина защитного слоя: на открытом воздухе — 40 мм.",
        "Толщина защитного слоя: в грунте — 30 мм.",
        "Толщина защитного слоя: в закрытых помещениях при повышенной влажности — 25 мм.",
    ]
    assert [r.confirmed for r in rows.values()] == [False, False, True], [
        r.reason for r in rows.values()
    ]
    assert "не менее 40 мм" in rows["Толщина защитного слоя: в грунте — 30 мм."].reason
    marked = answer_marked(answer, results, lead=False)
    assert marked.count("*[не подтверждено:") == 2


def test_a_tables_rows_are_said_with_their_grades_units_and_keys() -> None:
    table = (
        "| Условия | Толщина, мм |\n|---|---|\n"
        "| На открытом воздухе | не менее 30 |\n| Бетон B25 | 20–25 |\n| REI 60 | 3 шт. |\n\n"
        "| Диаметр, мм | Шаг, мм |\n|---|---|\n| 12 | 200 |\n| 01.02.2024 | 10.3.2 |\n"
    )
    said = [line[2:] for line in c.tables_read(table).splitlines() if line.startswith("- ")]
    assert said == [
        "Толщина: на открытом воздухе — не менее 30 мм.",  # a bound keeps the head's unit
        "Толщина: бетон B25 — 20–25 мм.",  # a grade keeps its letter's case
        "Толщина: REI 60 — 3 шт.",
        "Шаг: диаметр 12 мм — 200 мм.",  # a row of values: its first is its key
        "01.02.2024, 10.3.2.",  # a date and a clause's number are no values
    ]
    assert [g.text for g in c.said(said[1]).grades] == ["B25"]


def test_a_links_address_is_no_word_of_a_claim(corpus) -> None:  # type: ignore[no-untyped-def]
    """A Markdown link is its text: the words of its address («http», «example») are no
    words the cited clause must say."""
    pointed = check("Подробнее см. *п. 10.3.1 СП 63.13330.2018* и [страницу](http://example.com).")
    assert all(r.confirmed for r in pointed), [r.reason for r in pointed]
    [right] = check(
        "Не менее 20 мм для плит перекрытия ([п. 10.3.2 СП 63.13330.2018](http://example.com/x))."
    )
    assert right.confirmed, right.reason


def test_a_missing_clause_or_document_is_said(corpus) -> None:  # type: ignore[no-untyped-def]
    [clause] = check("Не менее 50 мм (п. 77.7.7 СП 63.13330.2018).")
    assert clause.reason == "пункта 77.7.7 нет в СП 63.13330.2018"
    [document] = check("Не менее 50 мм (п. 5.2.7 СП 2.13130.2020).")
    assert document.reason == "документа СП 2.13130.2020 нет в корпусе"


def test_a_clause_cited_on_the_wrong_page_is_unconfirmed(corpus) -> None:  # type: ignore[no-untyped-def]
    [result] = check(
        "Расстояние в свету не менее 25 мм (п. 10.4.1 СП 63.13330.2018).",
        sources=[{"document": "СП 63.13330.2018", "clause": "10.4.1", "page": 2}],
    )
    assert not result.confirmed
    assert result.reason == "п. 10.4.1 СП 63.13330.2018 не на стр. 2: он на стр. 3"


def test_a_quote_the_clause_lacks_and_a_word_it_never_says(corpus) -> None:  # type: ignore[no-untyped-def]
    [quote] = check("По п. 10.3.2 СП 63 «в чашах бассейнов защитный слой» не менее 20 мм.")
    assert "нет цитаты «в чашах бассейнов защитный слой»" in quote.reason
    [word] = check("Для чаш бассейнов защитный слой не менее 20 мм (п. 10.3.2 СП 63.13330.2018).")
    assert not word.confirmed
    assert "не говорит о «бассейнов»" in word.reason


def test_a_claim_without_a_reference_is_checked_against_its_paragraph(corpus) -> None:  # type: ignore[no-untyped-def]
    results = check(
        "**Ответ: 25 мм.** Так требует п. 10.3.2 СП 63.13330.2018 для повышенной влажности."
    )
    assert [r.confirmed for r in results] == [True, True]
    [alone] = check("Защитный слой — 12 мм.")
    assert alone.reason == "не указан пункт, которым подтверждается это утверждение"


def test_the_answer_says_first_what_is_unconfirmed(corpus) -> None:  # type: ignore[no-untyped-def]
    text = "Не менее 20 мм (п. 10.3.2 СП 63). В агрессивной среде — 45 мм (п. 5.5.2 СП 28)."
    results = check(text)
    marked = answer_marked(text, results)
    lead, _, body = marked.partition("\n\n")
    assert (
        lead
        == "**Не всё подтверждено нормами:** 1 из 2 утверждений ответа не подтверждаются текстом пунктов (отмечены ниже)."
    )
    assert body.startswith("Не менее 20 мм (п. 10.3.2 СП 63). В агрессивной среде")
    assert body.endswith("(п. 5.5.2 СП 28). *[не подтверждено: " + results[1].reason + "]*")
    nothing = answer_marked("Ровно 45 мм (п. 5.5.2 СП 28).", check("Ровно 45 мм (п. 5.5.2 СП 28)."))
    assert nothing.startswith("**Подтверждённого ответа в нормах корпуса нет:**")


def test_each_mark_follows_its_own_claim_where_two_end_alike(corpus) -> None:  # type: ignore[no-untyped-def]
    """Two sentences citing the same clause end alike: the mark goes after the one that is
    unconfirmed, not after the last sentence ending so."""
    wrong = "В грунте защитный слой — не менее 30 мм (п. 10.3.2 СП 63.13330.2018)."
    right = "На открытом воздухе — не менее 30 мм (п. 10.3.2 СП 63.13330.2018)."
    results = check(f"{wrong}\n\n{right}")
    assert [r.confirmed for r in results] == [False, True], [r.reason for r in results]
    body = answer_marked(f"{wrong}\n\n{right}", results, lead=False)
    assert body == f"{wrong}{MARK.format(reason=results[0].reason)}\n\n{right}"
    both = answer_marked(f"{wrong}\n\n{wrong}", check(f"{wrong}\n\n{wrong}"), lead=False)
    assert [part.endswith("]*") for part in both.split("\n\n")] == [True, True]


def test_the_same_sentence_said_twice_is_marked_where_it_is_unconfirmed() -> None:
    said = "Не менее 20 мм (п. 10.3.2 СП 63)."
    results = [
        ClaimResult(0, "answer", said, UNCONFIRMED, reason="другой день"),
        ClaimResult(1, "answer", said, CONFIRMED),
        ClaimResult(2, "finding", "Цитата, которой нет в ответе.", UNCONFIRMED, reason="нет"),
    ]
    marked = answer_marked(f"{said} **{said}**", results, lead=False)
    assert marked == (
        f"{said}{MARK.format(reason='другой день')} **{said}**"
        f"\n\n- Цитата, которой нет в ответе.{MARK.format(reason='нет')}"
    )


def test_claims_out_of_order_are_each_marked_after_themselves() -> None:
    one, two = "Первое: 20 мм (п. 1).", "Второе: 30 мм (п. 2)."
    long = "причина " * 20  # a mark longer than the claim after it
    results = [
        ClaimResult(0, "answer", two, UNCONFIRMED, reason="b"),
        ClaimResult(1, "answer", one, UNCONFIRMED, reason=long),
        ClaimResult(2, "answer", two, UNCONFIRMED, reason="c"),
    ]
    marked = answer_marked(f"{one} {two} {two}", results, lead=False)
    assert marked == (
        f"{one}{MARK.format(reason=long)} {two}{MARK.format(reason='b')}"
        f" {two}{MARK.format(reason='c')}"
    )


def test_an_executor_quote_is_checked_against_its_clause_and_page(corpus) -> None:  # type: ignore[no-untyped-def]
    checker = Checker(sources=[], pages=PAGES)
    right, wrong_page, made_up = checker.findings(
        [
            {
                "document": "СП 63.13330.2018",
                "clause": "10.3.2",
                "page": 2,
                "quote": "20 мм — в закрытых помещениях",
            },
            {"document": "СП 63.13330.2018", "clause": "10.3.2", "page": 1, "quote": "20 мм"},
            {
                "document": "СП 63.13330.2018",
                "clause": "10.3.2",
                "page": 2,
                "quote": "15 мм — в бассейнах",
            },
        ]
    )
    assert right.confirmed, right.reason
    assert wrong_page.reason == "п. 10.3.2 СП 63.13330.2018 не на стр. 1: он на стр. 2"
    assert "значения 15 мм нет" in made_up.reason
    assert "нет цитаты" in made_up.reason


# --- whole runs ------------------------------------------------------------------------------

RIGHT = (
    "**Не менее 20 мм** для плит перекрытия в закрытых помещениях при нормальной влажности "
    "(п. 10.3.2 СП 63.13330.2018). В слабоагрессивной среде защитный слой увеличивают не менее "
    "чем на 5 мм (п. 5.5.1 СП 28.13330.2017)."
)
WRONG = (
    "**Не менее 15 мм** для плит перекрытия (п. 10.3.2 СП 63.13330.2018). "
    "В среднеагрессивной среде — 45 мм по п. 5.5.2 СП 28.13330.2017. "
    "Расстояние между стержнями не менее 25 мм (п. 10.4.1 СП 63.13330.2018). "
    "Пункт 10.3.1 СП 63.13330.2018 требует «защитный слой в чашах бассейнов»."
)
FINDINGS = [
    (
        "СП 63.13330.2018",
        "10.3.2",
        2,
        "20 мм — в закрытых помещениях при нормальной и пониженной влажности",
    ),
    ("СП 28.13330.2017", "5.5.1", 1, "увеличивают не менее чем на 5 мм"),
]


def run_with(llm, answer: str, *sources: tuple[str, str, int]):  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(COVER_STEP, CORROSION_STEP)],
        executor=[step(FINDINGS[0]), step(FINDINGS[1])],
        judge=[verdict("CONTINUE"), verdict("FINALIZE")],
        finalizer=[final(answer, *sources)],
    )
    run = services.run_create(question="Какая толщина защитного слоя бетона плиты?")
    run_advance_task(run.pk)
    run.refresh_from_db()
    return run


def test_a_model_that_answers_right_gets_every_claim_confirmed(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    run = run_with(llm, RIGHT, ("СП 63.13330.2018", "10.3.2", 2), ("СП 28.13330.2017", "5.5.1", 1))
    assert run.status == "completed"
    assert not run.incomplete, run.incomplete_reason
    checks = list(run.checks.order_by("index"))
    assert [(x.origin, x.verdict) for x in checks] == [
        ("finding", "confirmed"),
        ("finding", "confirmed"),
        ("answer", "confirmed"),
        ("answer", "confirmed"),
    ]
    assert run.final_answer == RIGHT


def test_a_model_that_errs_gets_each_wrong_claim_unconfirmed_with_its_reason(corpus, llm) -> None:  # type: ignore[no-untyped-def]
    run = run_with(
        llm,
        WRONG,
        ("СП 63.13330.2018", "10.3.2", 2),
        ("СП 63.13330.2018", "10.4.1", 2),  # 10.4.1 is on page 3
        ("СП 63.13330.2018", "10.3.1", 2),
    )
    assert run.status == "completed"
    assert run.incomplete
    assert run.incomplete_reason.startswith("4 из 4 утверждений ответа не подтверждаются")
    assert run.final_answer.startswith("**Подтверждённого ответа в нормах корпуса нет:**")
    reasons = {
        x.clause_number: x.reason for x in run.checks.filter(origin="answer", verdict="unconfirmed")
    }
    assert reasons["10.3.2"].startswith("значения не менее 15 мм нет в п. 10.3.2 СП 63.13330.2018")
    assert "в пункте: не менее 20 мм" in reasons["10.3.2"]
    assert reasons["5.5.2"].startswith("значения 45 мм нет в п. 5.5.2 СП 28.13330.2017")
    assert reasons["10.4.1"] == "п. 10.4.1 СП 63.13330.2018 не на стр. 2: он на стр. 3"
    assert "нет цитаты «защитный слой в чашах бассейнов»" in reasons["10.3.1"]
    for reason in reasons.values():
        assert f"*[не подтверждено: {reason}]*" in run.final_answer


def test_each_check_is_shown_on_the_page_and_over_rest(corpus, llm, admin_client) -> None:  # type: ignore[no-untyped-def]
    run = run_with(llm, WRONG, ("СП 63.13330.2018", "10.3.2", 2))
    page = admin_client.get(f"/normagpt/runs/{run.public_id}/").content.decode()
    unconfirmed = run.checks.filter(origin="answer", verdict="unconfirmed").count()
    assert unconfirmed >= 3
    assert page.count('data-verdict="unconfirmed" data-origin="answer"') == unconfirmed
    assert page.count('data-verdict="confirmed" data-origin="finding"') == 2
    assert "значения не менее 15 мм нет в п. 10.3.2 СП 63.13330.2018" in page
    assert "?clause=10.3.2#cited" in page  # the claim's clause, marked on its page
    detail = admin_client.get(f"/api/normagpt/runs/{run.public_id}/").json()
    verdicts = [(x["origin"], x["clause"], x["verdict"]) for x in detail["checks"]]
    assert verdicts[:3] == [
        ("finding", "10.3.2", "confirmed"),
        ("finding", "5.5.1", "confirmed"),
        ("answer", "10.3.2", "unconfirmed"),
    ]


def test_the_failure_fallback_checks_the_executor_quotes(corpus, llm, settings) -> None:  # type: ignore[no-untyped-def]
    llm.play(
        planner=[plan(COVER_STEP)],
        executor=[step(("СП 63.13330.2018", "10.3.2", 2, "15 мм — в бассейнах"))],
        judge=[verdict("FINALIZE")],
        finalizer=[{"status": 500}],
    )
    settings.NORMAGPT_LLM_RETRIES = 0
    run = services.run_create(question="Какая толщина защитного слоя бетона плиты?")
    run_advance_task(run.pk)  # the model fails: the task fails the run
    run.refresh_from_db()
    assert run.status == "failed"
    fallback = list(run.checks.filter(origin="fallback"))
    assert [x.verdict for x in fallback] == ["unconfirmed"]
    assert "нет цитаты «15 мм — в бассейнах»" in fallback[0].reason
    assert "*[не подтверждено:" in run.final_answer


def test_a_store_without_findings_checks_nothing(corpus) -> None:  # type: ignore[no-untyped-def]
    from normagpt.agent.store import fallback_answer

    shared = store_new("Вопрос о защитном слое?")
    answer = fallback_answer(shared, "предел шагов")
    assert answer["checks"] == []
    assert "До остановки ничего подходящего не найдено." in answer["answer"]
