"""Reading what an answer claims (pure functions, no I/O): its sentences, the clauses and
tables each cites (`normagpt.references`), the values it states, its classes and grades
(`normagpt.grades`) and the phrases it quotes.

A value is a number as a number: «20 мм» = «2 см» = «0,02 м», «20,0» = «20», «минус
40 °С» = «−40 °С» = «-40 °С»; its unit is a quantity read whole (`normagpt.units`: «1 кН/м2»
= «1 кПа», never «1 кН/м»); a range «от 20 до 30 мм», «30-50 л/сут» is its two ends; «не
менее», «не более» and their kin are its bound. A dash is a minus only where nothing else
can be meant (`_signs_read`): in «дома - 3 м», «кухни — 8 м2» and a list's «- 0,2 м» it is
punctuation. Numbers inside references, pages cited and document codes («п. 10.3.2», «стр. 2»,
«СП 63.13330.2018», «Ф1.3»), and those naming a clause, a row or a figure («6.7
Минимальные…», «рисунок Г.1»), are not values.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace

from normagpt.grades import Grade, grade_spans, grades_find
from normagpt.grades import grade_held as grade_held
from normagpt.parsing import search_normalize
from normagpt.references import Reference as Reference
from normagpt.references import documents_find as documents_find
from normagpt.references import naming_blanked
from normagpt.references import references_find as references_find
from normagpt.units import UNIT_PATTERN, is_close, power_lost, unit_read

# --- sentences -----------------------------------------------------------------------------

_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")  # «[страницу](http://…)»: its text says
_MARKUP = re.compile(r"\*\*|__|`|^\s*(?:[-*•]|\d+[.)])\s+|^\s*#+\s*|^\s*>\s*", re.M)
# a sentence ends at . ! ? … before a capital, a quote or a bracket (never before a digit:
# «п. 10.3.2»); «т. е.», «и т. д.» and other lower-case continuations do not end one
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[«\"(А-ЯЁA-Z])")
_ABBREVIATION = re.compile(r"(?:\b(?:п|пп|табл|стр|рис|прил|см|ср|ст|гл|разд|им|изм|т|г)\.)$", re.I)


def sentences_split(text: str) -> list[str]:
    """The answer's sentences: Markdown markup off (a link is its text), one line or list
    item at a time."""
    out: list[str] = []
    for line in _MARKUP.sub("", _LINK.sub(r"\1", text)).splitlines():
        line = " ".join(line.split())
        if not line:
            continue
        pieces = _SENTENCE_END.split(line)
        current = ""
        for piece in pieces:
            if not current and _CITED_ALONE.match(piece) and out:
                out[-1] = f"{out[-1]} {piece}"  # «… 500 руб. (п. 18.5 …).»: its source
                continue
            current = f"{current} {piece}".strip() if current else piece
            if not _ABBREVIATION.search(current):
                out.append(current)
                current = ""
        if current:
            out.append(current)
    return out


# a Markdown table: a row between pipes, and the rule under its head («|---|:--:|»)
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEAD_UNIT = re.compile(r",\s*(?P<unit>[^,\d]{1,12})$")  # «Толщина защитного слоя, мм»
_ENDS_IN_NUMBER = re.compile(r"\d\s*$")  # a value written with no unit: its head's is due
# a number: one decimal mark, groups of digits (not a date «01.02.2024», a clause «10.3.2»)
_CELL_NUMBER = r"[−\-–]?\d+(?:[ \u00a0]\d{3})*(?:[.,]\d+)?"
# a cell stating a value: a bound, a number or a range, a short unit («не менее 30 мм»,
# «20–25», «0,5 кН/м²»); a cell of words is the row's condition
_VALUE_CELL = re.compile(
    rf"^(?:(?:не\s+)?(?:менее|более|больше|меньше|до|от|свыше)\s+)?{_CELL_NUMBER}"
    rf"(?:\s*(?:[-–—…]|до)\s*{_CELL_NUMBER})?\s*[^\s\d]{{0,12}}$",
    re.I,
)
_LOWER_FIRST = re.compile(r"^[А-ЯЁ](?=[а-яё]|\s)")  # «На …», «В грунте»; not «B25», «REI 60»


def tables_read(text: str) -> str:
    """`text` with each Markdown table written as its rows' sentences, one list item a
    value: «Толщина защитного слоя: на открытом воздухе — 30 мм.» — the value's column head,
    the row's other cells (its condition), the value (a bare number with the unit its head
    names: «…, мм»). Each is a claim checked with its condition, as a sentence saying it
    would be."""
    lines, out, at = text.splitlines(), [], 0
    while at < len(lines):
        if not (
            at + 1 < len(lines) and _TABLE_ROW.match(lines[at]) and TABLE_RULE.match(lines[at + 1])
        ):
            out.append(lines[at])
            at += 1
            continue
        head, at = _cells(lines[at]), at + 2
        out.append("")
        while at < len(lines) and _TABLE_ROW.match(lines[at]):
            out += [f"- {said}" for said in _row_said(head, _cells(lines[at]))]
            at += 1
        out.append("")
    return "\n".join(out)


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def _row_said(head: list[str], cells: list[str]) -> list[str]:
    """A table row's sentences: one a value cell, each with the row's other cells (its
    condition; a row of values only: its first cell, under its head)."""
    pairs = [(h, c.rstrip(".")) for h, c in zip(head, cells, strict=False)]
    values = [(h, c) for h, c in pairs if _VALUE_CELL.match(c)]
    words = [c for h, c in pairs if c and not _VALUE_CELL.match(c)]
    if not words and len(values) > 1:  # «| 12 | 200 |» under «Диаметр, мм | Шаг, мм»
        (name, cell), values = values[0], values[1:]
        words = [f"{_head_core(name)} {_with_unit(name, cell)}".strip()]
    condition = ", ".join(words)
    if not values:
        return [f"{condition}."] if condition else []
    where = f"{_LOWER_FIRST.sub(lambda m: m.group().lower(), condition)} — " if condition else ""
    said = []
    for name, cell in values:
        what = f"{_head_core(name)}: " if _head_core(name) else ""
        said.append(f"{what}{where}{_with_unit(name, cell)}.")
    return said


def _head_core(head: str) -> str:
    """A column's head without the unit it names («Толщина защитного слоя, мм» → its
    words)."""
    unit = _HEAD_UNIT.search(head)
    return (head[: unit.start()] if unit else head).strip()


def _with_unit(head: str, cell: str) -> str:
    """A value cell with its head's unit when it writes none («не менее 30», «20–25»)."""
    unit = _HEAD_UNIT.search(head)
    if unit and _ENDS_IN_NUMBER.search(cell):
        return f"{cell} {unit.group('unit').strip()}"
    return cell


# a reference alone in brackets: the source of the sentence before, cut from it after an
# abbreviation the splitter took for its end («500 руб.», «10 тыс.»)
_CITED_ALONE = re.compile(
    r"^\((?:п|пп|пункт|табл|таблиц[аеы]|ст|статья|разд|раздел|прил|приложение)\.?\s[^()]*\)[.;]?$",
    re.I,
)


# --- values --------------------------------------------------------------------------------

# a number: not glued to a letter before it («ф1», «А500», the «2» of an unread «м2»), but
# a size «3х3 м» is two; «−40» and «минус 40» are negative, «+5» and «плюс 5» positive (a
# dash that is a minus is read as «−» first: `_signs_read`)
_NUM = (
    r"(?:минус\s*|плюс\s*|(?<![\w.,])[−+]\s?|(?<![^\W_хХxXØø]))"
    r"\d+(?:[\u00a0\u202f\u2009]\d{3})*(?:[.,]\d+)?"
)


@functools.cache
def _value_pattern() -> re.Pattern[str]:
    """A value, a range or a bound with its units: compiled on first use (some 70 ms, which
    a server started for other tools would otherwise pay at every start)."""
    return re.compile(
        rf"(?P<range>(?:от\s+)?(?P<low>{_NUM})\s*(?P<low_unit>{UNIT_PATTERN})?"
        rf"\s*(?:до|–|—|-|\.\.\.|…)\s*)?(?P<num>{_NUM})(?:\s*(?P<unit>{UNIT_PATTERN}))?",
        re.I,
    )


_BOUND_MIN = re.compile(
    r"(?<![а-яё])(?:не\s+(?:долж\w+\s+)?(?:быть\s+)?(?:менее|ниже|меньше|тоньше|короче|уже|"
    r"ближе|ранее|раньше)|минимум|"
    r"минимальн\w*|от|"
    r"свыше|(?<!не\s)более\s+чем)[\s:]+(?:[а-яё]+\s+){0,2}$",
    re.I,
)
_BOUND_MAX = re.compile(
    r"(?<![а-яё])(?:не\s+(?:долж\w+\s+)?(?:быть\s+)?(?:более|выше|больше|толще|длиннее|шире|"
    r"дальше|позднее|позже|дольше|"
    r"глубже)|"
    r"не\s+(?:долж\w+\s+)?превыша\w*|максимум|максимальн\w*|до|не\s+свыше)"
    r"[\s:]+(?:[а-яё]+\s+){0,2}$",
    re.I,
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")


@dataclass(frozen=True)
class Value:
    """A value as stated: its number (negative for «минус»), unit and bound, and the place
    value of its last digit as written (how near another writing of it must come)."""

    number: float
    unit: str  # canonical unit («кН/м²», «Вт/(м²·°С)», «:» for a ratio), '' when none
    text: str
    bound: str = ""  # "min", "max" or ''
    step: float = 0.0  # 0.1 for «0,3», 1 for «20»; 0 for exact (a ratio's quotient)

    @property
    def dimension(self) -> str:
        """What it measures («pressure» for кН/м² and кПа alike), '' without a unit."""
        unit = unit_read(self.unit) if self.unit else None
        return unit.dimension if unit else ""

    @property
    def scale(self) -> float:
        """The unit's factor to base units (1 without a unit)."""
        unit = unit_read(self.unit) if self.unit else None
        return unit.factor if unit else 1.0

    @property
    def base(self) -> float:
        """The value in base units: 1 кН/м² and 1 кПа are both 1000."""
        return self.number * self.scale


@dataclass
class Said:
    """What a piece of text states: values, grades and quoted phrases."""

    values: list[Value] = field(default_factory=list)
    grades: list[Grade] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)


def _number(text: str) -> float:
    text = text.lower().replace("\u00a0", "").replace(" ", "")
    negative = text.startswith(("минус", "−"))
    digits = text.removeprefix("минус").removeprefix("плюс").lstrip("−+").replace(",", ".")
    return -float(digits) if negative else float(digits)


def _step(text: str) -> float:
    """The place value of the last digit written: 0.01 for «0,35», 1 for «20»."""
    _, _, decimals = text.replace(",", ".").rpartition(".")
    return 10.0 ** -len(decimals) if "." in text.replace(",", ".") else 1.0


def _unit(text: str | None) -> str:
    """The unit as written, canonical («кН/м2» → «кН/м²»); '' for none."""
    unit = unit_read(text) if text else None
    return unit.text if unit else ""


def _unit_at(match: re.Match[str], group: str) -> str:
    """The unit a match's `group` writes, canonical; '' when none, or when OCR dropped its
    power («1,4 т/м ,»): a number without a unit is compared as a number, a unit guessed
    wrong would be compared as another quantity."""
    if not match.group(group):
        return ""
    if power_lost(match.string[match.start(group) : match.end(group) + 3]):
        return ""
    return _unit(match.group(group))


# A dash before a number is a minus only where nothing else can be meant: glued to the
# number after «=», «<», «>», «(», «/», «от», «до», «ниже», «выше» or a word of temperature,
# before degrees («-30 °С»), or alone on its line (a table's cell «-21,2»). Glued to a number
# before it, it is a range («30-50», «0,2–0,3»); spaced from its number («кухни — 8 м2», «- 1
# м» of a list) or opening a list item («-13 % — для жилых»), punctuation.
_DASH = re.compile(r"(?<![\w.,])[-–—](?=\d)")
_MINUS_AFTER = re.compile(
    r"(?:[=<>≤≥(/±]|(?<![а-яё])(?:от|до|ниже|выше)|температур[а-яё]*(?:\s+[а-яё]+){0,3}:?)\s*$",
    re.I,
)
_DEGREES = re.compile(r"\d+(?:[.,]\d+)?\s*(?:°|º|℃|град)")
_CELL = re.compile(r"\d+(?:[.,]\d+)?[ \t]*(?:\n|$)")


def _signs_read(text: str) -> str:
    """`text` with each dash that is a minus written «−» (same length; see above)."""
    out = list(text)
    for match in _DASH.finditer(text):
        start, end = match.start(), match.end()
        line = text[text.rfind("\n", 0, start) + 1 : start]
        if (
            _MINUS_AFTER.search(line)
            or _DEGREES.match(text, end)
            or (not line.strip() and _CELL.match(text, end))
        ):
            out[start] = "−"
    return "".join(out)


def _masked(text: str) -> str:
    """`text` with references, document codes, naming numbers and grades blanked, minus
    signs read and a unit per metre written as one (same length)."""
    text = _per_metre(naming_blanked(_signs_read(text)))
    if "±" in text:
        text = _TOLERANCE.sub(_nominal, text)
    for start, end in grade_spans(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


# a value with its tolerance: «(1,35 ± 0,15) м», «20 ± 2 мм» — the nominal value stated
_TOLERANCE = re.compile(
    r"\((?P<num>\s*\d+(?:[.,]\d+)?)\s*±\s*\d+(?:[.,]\d+)?\s*\)|(?<=\d)\s*±\s*\d+(?:[.,]\d+)?"
)


def _nominal(match: re.Match[str]) -> str:
    """A tolerance blanked, its nominal value kept in place (the same length)."""
    if match.group("num") is None:
        return " " * len(match.group(0))
    return " " + match.group("num") + " " * (len(match.group(0)) - 1 - len(match.group("num")))


# a unit per metre, square or cubic metre: «2 мм на 1 м», «2 мм на метр», «0,5 кг на 1 м2»,
# «на каждый метр» — one unit, a gradient or a rate («мм/м»), not a value and a length
# (not «2 м на 1 м»: a size)
_PER_METRE = re.compile(
    r"(?<=\d)(?P<unit>\s*(?:мм|см|кг|г|л|шт)\.?)\s+на\s+(?:1\s*|один\s+|каждый\s+)?"
    r"(?P<per>м(?:етр)?(?:[23²³](?![\d,])|(?![а-яё\d])))",
    re.I,
)


def _per_metre(text: str) -> str:
    """«2 мм на 1 м» as «2 мм/м» (padded: the same length)."""

    def joined(match: re.Match[str]) -> str:
        per = match.group("per")
        power = per[-1] if per[-1] in "23²³" else ""
        said = f"{match.group('unit')}/м{power}"
        return said + " " * (len(match.group(0)) - len(said))

    return _PER_METRE.sub(joined, text)


def masked_text(text: str) -> str:
    """`text` without its references, document codes and grades (blanked)."""
    return _masked(text)


_RATIO = re.compile(r"(?<![\d,.:])(\d+(?:,\d+)?) ?: ?(\d+(?:,\d+)?)(?![\d:]|,\d)")


def values_find(text: str) -> list[Value]:
    """The values `text` states, with their units and bounds (a range gives both ends; a
    ratio such as a slope «1:1,5» is one value, its quotient, in the unit «:»)."""
    masked = _masked(text)
    out: list[Value] = [
        Value(_number(m.group(1)) / _number(m.group(2)), ":", m.group(0))
        for m in _RATIO.finditer(masked)
        if _number(m.group(2))
    ]
    masked = _RATIO.sub(lambda m: " " * len(m.group(0)), masked)
    listed = ""  # «не менее:» and a list of values: the bound holds to the sentence's end
    last = 0
    for match in _values_matched(masked):
        before = masked[max(0, match.start() - 40) : match.start()]
        if "." in masked[last : match.start()].replace(",", ""):
            listed = ""
        last = match.end()
        bound = "min" if _BOUND_MIN.search(before) else "max" if _BOUND_MAX.search(before) else ""
        if bound and re.search(r":\s*$", before):
            listed = bound
        out += _values_of(match, bound or listed)
    return out


def _values_matched(masked: str) -> list[re.Match[str]]:
    """The matches of `_value_pattern` that are values: a year («2018», «2018 г.», «2018
    года») is not one."""
    return [
        match
        for match in _value_pattern().finditer(masked)
        if not (
            _YEAR.match(match.group("num").strip())
            and _unit(match.group("unit")) in ("", "г", "год")
        )
    ]


def _values_of(match: re.Match[str], bound: str) -> list[Value]:
    """The value a match states, or both ends of a range (the low end in its own unit if
    it has one, else in the high end's: «от 0,5 до 1,5 кН/м²»). Two ends in units of two
    dimensions, falling («2 м — 15 мм»), or in two units across a dash («150 мм — 35 м»: a
    range writes its unit once, or the same twice) are no range but two values and a dash."""
    unit, raw, text = _unit_at(match, "unit"), match.group("num"), match.group(0).strip()
    if not match.group("range"):
        return [Value(_number(raw), unit, text, bound, _step(raw))]
    low = match.group("low")
    low_unit = _unit_at(match, "low_unit")
    ends = [Value(_number(low), low_unit or unit, text, "min", _step(low))]
    ends.append(Value(_number(raw), unit, text, "max", _step(raw)))
    dashed = not re.search(r"до|\.\.\.|…", match.group("range"))
    if low_unit and (
        ends[0].dimension != ends[1].dimension
        or ends[0].base > ends[1].base
        or (dashed and low_unit != unit)  # «150 мм — 35 м»: a diameter and its distance
    ):
        first = match.string[match.start("low") : match.end("low_unit")]
        second = match.string[match.start("num") : match.end()]
        # the bound said before the first is the first's («не более 7 баллов — 7,2 м»)
        return [replace(ends[0], text=first, bound=bound), replace(ends[1], text=second, bound="")]
    return ends


def value_spans(text: str) -> list[tuple[int, int]]:
    """Where the values of `text` are (number and unit), in order: for marking them."""
    return [(match.start(), match.end()) for match in _values_matched(_masked(text))]


QUOTED = re.compile(r"«([^«»]{3,400})»|\"([^\"]{3,400})\"|“([^“”]{3,400})”")


def quotes_find(text: str) -> list[str]:
    """Phrases quoted in `text` (two words or more; a quoted reference or code is not one)."""
    out = []
    for match in QUOTED.finditer(text):
        quoted = next(g for g in match.groups() if g)
        bare = _masked(quoted).strip(" .,;:…")
        if len(bare.split()) >= 2:
            out.append(quoted.strip())
    return out


def said(text: str) -> Said:
    return Said(values_find(text), grades_find(text), quotes_find(text))


# --- comparing -----------------------------------------------------------------------------

TOLERANCE = 1e-6


def value_held(value: Value, held: list[Value]) -> Value | None:
    """The value of `held` that states `value` (`_same`), None when there is none. A bound
    that says the opposite («не менее» against «не более») does not hold."""
    for other in held:
        if _same(value, other) and not (value.bound and other.bound and value.bound != other.bound):
            return other
    return None


def opposite_bound(value: Value, held: list[Value]) -> Value | None:
    """The same value stated with the opposite bound, if the clause has it."""
    for other in held:
        if value.bound and other.bound and value.bound != other.bound and _same(value, other):
            return other
    return None


def _same(a: Value, b: Value) -> bool:
    """Whether `a` and `b` state one quantity. With units on both sides: the same dimension
    and amount (1 кН/м² = 1 кПа; never кН/м² and кН/м). A number without a unit is its
    number, as a table's cell under «кПа» is; a share («2 %», «20 ‰», «1:50») is also the
    fraction a slope is written as («i = 0,02»)."""
    if a.unit and b.unit:
        return a.dimension == b.dimension and _close(
            a.base, a.step * a.scale, b.base, b.step * b.scale
        )
    if _close(a.number, a.step, b.number, b.step):
        return True
    share, bare = (a, b) if a.unit else (b, a)
    return share.dimension == "share" and _close(
        share.base, share.step * share.scale, bare.number, bare.step
    )


def _close(a: float, a_step: float, b: float, b_step: float) -> bool:
    return is_close(a, a_step, b, b_step, TOLERANCE)


_FLAT = re.compile(r"[^0-9a-zа-я]+")


def flat(text: str) -> str:
    """Lower case, ё→е, words hyphenated across lines joined, one space between words, no
    punctuation: how a quote is looked for in a clause."""
    text = re.sub(r"([а-яёa-z])-\s*\n\s*([а-яёa-z])", r"\1\2", text, flags=re.I)
    return " ".join(_FLAT.sub(" ", search_normalize(text)).split())


def quote_held(quote: str, text: str) -> bool:
    """Whether every part of `quote` (parts split at «…» or «...») is in `text`."""
    haystack = flat(text)
    parts = [flat(part) for part in re.split(r"…|\.\.\.", quote)]
    return all(part in haystack for part in parts if part)


def value_text(value: Value) -> str:
    """A value as a message shows it: «не менее 0,3 кН/м²»; a ratio as written («1:1,5»)."""
    bound = {"min": "не менее ", "max": "не более "}.get(value.bound, "")
    if value.unit == ":":
        return f"{bound}{value.text}"
    number = f"{value.number:.10g}".replace(".", ",")
    return f"{bound}{number} {value.unit}".strip()
