"""A claim's value confirmed only where its clause gives it for the claim's conditions: real
clauses and tables of the public dataset that give several values for several conditions
(tests/fixtures/norms/conditions.json, SOURCES.md), each with a right claim, a claim of
another condition's value and a wrong value; and the checker telling the kinds of failure
apart («value_on_page» for a table the reader broke)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from normagpt import claims as c
from normagpt.conditions import clause_segments, table_segments, value_condition
from normagpt.conditions.words import marks_of, words_of

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "norms" / "conditions.json"

S54, S63, S42 = "СП 54.13330.2016", "СП 63.13330.2018", "СП 42.13330.2016"
S60, S30, S1 = "СП 60.13330.2020", "СП 30.13330.2020", "СП 1.13130.2020"
S4, S252, S29 = "СП 4.13130.2013", "СП 252.1325800.2016", "СП 29.13330.2011"
S59, S31, S34 = "СП 59.13330.2020", "СП 31.13330.2021", "СП 34.13330.2012"
S76, S339, S62 = "СП 76.13330.2016", "СП 339.1325800.2017", "СП 62.13330.2011"
G7473, G31359 = "ГОСТ 7473-2010", "ГОСТ 31359-2007"


@cache
def material() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def clause(document: str, number: str) -> tuple[str, bool]:
    """A clause's text, and whether it is a table («табл. 8.1» names a table)."""
    kind = "table" if number.startswith("табл. ") else "clause"
    number = number.removeprefix("табл. ")
    found = next(
        x
        for x in material()["clauses"]
        if (x["document"], x["kind"], x["number"]) == (document, kind, number)
    )
    return found["text"], kind == "table"


def verdict(claim: str, document: str, number: str) -> tuple[str, str]:
    """What the checker says of `claim`'s values against the clause: 'confirmed',
    'value_missing' (a value the clause does not hold) or 'other_condition' with the reason."""
    text, table = clause(document, number)
    held = c.values_find(text)
    reasons = []
    for value in c.said(claim).values:
        if c.value_held(value, held) is None:
            return "value_missing", c.value_text(value)
        mismatch = value_condition(claim, value, [(text, table)])
        if mismatch is not None:
            reasons.append(mismatch.reason(number))
    return ("other_condition", "; ".join(reasons)) if reasons else ("confirmed", "")


# (document, clause, claim, verdict, words the reason holds: the condition the clause gives the
# claimed value for and the value it gives for the claim's)
CASES = [
    # the three the issue reports
    (S54, "5.8", "Высота жилых комнат в средней полосе — не менее 2,7 м (п. 5.8 СП 54.13330.2016).",
     "other_condition", ["2,7 м — для «в климатических подрайонах IA, IB", "не менее 2,5 м"]),
    (S54, "5.8", "Высота жилых комнат и кухонь — не менее 2,5 м (п. 5.8 СП 54.13330.2016).",
     "confirmed", []),
    (S54, "5.8", "В климатических подрайонах IА, IБ, IГ высота жилых комнат не менее 2,7 м (п. 5.8).",
     "confirmed", []),
    (S54, "5.8", "Высота жилых комнат — не менее 2,5 м, а в подрайонах IА, IБ — не менее 2,7 м (п. 5.8).",
     "confirmed", []),
    (S54, "5.8", "Высота внутриквартирных коридоров — не менее 2,5 м (п. 5.8).",
     "other_condition", ["«в других климатических подрайонах»", "не менее 2,1 м"]),
    (S54, "5.8", "Высота жилых комнат — не менее 2,6 м (п. 5.8).", "value_missing", []),
    (S63, "10.3.8", "В колоннах расстояние между стержнями продольной арматуры в направлении "
     "плоскости изгиба — не более 400 мм (10.3.8 СП 63.13330.2018).",
     "other_condition", ["«в направлении, перпендикулярном к плоскости изгиба»", "500 мм"]),
    (S63, "10.3.8", "В колоннах расстояние между стержнями продольной арматуры в направлении "
     "плоскости изгиба — не более 500 мм (10.3.8 СП 63.13330.2018).", "confirmed", []),
    (S63, "10.3.8", "В колоннах в направлении, перпендикулярном плоскости изгиба, расстояние между "
     "стержнями — не более 400 мм (10.3.8).", "confirmed", []),
    (S63, "10.3.8", "В стенах горизонтальную арматуру располагают с шагом не более 500 мм (10.3.8).",
     "other_condition", ["«в направлении плоскости изгиба»", "не более 400 мм"]),
    (S63, "10.3.8", "В колоннах в плоскости изгиба — не более 600 мм (10.3.8).", "value_missing", []),
    (S54, "5.7", "Площадь кухни — не менее 5 м² (п. 5.7 СП 54.13330.2016).",
     "other_condition", ["«В квартирах допускается проектировать кухни или кухни-ниши", "8 м²"]),
    (S54, "5.7", "Площадь кухни — не менее 8 м² (п. 5.7 СП 54.13330.2016).", "confirmed", []),
    (S54, "5.7", "Кухню или кухню-нишу допускается проектировать площадью не менее 5 м² (п. 5.7).",
     "confirmed", []),
    (S54, "5.7", "Площадь общей жилой комнаты в однокомнатной квартире — не менее 16 м² (п. 5.7).",
     "other_condition", ["«общей жилой комнаты в квартирах с числом комнат две и более»", "14 м²"]),
    (S54, "5.7", "Площадь спальни на двух человек — не менее 8 м² (п. 5.7).",
     "other_condition", ["«спальни»", "10 м²"]),
    (S54, "5.7", "Площадь кухни — не менее 9 м² (п. 5.7).", "value_missing", []),
    # more clauses of several values
    (S60, "5.2", "В нерабочее время в жилых помещениях температуру воздуха поддерживают не ниже "
     "15 °C (п. 5.2 СП 60.13330.2020).", "confirmed", []),
    (S60, "5.2", "В помещениях общественных зданий в нерабочее время — не ниже 15 °C (п. 5.2).",
     "other_condition", ["«в жилых помещениях»", "12 °С"]),
    (S60, "5.2", "В жилых помещениях в нерабочее время — не ниже 18 °C (п. 5.2).",
     "value_missing", []),
    (S63, "10.3.5", "Расстояние в свету между стержнями нижней арматуры, расположенной в один или "
     "два ряда, — не менее 25 мм (п. 10.3.5 СП 63.13330.2018).", "confirmed", []),
    (S63, "10.3.5", "Для верхней арматуры расстояние в свету между стержнями — не менее 30 мм "
     "(п. 10.3.5).", "confirmed", []),
    (S63, "10.3.5", "Для верхней арматуры расстояние в свету между стержнями — не менее 25 мм "
     "(п. 10.3.5).", "other_condition", ["«при горизонтальном или наклонном", "30 мм"]),
    (S63, "10.3.5", "При вертикальном положении стержней при бетонировании расстояние в свету — "
     "не менее 30 мм (п. 10.3.5).", "other_condition", ["«то же, для верхней арматуры»", "50 мм"]),
    (S63, "10.3.5", "Расстояние в свету между стержнями — не менее 40 мм (п. 10.3.5).",
     "value_missing", []),
    (S54, "9.16", "Длина коридора при световом проеме в одном торце — не более 24 м (п. 9.16).",
     "confirmed", []),
    (S54, "9.16", "При световых проемах в двух торцах длина коридора не должна превышать 24 м "
     "(п. 9.16).", "other_condition", ["«при наличии светового проема в одном торце»", "48 м"]),
    (S54, "9.16", "Длина коридора с проемом в одном торце — не более 36 м (п. 9.16).",
     "value_missing", []),
    (S54, "7.4.3", "Высота проемов в поперечных стенах подвалов — не менее 1,8 м (п. 7.4.3).",
     "confirmed", []),
    (S54, "7.4.3", "Высота проемов в поперечных стенах на чердаках — не менее 1,8 м (п. 7.4.3).",
     "other_condition", ["1,8 м — для «", "не менее 1,6 м"]),
    (S54, "7.4.3", "Высота проемов в стенах подвалов — не менее 2 м (п. 7.4.3).",
     "value_missing", []),
    (S54, "8.3", "Высота ограждений балконов и лоджий — не менее 1,2 м (п. 8.3).", "confirmed", []),
    (S54, "8.3", "Высота ограждений балконов — не менее 0,9 м (п. 8.3).",
     "other_condition", ["«Лестничные марши и площадки внутренних лестниц", "не менее 1,2 м"]),
    (S54, "8.3", "Ограждения внутренних лестниц — с поручнями высотой не менее 0,9 м (п. 8.3).",
     "confirmed", []),
    (S54, "8.3", "Высота ограждений балконов — не менее 1,1 м (п. 8.3).", "value_missing", []),
    (S54, "9.15", "Освещенность у входов в здание — не менее 6 лк для горизонтальных "
     "поверхностей (п. 9.15).", "confirmed", []),
    (S54, "9.15", "Освещенность у входов для вертикальных поверхностей — не менее 6 лк (п. 9.15).",
     "other_condition", ["«для горизонтальных поверхностей»", "не менее 10 лк"]),
    (S54, "9.15", "Освещенность у входов в здание — не менее 20 лк (п. 9.15).", "value_missing", []),
    (S54, "9.13", "Отношение площади световых проемов к площади пола жилых комнат — не менее 1:8 "
     "(п. 9.13).", "confirmed", []),
    (S54, "9.13", "Для верхних этажей со световыми проемами в плоскости наклонных ограждающих "
     "конструкций — не менее 1:8 (п. 9.13).", "other_condition", ["«Отношение площади", "1:10"]),
    (S54, "9.13", "Отношение площади световых проемов к площади пола — не менее 1:6 (п. 9.13).",
     "value_missing", []),
    (S42, "9.9", "Время доступности городских парков — не более 20 мин (п. 9.9).", "confirmed", []),
    (S42, "9.9", "Время доступности парков планировочных районов — не более 20 мин (п. 9.9).",
     "other_condition", ["«городских парков»", "не более 15 мин"]),
    (S42, "9.9", "Время доступности парков — не более 30 мин (п. 9.9).", "value_missing", []),
    (S42, "4.19", "Участки садоводческих товариществ размещают на расстоянии доступности на "
     "общественном транспорте не более 1,5 ч от мест проживания (п. 4.19).", "confirmed", []),
    (S42, "4.19", "Для крупнейших и крупных городов доступность участков садоводческих "
     "товариществ — не более 1,5 ч (п. 4.19).", "other_condition", ["не более 2 ч"]),
    (S42, "4.19", "Для крупных городов — не более 2 ч (п. 4.19).", "confirmed", []),
    (S42, "4.19", "Доступность участков садоводческих товариществ — не более 3 ч (п. 4.19).",
     "value_missing", []),
    (S42, "9.21", "Площадь участка зоны массового кратковременного отдыха — не менее 50 га "
     "(п. 9.21).", "confirmed", []),
    (S42, "9.21", "В зоне пустынь и полупустынь площадь участка зоны массового кратковременного "
     "отдыха — не менее 50 га (п. 9.21).", "other_condition", ["не менее 30 га"]),
    (S42, "9.21", "Зоны отдыха размещают на расстоянии не менее 300 м от домов отдыха (п. 9.21).",
     "confirmed", []),
    (S42, "9.21", "Зоны отдыха размещают на расстоянии не менее 300 м от санаториев и "
     "автомобильных дорог (п. 9.21).", "other_condition", ["«от домов отдыха»", "не менее 500 м"]),
    (S42, "9.21", "Площадь участка зоны отдыха — не менее 100 га (п. 9.21).", "value_missing", []),
    (S42, "10.2", "Для малых и средних городов-центров затраты времени на передвижение — не более "
     "1 ч (п. 10.2).", "confirmed", []),
    (S42, "10.2", "Для крупного города-центра затраты времени на передвижение — не более 1 ч "
     "(п. 10.2).", "other_condition", ["«в малые и средние города", "не более 2 ч"]),
    (S42, "10.2", "Затраты времени на передвижение в город-центр — не более 3 ч (п. 10.2).",
     "value_missing", []),
    (S42, "7.1", "Между длинными сторонами жилых зданий высотой два-три этажа — не менее 15 м "
     "(п. 7.1).", "confirmed", []),
    (S42, "7.1", "Между длинными сторонами жилых зданий высотой четыре этажа — не менее 15 м "
     "(п. 7.1).", "other_condition", ["«для жилых зданий высотой два-три этажа»", "не менее 20 м"]),
    (S42, "7.1", "Между длинными сторонами и торцами зданий с окнами из жилых комнат — не менее "
     "15 м (п. 7.1).", "other_condition", ["не менее 10 м"]),
    (S42, "7.1", "Между длинными сторонами жилых зданий — не менее 25 м (п. 7.1).",
     "value_missing", []),
    (S42, "9.13", "Площадь городских парков — не менее 15 га (п. 9.13).", "confirmed", []),
    (S42, "9.13", "Площадь скверов — не менее 3 га (п. 9.13).",
     "other_condition", ["«садов жилых районов»", "0,5"]),
    (S42, "9.13", "Площадь садов жилых районов — не менее 3 га (п. 9.13).", "confirmed", []),
    (S42, "9.13", "Площадь городских парков — не менее 20 га (п. 9.13).", "value_missing", []),
    (S63, "10.3.6", "Минимальный процент армирования в изгибаемых элементах — 0,1 % (п. 10.3.6).",
     "confirmed", []),
    (S63, "10.3.6", "Во внецентренно сжатых элементах при гибкости более 87 минимальный процент "
     "армирования — 0,1 % (п. 10.3.6).", "other_condition", ["0,25 %"]),
    (S63, "10.3.6", "Минимальный процент армирования в изгибаемых элементах — 0,05 % (п. 10.3.6).",
     "value_missing", []),
    (S63, "10.3.13", "В балках высотой 150 мм и более на участках, где поперечная сила "
     "воспринимается только бетоном, шаг поперечной арматуры — не более 500 мм (п. 10.3.13).",
     "confirmed", []),
    (S63, "10.3.13", "В элементах, где поперечная сила по расчету не может быть воспринята только "
     "бетоном, шаг поперечной арматуры — не более 300 мм (п. 10.3.13).", "confirmed", []),
    (S63, "10.3.13", "Шаг поперечной арматуры — не более 400 мм (п. 10.3.13).", "value_missing", []),
    (S60, "7.8.3", "Температура воздуха, подаваемого воздушно-тепловыми завесами у наружных "
     "дверей, — не выше 50 °С (п. 7.8.3).", "confirmed", []),
    (S60, "7.8.3", "Температура воздуха, подаваемого воздушно-тепловыми завесами у ворот, — не "
     "выше 50 °С (п. 7.8.3).", "other_condition", ["«у дверей»", "не более 70 °С"]),
    (S60, "7.8.3", "Температура воздуха от завес у ворот — не выше 60 °С (п. 7.8.3).",
     "value_missing", []),
    (S30, "7.12", "Скорость воды в объединенном хозяйственно-противопожарном водопроводе при "
     "пожаротушении — не более 3 м/с (п. 7.12).", "confirmed", []),
    (S30, "7.12", "В спринклерных и дренчерных системах скорость движения воды — не более 3 м/с "
     "(п. 7.12).", "other_condition", ["3 м/с — для «"]),
    (S30, "7.12", "Скорость воды в спринклерных системах — не более 5 м/с (п. 7.12).",
     "value_missing", []),
    # tables: a row and the group above it
    (S1, "табл. 1", "Из помещений с выходами в тупиковый коридор в зданиях класса С1 расстояние "
     "до выхода — не более 7 м (табл. 1 СП 1.13130.2020).", "confirmed", []),
    (S1, "табл. 1", "Из помещений с выходами в тупиковый коридор в зданиях класса С1 расстояние "
     "до выхода — не более 15 м (табл. 1).",
     "other_condition", ["«С1 и здания III— IV степеней огнестойкости»", "7"]),
    (S1, "табл. 1", "Из помещений, расположенных между лестничными клетками, в зданиях класса "
     "С1 — не более 15 м (табл. 1).", "confirmed", []),
    (S1, "табл. 1", "Из помещений с выходами в тупиковый коридор — не более 12 м (табл. 1).",
     "value_missing", []),
    (S54, "табл. 8.1", "Ширина марша лестниц, ведущих в подвальные и цокольные этажи, — не "
     "менее 0,9 м (табл. 8.1).", "confirmed", []),
    (S54, "табл. 8.1", "Ширина марша лестниц коридорных и галерейных домов, ведущих на жилые "
     "этажи, — не менее 0,9 м (табл. 8.1).", "other_condition", ["0,9 м — для «Марши", "1,2"]),
    (S54, "табл. 8.1", "Ширина марша лестниц коридорных и галерейных домов — не менее 1,2 м "
     "(табл. 8.1).", "confirmed", []),
    (S54, "табл. 8.1", "Ширина марша лестниц — не менее 1,0 м (табл. 8.1).", "value_missing", []),
    (S42, "табл. 10.2", "Радиус пешеходной доступности для среднего общего образования в "
     "подрайоне IА — не более 0,4 км (табл. 10.2).", "confirmed", []),
    (S42, "табл. 10.2", "Радиус пешеходной доступности для начального общего образования в "
     "подрайоне IА — не более 0,4 км (табл. 10.2).",
     "other_condition", ["«1 Б › Начальное общее и основное общее образование»", "0,3"]),
    (S42, "табл. 10.2", "Радиус пешеходной доступности — не более 0,8 км (табл. 10.2).",
     "value_missing", []),
    # «конденсата - 30 м/с»: the dash before a value is not its sign
    (S60, "6.3.7", "В системах низкого давления при попутном движении пара и конденсата "
     "скорость пара — 30 м/с (п. 6.3.7).", "confirmed", []),
    (S60, "6.3.7", "В системах низкого давления при встречном движении пара и конденсата "
     "скорость пара — 30 м/с (п. 6.3.7).", "other_condition",
     ["«при попутном движении пара и конденсата»", "20 м/с"]),
    (S60, "6.3.7", "В системах высокого давления при попутном движении пара и конденсата "
     "скорость пара — 30 м/с (п. 6.3.7).", "other_condition", ["80 м/с"]),
    (S60, "6.3.7", "В системах низкого давления скорость пара — 40 м/с (п. 6.3.7).",
     "value_missing", []),
    (S30, "7.9", "В жилых зданиях высотой более 50 м высота компактной части струи — не менее "
     "8 м (п. 7.9).", "confirmed", []),
    (S30, "7.9", "В общественных зданиях высотой более 50 м высота компактной части струи — не "
     "менее 8 м (п. 7.9).", "other_condition", ["«в жилых зданиях высотой более 50 м»", "16 м"]),
    (S30, "7.9", "В жилых зданиях высотой до 50 м высота компактной части струи — не менее 8 м "
     "(п. 7.9).", "other_condition", ["6 м"]),
    (S30, "7.9", "В жилых зданиях высота компактной части струи — не менее 12 м (п. 7.9).",
     "value_missing", []),
    # a row's cells under the columns' heads: «между выходами» / «в тупиковой части»,
    # «до 2» / «более 2», a head spanning two («Допускаемые …» / «пересеченной» / «горной»)
    (S1, "табл. 19", "В подземной автостоянке расстояние от места хранения в тупиковой части "
     "помещения до ближайшего эвакуационного выхода — не более 20 м (табл. 19).", "confirmed", []),
    (S1, "табл. 19", "В подземной автостоянке расстояние от места хранения в тупиковой части "
     "помещения до ближайшего эвакуационного выхода — не более 40 м (табл. 19).",
     "other_condition", ["40 м — для «Подземная › между эвакуационными выходами»", "20"]),
    (S31, "табл. 26", "Для труб диаметром до четырехсот миллиметров при глубине заложения более "
     "двух метров время ликвидации аварии — 12 ч (табл. 26).", "confirmed", []),
    (S31, "табл. 26", "Для труб диаметром до четырехсот миллиметров при глубине заложения более "
     "двух метров время ликвидации аварии — 8 ч (табл. 26).",
     "other_condition", ["8 ч — для «До 400 › до 2»", "12"]),
    (S34, "табл. 5.1", "Основная расчетная скорость для дороги четвертой категории — 80 км/ч "
     "(табл. 5.1).", "confirmed", []),
    (S34, "табл. 5.1", "Основная расчетная скорость для дороги четвертой категории — 60 км/ч "
     "(табл. 5.1).", "other_condition", ["«IV › Допускаемые на трудных участках", "80"]),
    (S42, "табл. 9.1", "Расстояние от наружной стены здания до оси ствола дерева — 5,0 м "
     "(табл. 9.1).", "confirmed", []),
    (S42, "табл. 9.1", "Расстояние от наружной стены здания до оси ствола дерева — 1,5 м "
     "(табл. 9.1).", "other_condition", ["› кустарника»", "5"]),
    (S62, "табл. 8", "Вместимость всех баллонов групповой установки для газоснабжения жилых "
     "зданий при размещении у стен здания — не более 600 л (табл. 8).", "confirmed", []),
    (S62, "табл. 8", "Вместимость всех баллонов групповой установки для газоснабжения жилых "
     "зданий при размещении у стен здания — не более 1000 л (табл. 8).",
     "other_condition", ["1000 л — для «Г азоснабжение жилых", "600"]),
    # a table laid across: a row of diameters over a row of lengths
    (S30, "табл. 18.2", "При диаметре трубопровода сто миллиметров длина выпуска от стояка до "
     "оси смотрового колодца — не более 12 м (табл. 18.2).", "confirmed", []),
    (S30, "табл. 18.2", "При диаметре трубопровода сто миллиметров длина выпуска от стояка до "
     "оси смотрового колодца — не более 15 м (табл. 18.2).",
     "other_condition", ["«Диаметр трубопровода, мм 150 › Длина выпуска", "12"]),
    (S30, "табл. 21.1", "Расчетный расход дождевых вод на водосточный стояк диаметром сто "
     "миллиметров — 20 л/с (табл. 21.1).", "confirmed", []),
    (S30, "табл. 21.1", "Расчетный расход дождевых вод на водосточный стояк диаметром сто "
     "миллиметров — 50 л/с (табл. 21.1).", "other_condition", ["мм 150 ›", "20"]),
    # numbers in words, with their side, and a number within a condition's range
    (S4, "8.6", "Ширина проезда для пожарной техники к зданию высотой около сорока метров — не "
     "менее 4,2 м (п. 8.6).", "confirmed", []),
    (S4, "8.6", "Ширина проезда для пожарной техники к зданию высотой около сорока метров — не "
     "менее 3,5 м (п. 8.6).", "other_condition", ["до 13,0 метров", "4,2 м"]),
    (S252, "6.1.8", "Площадь игровой площадки на одного ребенка от трёх до семи лет — не менее "
     "9,0 м2 (п. 6.1.8).", "confirmed", []),
    (S252, "6.1.8", "Площадь игровой площадки на одного ребенка от трёх до семи лет — не менее "
     "7,0 м2 (п. 6.1.8).", "other_condition", ["от двух месяцев до трех лет", "9 м²"]),
    (S59, "табл. 5.1", "При продольном уклоне марша пандуса от пятидесяти до шестидесяти "
     "промилле длина одного марша — не более 9 м (табл. 5.1).", "confirmed", []),
    (S59, "табл. 5.1", "При продольном уклоне марша пандуса от пятидесяти до шестидесяти "
     "промилле длина одного марша — не более 12 м (табл. 5.1).",
     "other_condition", ["«От 40 до 50 ‰ (от 1:25 до 1:20) (включительно)»", "9"]),
    # grades: the claim's («марки П4»), and a grade's range («В5 и ниже»)
    (G7473, "табл. 2", "Для бетонной смеси марки П4 осадка конуса — 16—20 см (табл. 2).",
     "confirmed", []),
    (G7473, "табл. 2", "Для бетонной смеси марки П4 осадка конуса — 10—15 см (табл. 2).",
     "other_condition", ["«ПЗ»", "16"]),
    (G31359, "табл. 1", "Коэффициент теплопроводности ячеистого бетона марки D500 в сухом "
     "состоянии — 0,12 Вт/(м∙°С) (табл. 1).", "confirmed", []),
    (G31359, "табл. 1", "Коэффициент теплопроводности ячеистого бетона марки D500 в сухом "
     "состоянии — 0,14 Вт/(м∙°С) (табл. 1).", "other_condition", ["«D600»", "0,12"]),
    (S339, "8.17", "Минимальный процент армирования изгибаемых элементов из ячеистого бетона "
     "класса В3,5 — 0,05 % (п. 8.17).", "confirmed", []),
    (S339, "8.17", "Минимальный процент армирования изгибаемых элементов из ячеистого бетона "
     "класса В3,5 — 0,1 % (п. 8.17).", "other_condition", ["В7.5 -В10", "0,05 %"]),
    # a sentence's subject and unit across its «;», a leader's dots, a unit OCR damaged, the
    # noun the last part says for all, the list item after a value its condition
    (S29, "7.7", "Для основания из песка средней крупности высоту опасного поднятия грунтовых "
     "вод принимают равной 0,5 м (п. 7.7).", "confirmed", []),
    (S29, "7.7", "Для основания из песка средней крупности высоту опасного поднятия грунтовых "
     "вод принимают равной 0,3 м (п. 7.7).", "other_condition", ["«песка крупного»", "0,5"]),
    (S34, "5.2", "При облегченном и переходном типах дорожной одежды нормативная осевая "
     "нагрузка — 100 кН (п. 5.2).", "confirmed", []),
    (S34, "5.2", "При облегченном и переходном типах дорожной одежды нормативная осевая "
     "нагрузка — 115 кН (п. 5.2).", "other_condition", ["«при капитальной", "100 кН"]),
    (S60, "5.8", "Интенсивность инфракрасного облучения поверхности туловища, рук и ног на "
     "постоянных рабочих местах — не более 140 Вт/м2 (п. 5.8).", "confirmed", []),
    (S60, "5.8", "Интенсивность инфракрасного облучения поверхности туловища, рук и ног на "
     "постоянных рабочих местах — не более 250 Вт/м2 (п. 5.8).",
     "other_condition", ["«на непостоянных рабочих местах»", "140"]),
    (S76, "6.4.1.9", "Усилие тяжения при прокладке кабелей с медными жилами — не более "
     "50 Н/мм2 сечения жилы (п. 6.4.1.9).", "confirmed", []),
    (S76, "6.4.1.9", "Усилие тяжения при прокладке кабелей с медными жилами — не более "
     "30 Н/мм2 сечения жилы (п. 6.4.1.9).", "other_condition", ["алюминиевыми", "50"]),
]  # fmt: skip


def case_id(case: tuple[str, str, str, str, list[str]]) -> str:
    document, number, _, expected, _ = case
    return f"{document.split()[1].split('.')[0]} {number} {expected}"


@pytest.mark.parametrize(
    ("document", "number", "claim", "expected", "words"), CASES, ids=[case_id(x) for x in CASES]
)
def test_a_value_is_confirmed_only_for_the_condition_the_clause_gives_it(
    document: str, number: str, claim: str, expected: str, words: list[str]
) -> None:
    found, reason = verdict(claim, document, number)
    assert found == expected, reason
    for word in words:
        assert word in reason


def test_the_material_holds_right_other_and_wrong_claims_on_many_clauses() -> None:
    """The material holds, for each of its 25 clauses and tables, a right claim, and for each
    a claim of another condition's value or a wrong one (the report's counts)."""
    clauses = {(d, n) for d, n, *_ in CASES}
    kinds = [expected for *_, expected, _ in CASES]
    assert len(clauses) >= 16
    assert kinds.count("confirmed") >= len(clauses)
    assert kinds.count("other_condition") >= 20
    assert kinds.count("value_missing") >= 20


def test_one_value_of_its_kind_is_never_questioned() -> None:
    """A clause giving one length leaves nothing to confuse: whatever the claim's words."""
    text = "Ширина галереи должна быть не менее 1,2 м. Освещенность не менее 6 лк."
    [value] = c.values_find("1,2 м")
    assert value_condition("На чердаке галерея шириной 1,2 м", value, [(text, False)]) is None


def test_a_sentence_of_a_general_case_and_an_exception_reads_its_subject_as_shared() -> None:
    """«Высота … кухни в подрайонах IА … — 2,7 м, а в других подрайонах — 2,5 м»: the subject
    belongs to both parts; the second is the «other cases» one."""
    text, _ = clause(S54, "5.8")
    first, other, corridors = clause_segments(text, "length")
    assert "климатических подрайонах IA" in first.text
    assert {"высот", "жил", "комнат"} <= first.context == other.context
    assert other.other
    assert not first.other
    assert "коридор" in corridors.own


def test_a_table_row_is_its_label_under_its_group() -> None:
    """СП 1.13130.2020, table 1: rows «СО», «С1 и здания III— IV …», «С2,СЗ …» under the
    groups «А. Из помещений, расположенных между …» and «Б. Из помещений с выходами в
    тупиковый коридор или холл»; the heading is every row's context."""
    text, _ = clause(S1, "табл. 1")
    rows = table_segments(text, "length")
    assert [[v.number for v in row.values] for row in rows] == [[20], [15], [10], [10], [7], [5]]
    assert "тупиков" in rows[4].context
    assert "тупиков" not in rows[1].context
    assert {"расстоян"} <= rows[0].context & rows[5].context


def test_a_table_of_one_row_a_line_is_read_too() -> None:
    """The layout of the first tests: label and cells on one line («Песок   1:1,5»)."""
    table = "Таблица 5.1 — Откосы выемок\nГрунт   Крутизна\nПесок   1:1,5\nСуглинок   1:1"
    for claim, given, instead in [
        ("Для суглинка по табл. 5.1 крутизна откоса 1:1,5.", "Песок", "1:1"),
        ("По табл. 5.1 для условия «Песок» — 1:1.", "Суглинок", "1:1,5"),
    ]:
        [value] = c.values_find(c.masked_text(claim))
        mismatch = value_condition(claim, value, [(table, True)])
        assert mismatch is not None
        assert given in mismatch.given_for
        assert [c.value_text(v) for v in mismatch.instead] == [instead]


def test_a_row_has_a_cell_for_each_column_head() -> None:
    """СП 1.13130.2020, table 19: the heads «между эвакуационными выходами» and «в тупиковой
    части помещения» after the line naming the unit; each row's two cells, one a column."""
    text, _ = clause(S1, "табл. 19")
    rows = table_segments(text, "length")
    assert [(row.text, [v.number for v in row.values]) for row in rows[:4]] == [
        ("Подземная › между эвакуационными выходами", [40]),
        ("Подземная › в тупиковой части помещения", [20]),
        ("Надземная › между эвакуационными выходами", [60]),
        ("Надземная › в тупиковой части помещения", [25]),
    ]
    assert {"тупиков", "подземн"} <= rows[1].own


def test_heads_of_two_lines_each_place_a_row_s_cells() -> None:
    """Heads of two lines each («не защищенной / от возгорания», «защищенной / от
    возгорания»): a row's cells, one under each (once read as one row; the real table, its
    rows opening with their numbers, is read in test_tables_real)."""
    table = (
        "Т а б л и ц а  Б.1\nТолщина стенки печи, мм\nОтступка\nРасстояние до стены, мм\n"
        "не защищенной\nот возгорания\nзащищенной\nот возгорания\n120\nОткрытая\n260\n"
        "200\nЗакрытая\n320\n260"
    )
    rows = [row for row in table_segments(table, "length") if "крытая" in row.text]
    assert [[v.number for v in row.values] for row in rows] == [[260], [200], [320], [260]]
    assert "незащищен" in rows[0].own
    assert "незащищен" not in rows[1].own
    assert "защищен" in rows[1].own


@pytest.mark.parametrize(
    ("text", "marks"),
    [
        ("на одного ребенка от трёх до семи лет", {"#1", "#3+", "#7-"}),
        ("при толщине от одиннадцати до шестнадцати миллиметров", {"#11+", "#16-"}),
        ("не более двух этажей", {"#2-"}),
        ("для дороги четвертой категории", {"iv"}),
        ("на четвертом этаже", set()),
    ],
)
def test_numbers_in_words_are_numbers_with_their_side(text: str, marks: set[str]) -> None:
    """A number in words names a condition as digits do, with the side its words put it on;
    an ordinal before «категории», «класса», «степени» is the Roman numeral of the code."""
    found = {stem for _, stem in words_of(text) if stem.startswith("#") or stem == "iv"}
    assert found == marks


def test_a_range_bounds_a_condition_on_both_sides() -> None:
    """«от 13,0 метров до 46,0 метров»: above 13, below 46 (a claim's «около сорока метров»
    falls within it); «В5 и ниже»: below В5."""
    assert {"#13+", "#46-"} <= marks_of("при высоте здания от 13,0 метров до 46,0 метров")
    assert "#B5-" in marks_of("при классе бетона В5 и ниже")


# --- the checker: which failure -------------------------------------------------------------


@pytest.fixture
def norms(db: None) -> None:
    """The material as the checker reads it: each clause on its page (a page holding the
    clauses of that page, СП 131.13330.2020's page 50 as the dataset gives it), stems
    counted, codes' aliases made."""
    from normagpt.indexing import aliases_refresh, clause_search_text, terms_recount
    from normagpt.models import NormClause, NormDocument, NormPage

    data = material()
    real = {(p["document"], p["number"]): p["text"] for p in data["pages"]}
    for entry in data["documents"]:
        document = NormDocument.objects.create(code=entry["code"], title=entry["title"])
        aliases_refresh(document)
        own = [x for x in data["clauses"] if x["document"] == entry["code"]]
        for number in sorted({x["page"] for x in own}):
            here = [x for x in own if x["page"] == number]
            text = real.get((entry["code"], number)) or "\n".join(x["text"] for x in here)
            page = NormPage.objects.create(document=document, number=number, text=text)
            for position, x in enumerate(here):
                start = x["start"] if (entry["code"], number) in real else text.find(x["text"])
                NormClause.objects.create(
                    document=document, page=page, kind=x["kind"], number=x["number"],
                    heading=x["heading"], text=x["text"], position=position, start=start,
                    end=start + len(x["text"]) if start >= 0 else x["end"],
                    search_text=clause_search_text(
                        x["heading"], x["text"], table=x["kind"] == "table"
                    ),
                )  # fmt: skip
    terms_recount()


def checked(claim: str) -> Any:
    from normagpt.verification import Checker

    [result] = Checker(sources=[], pages=[]).answer(claim)
    return result


@pytest.mark.parametrize(
    ("right", "other", "wrong", "words"),
    [
        (
            "Высота жилых комнат и кухонь — не менее 2,5 м (п. 5.8 СП 54.13330.2016).",
            "Высота жилых комнат в средней полосе — не менее 2,7 м (п. 5.8 СП 54.13330.2016).",
            "Высота жилых комнат — не менее 2,6 м (п. 5.8 СП 54.13330.2016).",
            [
                "в п. 5.8 СП 54.13330.2016 2,7 м — для «в климатических подрайонах IA, IB, 1Г, "
                "Щ и IIA, определяемых по СП 131.13330»; для условия утверждения: не менее 2,5 м"
            ],
        ),
        (
            "В колоннах расстояние между стержнями продольной арматуры в направлении плоскости "
            "изгиба — не более 500 мм (10.3.8 СП 63.13330.2018).",
            "В колоннах расстояние между стержнями продольной арматуры в направлении плоскости "
            "изгиба — не более 400 мм (10.3.8 СП 63.13330.2018).",
            "В колоннах расстояние между стержнями — не более 450 мм (10.3.8 СП 63.13330.2018).",
            [
                "в п. 10.3.8 СП 63.13330.2018 400 мм — для «в направлении, перпендикулярном к "
                "плоскости изгиба»; для условия утверждения: 500 мм"
            ],
        ),
        (
            "Площадь кухни — не менее 8 м² (п. 5.7 СП 54.13330.2016).",
            "Площадь кухни — не менее 5 м² (п. 5.7 СП 54.13330.2016).",
            "Площадь кухни — не менее 9 м² (п. 5.7 СП 54.13330.2016).",
            ["5 м² — для «В квартирах допускается проектировать кухни или кухни-ниши площадью»"],
        ),
    ],
)
def test_the_checker_confirms_the_right_value_and_says_which_failure_the_others_are(
    norms: None, right: str, other: str, wrong: str, words: list[str]
) -> None:
    confirmed = checked(right)
    assert confirmed.confirmed, confirmed.reason
    assert "problem" not in confirmed.details
    flagged = checked(other)
    assert flagged.verdict == "unconfirmed"
    assert flagged.details["problem"] == "other_condition"
    for word in words:
        assert word in flagged.reason
    missing = checked(wrong)
    assert missing.details["problem"] == "value_missing"
    assert missing.reason.startswith("значения ")


def test_a_value_on_the_page_of_a_table_the_reader_broke_is_told_from_one_found_nowhere(
    norms: None,
) -> None:
    """СП 131.13330.2020, table 10.2 as the reader split it: its cities without their values
    (Астрахань … Казань), the values on its page 50. A right answer from it is not the
    same failure as a value found nowhere."""
    on_page = checked(
        "Удельная энтальпия наружного воздуха в Казани — 57,0 кДж/кг (табл. 10.2 "
        "СП 131.13330.2020)."
    )
    assert on_page.verdict == "unconfirmed"
    assert on_page.details["problem"] == "value_on_page"
    assert on_page.reason.startswith(
        "значения 57 кДж/кг нет в тексте табл. 10.2 СП 131.13330.2020, но оно есть на стр. 50 "
        "рядом с ним: возможно, таблица разбита при чтении — проверьте по странице"
    )
    nowhere = checked(
        "Удельная энтальпия наружного воздуха в Казани — 59,9 кДж/кг (табл. 10.2 "
        "СП 131.13330.2020)."
    )
    assert nowhere.details["problem"] == "value_missing"
    assert "нет в табл. 10.2 СП 131.13330.2020" in nowhere.reason


def test_each_failure_has_its_kind(norms: None) -> None:
    """The kinds a benchmark counts: the opposite bound, a clause that is not there, words
    the clause never says."""
    opposite = checked("Высота жилых комнат — не более 2,5 м (п. 5.8 СП 54.13330.2016).")
    assert opposite.details["problems"] == ["opposite_bound"]
    missing = checked("Высота жилых комнат — не менее 2,5 м (п. 77.7 СП 54.13330.2016).")
    assert missing.details["problem"] == "clause_missing"
    words = checked("Высота бассейнов — не менее 2,5 м (п. 5.8 СП 54.13330.2016).")
    assert words.details["problems"] == ["words_absent"]
