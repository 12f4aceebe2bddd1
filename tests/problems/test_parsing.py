"""Parsers of the СДАМ ГИА pages: the real problem blocks and the synthetic pages."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problems.parsing import (
    PageStructureError,
    clean_text,
    looks_like_challenge,
    parse_catalog,
    parse_category_page,
    parse_problem_block,
    parse_problem_page,
    parse_search_page,
    parse_test_page,
)
from tests.problems.blocks import block, listing, search_results
from tests.problems.conftest import REAL, real_items, unique_real

BASE = "https://math-ege.sdamgia.ru"
PAGES = Path(__file__).parent / "pages"
ODD = "\u00ad\u00a0\u202f\u2060"


def page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def test_all_real_blocks_parse_with_sound_fields() -> None:
    items = real_items()
    assert len(items) == 276
    for item in items:
        problem = parse_problem_block(item["block_html"], base_url=BASE)
        pid = str(item["problem_id"])
        assert problem.problem_id == pid
        assert problem.type_number == str(item["exam_task_number"])
        assert problem.condition_text
        assert problem.answer
        assert problem.answers
        assert pid not in problem.analogs
        assert len(problem.analogs) == len(set(problem.analogs))
        for text in (problem.condition_text, problem.solution_text):
            assert not set(ODD) & set(text), pid
        for url in problem.figures:
            assert url.startswith(f"{BASE}/get_file?id="), url
        assert all("/formula/svg/" in url for url in problem.formulas)
        if 'class="tex"' in item["block_html"].split('id="sol', 1)[0]:
            assert problem.formulas, pid
        assert problem.solution_kind == "own"
        assert problem.codifier


# Read by hand in the JSON file's block_html (see SOURCES.md for what was altered there).
HAND_CHECKED = {
    "27244": (
        "В треугольнике ABC угол C равен 90°, BC = 4, синус A = 0,5. Найдите АВ.",
        "8",
        ["1.2.1", "5.1.1"],
        f"{BASE}/get_file?id=66778",
        ["26094", "29833"],
    ),
    "27289": (
        "В треугольнике ABC AC = BC, AB = 8, тангенс A = дробь: числитель: 33, знаменатель: 4 корень из 33 конец дроби . Найдите AC.",
        "7",
        ["1.2.1", "5.1.1"],
        f"{BASE}/get_file?id=109592",
        ["31891", "31893"],
    ),
    "27757": (
        "В треугольнике ABC угол A равен 30°, угол В — тупой, CH — высота, угол BCH равен 22°. Найдите угол ACB. Ответ дайте в градусах.",
        "38",
        ["5.1.1", "5.5.1"],
        f"{BASE}/get_file?id=110340",
        ["47007", "47009"],
    ),
    "27605": (
        "Периметр прямоугольника равен 28, а диагональ равна 10. Найдите площадь этого прямоугольника.",
        "48",
        ["5.1.2", "5.5.5"],
        f"{BASE}/get_file?id=113307",
        ["55955", "55999"],
    ),
    "27444": (
        "Основания равнобедренной трапеции равны 17 и 87. Высота трапеции равна 14. Найдите тангенс острого угла.",
        "0,4",
        ["1.2.1", "5.1.3"],
        f"{BASE}/get_file?id=113377",
        ["45897", "517173"],
    ),
    "27866": (
        "Дуга окружности AC, не содержащая точки B, составляет 200°. А дуга окружности BC, не содержащая точки A, составляет 80°. Найдите вписанный угол ACB. Ответ дайте в градусах.",
        "40",
        ["5.1.4", "5.5.1"],
        f"{BASE}/get_file?id=66754",
        ["51299", "51343"],
    ),
    "27879": (
        "Через концы A, B дуги окружности в 62° проведены касательные AC и BC. Найдите угол ACB. Ответ дайте в градусах.",
        "118",
        ["5.1.4", "5.5.1"],
        f"{BASE}/get_file?id=66720",
        ["52009", "52055"],
    ),
    "27909": (
        "Сторона правильного треугольника равна корень из 3. Найдите радиус окружности, вписанной в этот треугольник.",
        "0,5",
        ["5.1.7", "5.5.5"],
        f"{BASE}/get_file?id=113448",
        ["53221", "53263"],
    ),
    "27876": (
        "Четырехугольник ABCD вписан в окружность. Угол ABC равен 110°, угол ABD равен 70°. Найдите угол CAD. Ответ дайте в градусах.",
        "40",
        ["5.1.4", "5.5.1"],
        f"{BASE}/get_file?id=113201",
        ["51839", "51841"],
    ),
    "27250": (
        "В треугольнике ABC угол C равен 90°, AC = 24, BC = 7. Найдите синус A.",
        "0,28",
        ["1.2.1", "5.1.1"],
        f"{BASE}/get_file?id=66778",
        ["30017", "30065"],
    ),
}


@pytest.mark.parametrize("pid", sorted(HAND_CHECKED))
def test_hand_checked_real_blocks_field_by_field(pid: str) -> None:
    blocks = unique_real(real_items())
    condition, answer, codes, figure, first_analogs = HAND_CHECKED[pid]
    problem = parse_problem_block(blocks[pid], base_url=BASE)
    assert problem.condition_text == condition
    assert problem.answer == answer
    assert problem.answers == [answer]
    assert [c.code for c in problem.codifier] == codes
    assert problem.figures == [figure]
    assert problem.analogs[:2] == first_analogs
    assert problem.solution_text.startswith("Решение")
    assert problem.internal_id.isdigit()
    assert "onclick" not in problem.condition_html
    assert 'src="https://' in problem.condition_html


def test_the_single_real_html_file_problem_27340() -> None:
    path = REAL / "math-ege_problem_27340_block_2023-01.html"
    problem = parse_problem_page(path.read_text(encoding="utf-8"), base_url=BASE)
    assert problem.problem_id == "27340"
    assert problem.type_number == "1"
    assert problem.internal_id == "918576"
    assert (
        problem.condition_text
        == "В треугольнике ABC угол C равен 90°, высота CH равна 4, BC = 8. Найдите косинус A."
    )
    assert problem.figures == [f"{BASE}/get_file?id=109384"]
    assert problem.formulas == [
        "https://ege.sdamgia.ru/formula/svg/01/01f4793c2ed47090b60a31cbc95e9f89.svg"
    ]
    assert (problem.answer, problem.answers) == ("0,5", ["0,5"])
    assert len(problem.analogs) == 23
    assert problem.analogs[:3] == ["33999", "509414", "33961"]
    assert "27340" not in problem.analogs
    assert [(c.code, c.title) for c in problem.codifier] == [
        ("1.2.1", "Синус, косинус, тангенс, котангенс произвольного угла"),
        ("5.1.1", "Треугольник"),
    ]
    assert "знаменатель: CB конец дроби =0,5" in problem.solution_text
    assert problem.solution_kind == "own"


def test_rus_block_skips_the_theory_card_and_keeps_the_source_text() -> None:
    problem = parse_problem_page(
        page("rus_ege_block_theory_probtext.html"), base_url="https://rus-ege.sdamgia.ru"
    )
    assert problem.problem_id == "5511"
    assert problem.type_number == "2"
    assert problem.condition_text.startswith("Самостоятельно подберите союз")
    assert "Что проверяется" not in problem.condition_text
    assert problem.source_text == "(1) Лес шумел за рекой. (2) Ветер гнал облака на север."
    assert problem.solution_text == "Пояснение. Подходит союз «и»."
    assert problem.solution_kind == "own"
    assert (problem.answer, problem.answers) == ("", [])
    assert problem.analogs == ["5512", "5513"]
    assert [c.code for c in problem.codifier] == ["2.3"]
    for forbidden in ("<script", "onclick", "display:none", "steal()"):
        assert forbidden not in problem.condition_html


def test_prototype_solution_alternatives_and_image_kinds() -> None:
    problem = parse_problem_block(page("math_ege_block_prototype_alternatives.html"), base_url=BASE)
    assert problem.answers == ["1,5", "3/2"]
    assert problem.solution_kind == "prototype"
    assert problem.figures == [f"{BASE}/get_file?id=42"]
    assert problem.formulas == ["https://ege.sdamgia.ru/formula/svg/ab/abcdef.svg"]
    assert problem.solution_figures == [f"{BASE}/get_file?id=43"]
    assert "дробь: числитель: 2, знаменатель: x конец дроби = 4" in problem.condition_text
    assert "data:" not in problem.condition_html


def test_unsolved_problem_is_flagged_missing() -> None:
    problem = parse_problem_block(page("math_ege_block_unsolved.html"), base_url=BASE)
    assert (problem.problem_id, problem.type_number, problem.solution_kind) == (
        "6002",
        "19",
        "missing",
    )


def test_catalog_topics_categories_and_additional_tasks() -> None:
    topics = parse_catalog(page("math_ege_catalog.html"), base_url=BASE)
    assert [(t.number, t.title, t.count, t.is_additional) for t in topics] == [
        ("1", "Планиметрия", 88, False),
        ("2", "Векторы", 12, False),
        ("Д1", "Чтение графиков и диаграмм", 40, True),
    ]
    assert [(c.category_id, c.title, c.count) for c in topics[0].categories] == [
        ("79", "Решение прямоугольного треугольника", 56),
        ("90", "Равнобедренный треугольник", 32),
    ]
    with pytest.raises(PageStructureError, match="cat_main"):
        parse_catalog("<html><body><div class='Root'></div></body></html>", base_url=BASE)


def test_listing_and_search_pages() -> None:
    blocks = [
        (str(100 + i), block(str(100 + i), f"Задача {i}.", analogs=("999",))) for i in range(5)
    ]
    listing_page = parse_category_page(listing(blocks, page=2, total=3), base_url=BASE)
    assert (listing_page.page, listing_page.total_pages) == (2, 3)
    assert listing_page.ids == ["100", "101", "102", "103", "104"]
    search = parse_search_page(
        search_results([b for _, b in blocks] + [blocks[0][1]]), base_url=BASE
    )
    assert search.ids == ["100", "101", "102", "103", "104"]  # analog ids (999) never count
    empty = parse_search_page("<html><body><p>Ничего не найдено</p></body></html>", base_url=BASE)
    assert empty.ids == []


def test_test_page_with_hidden_numbers() -> None:
    hidden = '<html><body><div class="prob_maindiv" data-id="77"><span class="prob_nums">Тип 1 № </span><div class="pbody" id="body77">Задача.</div></div></body></html>'
    parsed = parse_test_page(hidden, base_url=BASE)
    assert (parsed.ids, parsed.ids_hidden, parsed.problem_count) == ([], True, 1)


def test_a_block_cut_short_is_no_hidden_test_nor_an_empty_search() -> None:
    cut = '<html><body><div class="prob_maindiv" id="maindiv1"><div class="nobreak"><span class="pr</body></html>'
    with pytest.raises(PageStructureError, match="neither its number nor its condition"):
        parse_test_page(cut, base_url=BASE)
    with pytest.raises(PageStructureError, match="neither its number nor its condition"):
        parse_search_page(cut, base_url=BASE)


def test_challenge_pages_are_recognized() -> None:
    assert looks_like_challenge(page("challenge.html"))
    assert not looks_like_challenge(page("rus_ege_block_theory_probtext.html"))


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   ",
        "\x00\xff garbage",
        "<div class='prob_maindiv'",
        "<html><body>no blocks</body></html>",
    ],
)
def test_garbage_is_a_page_structure_error_or_an_empty_problem(html: str) -> None:
    try:
        problem = parse_problem_page(html, base_url=BASE)
    except PageStructureError:
        return
    assert problem.problem_id == ""
    assert problem.condition_text == ""


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_clean_text_is_idempotent_and_leaves_no_odd_spaces(text: str) -> None:
    once = clean_text(text)
    assert clean_text(once) == once
    assert not set(ODD) & set(once)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=4400), st.integers(min_value=0, max_value=40))
def test_truncated_real_markup_never_raises_anything_else(cut: int, skip: int) -> None:
    html = (REAL / "math-ege_problem_27340_block_2023-01.html").read_text(encoding="utf-8")
    fragment = html[skip : skip + cut]
    with contextlib.suppress(PageStructureError):  # the only exception allowed
        parse_problem_block(fragment, base_url=BASE)
