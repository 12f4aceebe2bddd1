"""Real tables and clauses read as a reader reads them (issue 49): a value confirmed only for
the row, column, list item or «соответственно» place that gives it; another one's value
flagged with the condition the clause gives it for.

The texts are the dataset's as normagpt's reader split them (tests/fixtures/norms/reading.json,
SOURCES.md): OCR errors kept («з,о» for 3,0, «П1» and «Ш» for III, «СО» for С0, «газе1»), the
layouts the reader left (a row's cells one a line, heads broken over lines, a table continued
overleaf with its heading repeated, a clause holding its table).
"""

from __future__ import annotations

import pytest

from normagpt import claims as c
from normagpt.conditions import clause_segments, table_segments
from normagpt.conditions.words import words_of
from tests.normagpt.material import case_id, verdict_holds
from tests.normagpt.material import texts as material_texts

FIXTURE = "reading.json"  # tests/fixtures/norms/


def texts(document: str, number: str) -> list[tuple[str, bool]]:
    """The texts of a clause or table («табл. 38»: every row the reader made of it)."""
    return material_texts(FIXTURE, document, number)


S1, S4, S7, S8 = "СП 1.13130.2020", "СП 4.13130.2013", "СП 7.13130.2013", "СП 8.13130.2020"
S15, S16, S17, S20 = "СП 15.13330.2012", "СП 16.13330.2017", "СП 17.13330.2017", "СП 20.13330.2016"
S22, S24, S32, S44 = "СП 22.13330.2016", "СП 24.13330.2011", "СП 32.13330.2018", "СП 44.13330.2011"
S50, S60, S70, S73 = "СП 50.13330.2012", "СП 60.13330.2020", "СП 70.13330.2012", "СП 73.13330.2016"
S118, S256, S327 = "СП 118.13330.2022", "СП 256.1325800.2016", "СП 327.1325800.2017"
S402, PUE = "СП 402.1325800.2018", "Правила ПУЭ"

# (document, clause, claim, verdict, words the reason holds)
CASES = [
    # «на высоте 800 мм» states where a thing stands: the value, not a condition's bound
    (S73, "табл. 3", "Умывальник в жилом здании ставят на высоте 800 мм до верха борта.",
     "confirmed", []),
    (S73, "табл. 3", "Умывальник в жилом здании ставят на высоте 700 мм до верха борта.",
     "other_condition", ["в школах и детских лечебных учреждениях", "800"]),
    # «150 мм — 35 м, 200—450 мм — 50 м»: a diameter, a dash, its distance
    (S32, "6.3.1", "Смотровые колодцы на прямых участках сети из труб диаметром 150 мм ставят "
     "через 35 м.", "confirmed", []),
    (S32, "6.3.1", "Смотровые колодцы на прямых участках сети из труб диаметром 150 мм ставят "
     "через 50 м.", "other_condition", ["200— 450 мм", "35 м"]),
    (S32, "6.3.1", "Смотровые колодцы на прямых участках сети из труб диаметром 150 мм ставят "
     "через 40 м.", "value_missing", []),
    # a multiple: «3-кратного суточного притока»
    (S32, "9.2.13.3", "Объем септика при расходе до 25 ЭЧЖ — не менее 3-кратного суточного "
     "притока.", "confirmed", []),
    (S32, "9.2.13.3", "Объем септика при расходе до 25 ЭЧЖ — не менее 2,5-кратного суточного "
     "притока.", "other_condition", ["при расходе свыше 25 ЭЧЖ", "не менее 3 раз"]),
    # the words a claim writes out are what the clause abbreviates («ОСП»)
    (S17, "7.3", "Настил из ориентированно-стружечных плит под металлическую кровлю — толщиной "
     "не менее 22 мм.", "confirmed", []),
    (S17, "7.3", "Настил из ориентированно-стружечных плит под металлическую кровлю — толщиной "
     "не менее 18 мм.", "other_condition", ["из фанеры повышенной водостойкости"]),
    # values given «соответственно»: one by one, in order, with each list of conditions
    (PUE, "1.7.101", "Сопротивление заземляющего устройства нейтрали трансформатора при "
     "линейном напряжении 380 В трехфазного источника — не более 4 Ом.", "confirmed", []),
    (PUE, "1.7.101", "Сопротивление заземляющего устройства нейтрали трансформатора при "
     "линейном напряжении 380 В трехфазного источника — не более 8 Ом.",
     "other_condition", ["220 В источника трехфазного тока", "4 Ом"]),
    # rows opening with a number under a head naming its unit, heads over two lines each, a
    # negated adjective the other condition
    (S7, "табл. Б.1", "При толщине стенки печи 120 мм и открытой отступке до незащищенной "
     "стены — 260 мм.", "confirmed", []),
    (S7, "табл. Б.1", "При толщине стенки печи 120 мм и открытой отступке до незащищенной "
     "стены — 200 мм.", "other_condition", ["120 › Открытая › защищенной от возгорания", "260"]),
    (S402, "табл. Д.5", "Для стального газопровода диаметром 20 мм при горизонтальной прокладке "
     "крепления — не реже чем через 1,5 м.", "confirmed", []),
    (S402, "табл. Д.5", "Для стального газопровода диаметром 20 мм при горизонтальной прокладке "
     "крепления — не реже чем через 2,0 м.", "other_condition", ["20 › вертикальной"]),
    # a clause holding its table («20.1 Таблица 20.1»), heads in two levels
    (S327, "20.1", "При перепаде температур 60 °С швы в лицевом слое из керамического кирпича "
     "на прямолинейном участке — через 14 м.", "confirmed", []),
    (S327, "20.1", "При перепаде температур 60 °С швы в лицевом слое из керамического кирпича "
     "на прямолинейном участке — через 8 м.", "other_condition",
     ["из силикатного кирпича, бетонных, ячеистобетонных камней › Прямолинейная"]),
    # a row of numbers under the heading heads the columns; a footnote's star is no note
    (S16, "табл. 38", "Катет двусторонних угловых швов таврового соединения при толщине "
     "элемента 12 мм — 6 мм.", "confirmed", []),
    (S16, "табл. 38", "Катет двусторонних угловых швов таврового соединения при толщине "
     "элемента 12 мм — 8 мм.", "other_condition",
     ["Угловое и тавровое › с односторонними угловыми швами › 11-16"]),
    (S256, "табл. 7.1", "Удельная нагрузка квартир с электрическими плитами при числе квартир от "
     "одной до пяти — 10 кВт/квартиру.", "confirmed", []),
    (S256, "табл. 7.1", "Удельная нагрузка квартир с электрическими плитами при числе квартир от "
     "одной до пяти — 4,5 кВт/квартиру.", "other_condition", ["на природном газе1 › 1— 5"]),
    # codes as a row's label and a column's head («I, II, III» / «СО»), OCR's «П1», «Ш» for III
    (S4, "табл. 1", "Между жилыми зданиями I–III степени огнестойкости класса С0 — не менее 6 м.",
     "confirmed", []),
    (S4, "табл. 1", "Между жилыми зданиями I–III степени огнестойкости класса С0 — не менее 8 м.",
     "other_condition", ["I, II, III СО › II, III С1"]),
    # «3 этажа и выше» heads a column; the heads name the last cells; a repeated heading
    (S8, "табл. 1", "В поселке до одной тысячи жителей при застройке не выше двух этажей расход "
     "на наружное пожаротушение — 5 л/с.", "confirmed", []),
    (S8, "табл. 1", "В поселке до одной тысячи жителей при застройке не выше двух этажей расход "
     "на наружное пожаротушение — 10 л/с.", "other_condition", ["3 этажа и выше"]),
    # heads as the one run of short lower-case lines; «з,о» read as 3,0
    (S24, "табл. 7.20", "Для кирпичных зданий на плотных песках допустимая скорость колебаний — "
     "не более 2,0 см/с.", "confirmed", []),
    (S24, "табл. 7.20", "Для кирпичных зданий на плотных песках допустимая скорость колебаний — "
     "не более 0,4 см/с.", "other_condition", ["Кирпичные блочные и панельные › рыхлые"]),
    # a table laid across: codes over values
    (S20, "табл. 10.1", "Вес снегового покрова для III снегового района — 1,5 кПа.", "confirmed",
     []),
    (S20, "табл. 10.1", "Вес снегового покрова для III снегового района — 2,0 кПа.",
     "other_condition", ["IV", "1,5"]),
    # a row listing its conditions, then its cells in the same order
    (S70, "табл. 5.11", "Прочность бетона незагруженных монолитных конструкций при распалубке "
     "горизонтальных поверхностей при пролете до 6 м — не менее 70 %.", "confirmed", []),
    (S70, "табл. 5.11", "Прочность бетона незагруженных монолитных конструкций при распалубке "
     "горизонтальных поверхностей при пролете до 6 м — не менее 80 %.", "other_condition",
     ["св. 6 м"]),
    # numbered rows in groups, heads broken anyhow, «шести тысячах», a cell «2000»
    (S50, "табл. 3", "Требуемое сопротивление теплопередаче стен жилых зданий при шести тысячах "
     "градусо-суток — 3,5 м²·°С/Вт.", "confirmed", []),
    (S50, "табл. 3", "Требуемое сопротивление теплопередаче стен жилых зданий при шести тысячах "
     "градусо-суток — 5,2 м²·°С/Вт.", "other_condition", ["6000 › Покрыт"]),
    # a grade a table gives as a number under its letter («морозостойкости F» / «75»), a
    # thickness in bricks
    (S15, "табл. 1", "Лицевой слой в полкирпича трехслойной стены с эффективным утеплителем — "
     "кирпич марки F75.", "confirmed", []),
    (S15, "табл. 1", "Лицевой слой в полкирпича трехслойной стены с эффективным утеплителем — "
     "кирпич марки F50.", "other_condition", ["250 мм и более"]),
    (S15, "табл. 1", "Лицевой слой в полкирпича трехслойной стены с эффективным утеплителем — "
     "кирпич марки F150.", "value_missing", []),
    # what the rules above must not break: a cell with its bound («До 1,0»), a value before
    # its condition's words («50 м3/ч на» / «1 унитаз»), a group's label its rows read on, a
    # dash or a star a cell left empty
    (S60, "табл. Л.3", "Скорость воздуха в вытяжной шахте — до 1,0 м/с.", "confirmed", []),
    (S60, "табл. Л.3", "Скорость воздуха в вытяжной шахте — 2,0-2,5 м/с.", "other_condition",
     ["В сборном канале"]),
    (S44, "табл. 12", "Из уборной удаляют 50 м3/ч на унитаз.", "confirmed", []),
    (S44, "табл. 12", "Из уборной удаляют 25 м3/ч на унитаз.", "other_condition", []),
    (S118, "табл. 5.1", "Учебное помещение при групповых формах занятий — не менее 3,5 м2 на "
     "обучающегося.", "confirmed", []),
    (S118, "табл. 5.1", "Учебное помещение при групповых формах занятий — не менее 2,5 м2 на "
     "обучающегося.", "other_condition", ["при фронтальных формах занятий"]),
    (S22, "табл. Г.1", "Средняя осадка многоэтажного бескаркасного здания со стенами из "
     "кирпичной кладки без армирования — не более 12 см.", "confirmed", []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "number", "claim", "expected", "words"), CASES, ids=[case_id(x) for x in CASES]
)
def test_a_value_is_read_in_its_row_column_or_place(
    document: str, number: str, claim: str, expected: str, words: list[str]
) -> None:
    verdict_holds(texts(document, number), number, claim, expected, words)


def test_a_table_with_a_number_opening_each_row_gives_each_cell_for_its_row_and_head() -> None:
    """СП 7.13130.2013 табл. Б.1: «120» / «Открытая» / «260» / «200» under «не защищенной /
    от возгорания» and «защищенной / от возгорания» (heads of two lines each)."""
    [(text, _)] = texts(S7, "табл. Б.1")
    rows = table_segments(text, "length")
    assert [(row.text, [v.number for v in row.values]) for row in rows[:4]] == [
        ("120 › Открытая › не защищенной от возгорания", [260]),
        ("120 › Открытая › защищенной от возгорания", [200]),
        ("120 › Закрытая › не защищенной от возгорания", [320]),
        ("120 › Закрытая › защищенной от возгорания", [260]),
    ]
    assert {"#120", "открыт", "незащищен"} <= rows[0].own


def test_values_given_respectively_are_paired_in_order() -> None:
    """ПУЭ 1.7.101: «2, 4 и 8 Ом соответственно при … 660,380 и 220 В источника трехфазного
    тока или 380, 220 и 127 В источника однофазного тока» (a comma OCR left without its
    space)."""
    [(text, _)] = texts(PUE, "1.7.101")
    given = {
        (row.values[0].number, row.text)
        for row in clause_segments(text, c.values_find("1 Ом")[0].dimension)
    }
    assert (4.0, "380 В источника трехфазного тока") in given
    assert (4.0, "220 В источника однофазного тока") in given
    assert (2.0, "660 В источника трехфазного тока") in given


def test_a_dash_between_two_units_is_no_range() -> None:
    """«150 мм — 35 м» is a diameter and a distance; «200—450 мм» and «от 13 м до 46 м» are
    ranges."""
    assert [v.text for v in c.values_find("150 мм — 35 м")] == ["150 мм", "35 м"]
    assert [v.bound for v in c.values_find("200—450 мм")] == ["min", "max"]
    assert [v.bound for v in c.values_find("от 13 м до 46 м")] == ["min", "max"]


def test_multiples_and_rates_per_apartment_are_quantities() -> None:
    times = c.values_find("не менее 3-кратного суточного притока")
    assert [(v.number, v.dimension) for v in times] == [(3.0, "times")]
    assert c.values_find("в 1,5 раза")[0].dimension == "times"
    load = c.values_find("10 кВт/квартиру")[0]
    assert (load.number, load.dimension) == (10.0, c.values_find("1 кВт")[0].dimension)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("до незащищенной стены", {"незащищен"}),
        ("до не защищенной от возгорания стены", {"незащищен"}),
        ("не более двух этажей", {"#2-"}),
        ("лицевой слой в полкирпича", {"#120"}),
        ("стена в полтора кирпича", {"#380"}),
        ("при шести тысячах градусо-суток", {"#6000"}),
        ("две тысячи двести", {"#2200"}),
    ],
)
def test_words_that_name_a_condition(text: str, words: set[str]) -> None:
    """A negated adjective is the other condition («не защищенной»); a thickness in bricks
    is one in millimetres; a number in words counts its thousands."""
    found = {stem for _, stem in words_of(text)}
    assert words <= found
    assert "защищен" not in found
