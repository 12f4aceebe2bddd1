"""Units as quantities (issue 49, point 3): a unit is read whole («кН/м²», «Вт/(м²·°С)»,
«л/(с·га)») and compared as a quantity, on text we wrote and on real clauses of the public
dataset (СП 20 loads, СП 50 thermal units, СП 30/31/32 flows: tests/fixtures/norms/SOURCES.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from normagpt import claims as c
from normagpt import units as u
from normagpt.clauses import clauses_split
from normagpt.parsing import text_clean

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "norms"


def one(text: str) -> c.Value:
    [value] = c.values_find(text)
    return value


def read(text: str) -> list[tuple[float, str, str]]:
    return [(v.number, v.unit, v.bound) for v in c.values_find(text)]


def held(claim: str, clause: str) -> bool:
    return c.value_held(one(claim), c.values_find(clause)) is not None


# --- a unit is read whole ----------------------------------------------------------------------


def test_a_denominator_and_its_power_are_part_of_the_unit() -> None:
    """The case users found: «0,3 кН/м²» was confirmed by a clause saying «0,3 кН/м»."""
    clause = "следует принимать 0,3 кН/м, если по заданию на проектирование"
    assert not held("0,3 кН/м²", clause)
    assert not held("0,3 кН", clause)
    assert held("0,3 кН/м", clause)


def test_a_power_written_as_a_digit_is_the_units_not_a_second_value() -> None:
    assert read("1,5 кН/м2") == [(1.5, "кН/м²", "")]


@pytest.mark.parametrize(
    ("written", "unit"),
    [
        ("20 м2", "м²"), ("20 м²", "м²"), ("20 кв. м", "м²"), ("20 кв.м", "м²"),
        ("площадью 20 м 2.", "м²"), ("3 м3", "м³"), ("3 м³", "м³"), ("3 куб. м", "м³"),
        ("3 куб.м", "м³"), ("0,2 мм2", "мм²"),
    ],
)  # fmt: skip
def test_an_area_and_a_volume_however_written(written: str, unit: str) -> None:
    assert one(written).unit == unit


def test_a_power_after_a_space_only_before_punctuation() -> None:
    """OCR sets a power apart («20 м 2.»); a number that goes on with a word is a value of
    its own, so «5 м 2 этажа» is 5 m and 2 storeys, and «1 м 3 бетона» (rare, and a
    count as often as a power) is 1 m and 3."""
    assert read("5 м 2 этажа") == [(5.0, "м", ""), (2.0, "этаж", "")]
    assert read("на 1 м 3 бетона") == [(1.0, "м", ""), (3.0, "", "")]
    assert read("не менее 6 м 3/мин") == [(6.0, "м³/мин", "min")]


@pytest.mark.parametrize(
    "unit",
    [
        "кг/(м²·ч)", "Вт/(м·°С)", "Вт/(м²·°С)", "м²·°С/Вт", "мг/м³", "л/(с·га)", "Па/м",
        "кгс/см²", "т/м³", "г/см³", "м³/ч", "л/с", "л/сут", "м/с", "км/ч", "Вт/м²", "ккал/ч",
        "кВт·ч", "%/ч", "°С·сут", "м³/(м²·ч)", "мкг/м³", "м/с²",
    ],
)  # fmt: skip
def test_a_compound_unit_is_one_unit(unit: str) -> None:
    assert read(f"не более 2,5 {unit}.") == [(2.5, unit, "max")]


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("кг/(м2*ч)", "кг/(м²·ч)"), ("Вт/(м2×°С)", "Вт/(м²·°С)"), ("Вт/(м2 х °C)", "Вт/(м²·°С)"),
        ("Вт/м·°С", "Вт/(м·°С)"), ("м2·°С/Вт", "м²·°С/Вт"), ("Вт/(м • К)", "Вт/(м·К)"),
        ("Вт/(м-°С)", "Вт/(м·°С)"), ("кВт*ч", "кВт·ч"), ("м3/(м2 ч)", "м³/(м²·ч)"),
        ("КПа", "кПа"), ("мпа", "МПа"), ("° С", "°С"), ("дБ(А)", "дБА"), ("м/с2", "м/с²"),
        ("кН/м2", "кН/м²"), ("м³/сут", "м³/сут"), ("л/(чел·сут)", "л/(чел·сут)"),
    ],
)  # fmt: skip
def test_a_unit_is_shown_as_written_canonically(written: str, canonical: str) -> None:
    assert one(f"3 {written}").unit == canonical


def test_a_unit_it_cannot_read_leaves_the_number_bare_not_cut_short() -> None:
    """«м3/унитаз» is no «м», «кН/шаг» no «кН»: a wrong unit would be compared as another
    quantity; a bare number is compared as a number."""
    assert read("50 м3/унитаз") == [(50.0, "", "")]
    assert read("2 кН/шаг") == [(2.0, "", "")]
    assert read("2,0Н2 и 1,5Н2") == [(2.0, "", ""), (1.5, "", "")]  # 2,0·H₂, not N²


def test_a_power_ocr_dropped_leaves_the_unit_unknown() -> None:
    """The dataset's texts lose superscripts and keep a gap where they stood."""
    assert read("объемной массы жидкого хлора 1,4 т/м , газообразного") == [(1.4, "", "")]
    assert read("интенсивности подачи 8-10 л/(с·м ).") == [(8.0, "", "min"), (10.0, "", "max")]
    assert read("0,40 м\n·°С/Вт для воздушной прослойки") == [(0.4, "", "")]
    assert read("плотностью 1800 кг/м\n, состава") == [(1800.0, "", "")]
    assert read("не менее 1,65 т/м .") == [(1.65, "", "min")]
    assert read("нагрузка 4,5 т/м.") == [(4.5, "т/м", "")]
    assert read("0,04 Вт/(м · °С) при 20 °С") == [(0.04, "Вт/(м·°С)", ""), (20.0, "°С", "")]


# --- compared as quantities ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "clause"),
    [
        ("1 кН/м²", "1 кПа"), ("1 кПа", "1000 Па"), ("0,1 кгс/см²", "9,81 кПа"),
        ("0,1 МПа", "1 кгс/см2"), ("1 т/м³", "1 г/см³"), ("1 т/м³", "1000 кг/м3"),
        ("1 м³/ч", "0,28 л/с"), ("3,6 м³/ч", "1 л/с"), ("36 км/ч", "10 м/с"),
        ("1 Н/мм²", "1 МПа"), ("1 кВт·ч", "3,6 МДж"), ("1 ккал/ч", "1,163 Вт"),
        ("1 мг/л", "1 г/м³"), ("2 см", "20 мм"), ("1 га", "10000 м²"), ("5 кв. м", "5 м2"),
        ("0,04 Вт/(м·К)", "0,04 Вт/(м·°С)"), ("6 м² на человека", "6 м2/чел"),
    ],
)  # fmt: skip
def test_one_quantity_written_two_ways_is_held(claim: str, clause: str) -> None:
    assert held(claim, clause)


@pytest.mark.parametrize(
    ("claim", "clause"),
    [
        ("1 кН/м", "1 кН/м²"), ("1 кН/м²", "1 кН"), ("0,04 Вт/(м·°С)", "0,04 Вт/(м²·°С)"),
        ("1 л/с", "1 л"), ("1 м/с", "1 м/с²"), ("0,1 кгс/см²", "9 кПа"), ("1 кг/м³", "1 кг/м²"),
        ("20 мм", "2,1 см"), ("2 м", "2001 мм"), ("1 м³/ч", "0,2 л/с"), ("50 чел", "50 этажей"),
    ],
)  # fmt: skip
def test_other_quantities_are_not_held(claim: str, clause: str) -> None:
    assert not held(claim, clause)


def test_temperature_is_as_written_alone_and_a_difference_in_a_compound() -> None:
    """°С has no offset: an absolute «−40 °С» stays −40, and in «Вт/(м·°С)» it is the
    difference that K is too; «К» alone (an absolute with an offset) is not read."""
    assert read("минус 40 °С и 20 °C") == [(-40.0, "°С", ""), (20.0, "°С", "")]
    assert one("0,04 Вт/(м·°С)").dimension == one("0,04 Вт/(м·К)").dimension
    assert read("293 К") == [(293.0, "", "")]


def test_shares_slopes_and_ratios_are_one_dimensionless_quantity() -> None:
    """«2 %», «20 ‰», «1:50» and a slope written as a fraction («i = 0,02») are one slope;
    a bare number is compared as written as well («2» in a column under «%»)."""
    for clause in ("уклон 2 %", "уклон 20 ‰", "уклон i = 0,02", "уклон 1:50", "уклон 2"):
        assert held("уклон не менее 2 %", clause), clause
    assert held("20 ‰", "2 %")
    assert not held("2 %", "0,2")
    assert not held("1:1,5", "1:1")
    assert one("20 ‰").dimension == one("1:1,5").dimension == "share"


def test_a_unit_per_metre_is_one_unit_not_a_value_and_a_length() -> None:
    """«2 мм на 1 м» (СП 71 табл. 7.4) is a gradient, as «2 мм на метр» or «на каждый метр»
    says it, and 0,2 % or 2 ‰ too; not the 2 мм «на всю высоту» nor a length of 1 м; «2 м на
    1 м» is a size, left as it is."""
    clause = "Отклонение от вертикали Не более 2 мм на 1 м, но не более 10 мм на всю высоту"
    assert read(clause) == [(2.0, "мм/м", "max"), (10.0, "мм", "max")]
    for claim in ("не более 2 мм на метр", "не более 2 мм на каждый метр", "не более 0,2 %"):
        assert held(claim, clause), claim
    assert not held("не более 3 мм на метр", clause)
    assert not held("не более 2 мм", "Не более 2 мм на 1 м")  # a length is not a gradient
    assert read("расход 0,5 кг на 1 м2 поверхности") == [(0.5, "кг/м²", "")]
    assert read("площадка 2 м на 1 м") == [(2.0, "м", ""), (1.0, "м", "")]


def test_spans_of_time_in_words_are_times_and_a_year_is_none() -> None:
    """«20 лет», «6 месяцев», «3 дня», «2 недели» are spans of time, in one dimension with
    «сут» and «ч» (once a bare number: «20 лет» was held by a slope's «20» in a table); «в
    2018 году», «2018 года» and «1 января 2018 года» name a year, no value."""
    assert read("не менее 20 лет, 6 месяцев, 3 дня, 2 недели") == [
        (20.0, "год", "min"), (6.0, "мес", ""), (3.0, "сут", ""), (2.0, "нед", ""),
    ]  # fmt: skip
    assert held("2 недели", "14 сут")
    assert held("2 года", "24 месяца")
    assert not held("20 лет", "20 %")
    assert read("с 1 января 2018 года, в 2018 году, 2018 года") == [(1.0, "", "")]


def test_units_alike_but_for_a_power_the_text_lost() -> None:
    """A table's heading whose superscript the dataset lost («м·°С/Вт» for «м²·°С/Вт», «м» for
    «м²») names the quantity of a claim in the whole unit; a year is no slope in % or °."""
    unit = u.unit_read
    assert unit("м·°С/Вт").alike(unit("м²·°С/Вт"))
    assert unit("Вт/(м·°С)").alike(unit("Вт/(м²·°С)"))
    assert unit("м").alike(unit("м²"))
    assert unit("кПа").alike(unit("кН/м²"))
    assert not unit("год").alike(unit("%"))
    assert not unit("год").alike(unit("°"))
    assert not unit("лк").alike(unit("ч"))


# --- what is not a value, ranges, messages -------------------------------------------------------


def test_a_table_row_of_integers_is_read_as_numbers() -> None:
    assert read("12 15 18") == [(12.0, "", ""), (15.0, "", ""), (18.0, "", "")]


def test_references_codes_grades_and_years_are_not_values() -> None:
    text = (
        "по п. 10.3.2 СП 63.13330.2018 и ГОСТ 10180-2012: бетон В25, F150, W6, REI 60, "
        "класс Ф1.3, арматура А500С, коэффициент ф1, с 2013 г. и в 2018 году"
    )
    assert read(text) == []


def test_a_range_gives_both_ends_in_their_units() -> None:
    assert read("от 0,5 до 1,5 кН/м²") == [(0.5, "кН/м²", "min"), (1.5, "кН/м²", "max")]
    assert read("от 500 мм до 1,5 м") == [(500.0, "мм", "min"), (1.5, "м", "max")]
    assert read("20 °С-25 °С") == [(20.0, "°С", "min"), (25.0, "°С", "max")]
    # a dash between two quantities, or ends that fall, is no range
    assert read("7 баллов — 7,2 м") == [(7.0, "балл", ""), (7.2, "м", "")]
    assert read("на длине 2 м - 15 мм") == [(2.0, "м", ""), (15.0, "мм", "")]


def test_a_message_shows_the_unit_canonically() -> None:
    assert c.value_text(one("не менее 0,3 кН/м2")) == "не менее 0,3 кН/м²"
    assert c.value_text(one("1,2 Вт/(м2*°С)")) == "1,2 Вт/(м²·°С)"
    assert c.value_text(one("откос 1:1,5")) == "1:1,5"
    assert c.value_text(one("1250000 Па")) == "1250000 Па"


# --- properties ----------------------------------------------------------------------------------

SAME_DIMENSION = [
    ["Па", "кПа", "МПа", "кН/м²", "Н/мм²", "кгс/см²", "кгс/м²", "тс/м²"],
    ["л/с", "м³/ч", "л/мин", "м³/сут", "л/сут"],
    ["кг/м³", "т/м³", "г/см³", "мг/л"],
    ["м/с", "км/ч", "м/ч"],
    ["Дж", "кВт·ч", "ккал", "МДж"],
    ["мм", "см", "м", "км"],
    ["%", "‰"],
]


def written_to(number: float, digits: int = 7) -> tuple[str, float]:
    """`number` written as the norms write it, to `digits` significant digits."""
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(number))))
    return f"{number:.{decimals}f}".replace(".", ","), 10.0**-decimals


@given(
    number=st.integers(min_value=1, max_value=99_999),
    pair=st.sampled_from(SAME_DIMENSION).flatmap(lambda g: st.tuples(*[st.sampled_from(g)] * 2)),
)
def test_a_value_and_its_conversion_compare_equal(number: int, pair: tuple[str, str]) -> None:
    """Any value in one unit and the same converted to another (rounded as written) hold
    each other; the next value in the first unit does not."""
    first, second = (u.unit_read(x) for x in pair)
    assert first is not None
    assert second is not None
    converted, _ = written_to(number * first.factor / second.factor)
    claimed = one(f"{converted} {pair[1]}")
    assert c.value_held(claimed, [one(f"{number} {pair[0]}")]) is not None
    assert c.value_held(claimed, [one(f"{number + 1} {pair[0]}")]) is None


FACTORS = ["м", "мм", "кг", "с", "ч", "сут", "°С", "Вт", "кН", "л", "га", "МПа", "кгс", "т"]


@given(
    above=st.lists(st.sampled_from(FACTORS), min_size=1, max_size=2),
    below=st.lists(st.sampled_from(FACTORS), max_size=2),
    power=st.sampled_from(["", "2", "²", "3", "³"]),
)
def test_a_units_canonical_spelling_reads_back_as_the_same_unit(
    above: list[str], below: list[str], power: str
) -> None:
    def factor(symbol: str) -> str:
        return symbol + power if symbol in ("м", "мм") else symbol

    written = "·".join(map(factor, above))
    if below:
        inner = "·".join(map(factor, below))
        written += f"/({inner})" if len(below) > 1 else f"/{inner}"
    unit = u.unit_read(written)
    assert unit is not None
    assert u.unit_read(unit.text) == unit
    assert one(f"не более 7 {written};").unit == unit.text


# --- real clauses --------------------------------------------------------------------------------


def clauses_of(name: str) -> dict[str, str]:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    units = clauses_split([text_clean(page["page_content"]) for page in data["pages"]])
    return {x.number: x.text for x in units if x.number}


def page_of(name: str) -> str:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return text_clean(data["pages"][0]["page_content"])


def test_sp_20_line_loads_on_handrails_are_per_metre() -> None:
    """СП 20.13330.2016, 8.3.2–8.3.3: the loads on handrails are in кН/м."""
    clauses = clauses_of("sp-20-13330-2016-loads.json")
    assert [v.unit for v in c.values_find(clauses["8.3.2"])] == ["кН/м"] * 3
    assert not held("0,3 кН/м²", clauses["8.3.3"])
    assert held("0,3 кН/м", clauses["8.3.3"])
    assert held("300 Н/м", clauses["8.3.3"])


def test_sp_50_thermal_units_and_the_superscripts_its_text_lost() -> None:
    """СП 50.13330.2012: degree-days per year, linear heat transfer in Вт/(м·°С); where
    the text lost a power («Вт/(м ·°С)», «м⏎·°С/Вт», «23 Вт/м ,») the number stays bare."""
    data = json.loads((FIXTURES / "sp-50-13330-2012.json").read_text(encoding="utf-8"))
    page = {p["page"]: text_clean(p["page_content"]) for p in data["pages"]}
    assert ("°С·сут/год", 8000.0) in {(v.unit, v.number) for v in c.values_find(page[9])}
    assert (23.0, "") in {(v.number, v.unit) for v in c.values_find(page[9])}
    table = c.values_find(page[92])
    assert (0.104, "Вт/(м·°С)") in {(v.number, v.unit) for v in table}
    assert (12.0, "") in {(v.number, v.unit) for v in table}
    assert (0.4, "") in {(v.number, v.unit) for v in c.values_find(page[139])}


def test_flows_of_sp_30_31_32_compare_as_flows() -> None:
    """СП 30.13330.2020 7.8 (5 л/с = 18 м³/ч), СП 32.13330.2018 (м³/сут, м/с), СП
    31.13330.2021 (a power lost in «л/(с·м )»: the number is kept bare)."""
    sp30 = clauses_of("sp-30-13330-2020.json")
    assert held("18 м³/ч", sp30["7.8"])
    assert not held("5 л", sp30["7.8"])
    sp32 = clauses_of("sp-32-13330-2018.json")
    assert held("0,4 м/с", sp32["5.4.2"])
    assert not held("0,4 м³/с", sp32["5.4.2"])
    assert (300.0, "м³/сут", "max") in read(page_of("sp-32-13330-2018.json"))
    sp31 = page_of("sp-31-13330-2021.json")
    assert "л/(с·м)" not in {v.unit for v in c.values_find(sp31)}
    assert (12.0, "", "min") in read(sp31)
