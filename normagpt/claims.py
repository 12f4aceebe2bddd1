"""Reading what an answer claims (pure functions, no I/O): its sentences, the clauses and
tables each cites, the values it states and the phrases it quotes.

A value is a number as a number: «20 мм» = «2 см» = «0,02 м», «20,0» = «20», «минус
40 °С» = «−40 °С»; its unit is a quantity read whole (`normagpt.units`: «1 кН/м2» = «1 кПа»,
never «1 кН/м»); a range «от 20 до 30 мм» is its two ends; «не менее», «не более» and
their kin are its bound. Numbers inside references and document codes («п. 10.3.2», «СП
63.13330.2018», «Ф1.3») are not values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from normagpt.parsing import search_normalize
from normagpt.units import UNIT_PATTERN, is_close, power_lost, unit_read

# --- sentences -----------------------------------------------------------------------------

_MARKUP = re.compile(r"\*\*|__|`|^\s*(?:[-*•]|\d+[.)])\s+|^\s*#+\s*|^\s*>\s*", re.M)
# a sentence ends at . ! ? … before a capital, a quote or a bracket (never before a digit:
# «п. 10.3.2»); «т. е.», «и т. д.» and other lower-case continuations do not end one
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[«\"(А-ЯЁA-Z])")
_ABBREVIATION = re.compile(r"(?:\b(?:п|пп|табл|стр|рис|прил|см|ср|ст|гл|разд|им|изм|т|г)\.)$", re.I)


def sentences_split(text: str) -> list[str]:
    """The answer's sentences: Markdown markup off, one line or list item at a time."""
    out: list[str] = []
    for line in _MARKUP.sub("", text).splitlines():
        line = " ".join(line.split())
        if not line:
            continue
        pieces = _SENTENCE_END.split(line)
        current = ""
        for piece in pieces:
            current = f"{current} {piece}".strip() if current else piece
            if not _ABBREVIATION.search(current):
                out.append(current)
                current = ""
        if current:
            out.append(current)
    return out


# --- references ----------------------------------------------------------------------------

_NUMBER = r"(?:[А-ЯЁA-Z]\.)?\d{1,2}(?:\.\d{1,3}){1,4}"
_TABLE_NUMBER = r"(?:[А-ЯЁA-Z]\.?)?\d{1,2}(?:\.\d{1,3}){0,3}"
_LIST = rf"{_NUMBER}(?:\s*(?:,|и|или|–|-)\s*{_NUMBER})*"
_CLAUSE_REF = re.compile(
    rf"\b(?:пп?\.|пункт[а-я]*|п)\s*({_LIST})|(?<![\d.])({_NUMBER})(?=\s*\)?\s*(?:СП|ГОСТ|СНиП)\b)",
    re.I,
)
_TABLE_REF = re.compile(
    rf"\b(?:табл\.|таблиц[а-я]*)\s*({_TABLE_NUMBER}(?:\s*(?:,|и)\s*{_TABLE_NUMBER})*)"
    r"(?![\d.]*\d)",
    re.I,
)
_BARE_CLAUSE = re.compile(rf"(?<![\d.ФF])({_NUMBER}\.\d{{1,3}}|\d{{1,2}}\.\d{{1,3}}\.\d{{1,3}})\b")
_DOCUMENT = re.compile(
    r"\b(?:СП|ГОСТ(?:\s*Р)?|СНиП|СанПиН|СТО)\s*\d[\d.\-–]*\d|\b\d{1,3}\.\d{5,7}(?:\.\d{4})?\b",
    re.I,
)
_LIST_ITEM = re.compile(_NUMBER)


@dataclass(frozen=True)
class Reference:
    kind: str  # "clause" or "table"
    number: str
    document: str  # as written in the claim, '' when it names none
    text: str  # the reference as written


def references_find(claim: str) -> list[Reference]:
    """The clauses and tables `claim` cites, each with the document named next to it (the
    one right after it, else right before it, else the only one the claim names)."""
    documents = [(m.start(), m.end(), m.group(0)) for m in _DOCUMENT.finditer(claim)]
    found: list[tuple[int, int, str, str]] = []  # start, end, kind, numbers
    taken: list[tuple[int, int]] = []
    for pattern, kind in ((_TABLE_REF, "table"), (_CLAUSE_REF, "clause")):
        for match in pattern.finditer(claim):
            numbers = match.group(1) or (match.group(2) if pattern is _CLAUSE_REF else "")
            if numbers and not _inside(match.start(), taken):
                found.append((match.start(), match.end(), kind, numbers))
                taken.append((match.start(), match.end()))
    for match in _BARE_CLAUSE.finditer(claim):
        if not _inside(match.start(), taken) and not _inside(match.start(), _spans(documents)):
            found.append((match.start(), match.end(), "clause", match.group(1)))
            taken.append((match.start(), match.end()))
    references = []
    for start, end, kind, numbers in sorted(found):
        document = _document_near(start, end, documents)
        pattern = _LIST_ITEM if kind == "clause" else re.compile(_TABLE_NUMBER)
        for number in pattern.findall(numbers):
            references.append(
                Reference(kind, number.upper(), document, claim[start:end].strip(" ,;"))
            )
    return list(dict.fromkeys(references))


def documents_find(text: str) -> list[str]:
    """The document codes and short names `text` mentions, in order."""
    return list(dict.fromkeys(m.group(0) for m in _DOCUMENT.finditer(text)))


def _spans(documents: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    return [(start, end) for start, end, _ in documents]


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _document_near(start: int, end: int, documents: list[tuple[int, int, str]]) -> str:
    after = [d for d in documents if 0 <= d[0] - end <= 12]
    if after:
        return after[0][2]
    before = [d for d in documents if 0 <= start - d[1] <= 12]
    if before:
        return before[-1][2]
    return documents[0][2] if len(documents) == 1 else ""


# --- values --------------------------------------------------------------------------------

# a number: not glued to a letter before it («ф1», «А500», the «2» of an unread «м2»), but
# a size «3х3 м» is two; «−40» and «минус 40» are negative
_NUM = (
    r"(?:минус\s*|(?<![\w.,])[-−–]\s?|(?<![^\W_хХxXØø]))"
    r"\d+(?:[\u00a0\u202f\u2009]\d{3})*(?:[.,]\d+)?"
)
_VALUE = re.compile(
    rf"(?P<range>(?:от\s+)?(?P<low>{_NUM})\s*(?P<low_unit>{UNIT_PATTERN})?"
    rf"\s*(?:до|–|—|-|\.\.\.|…)\s*)?(?P<num>{_NUM})(?:\s*(?P<unit>{UNIT_PATTERN}))?",
    re.I,
)
# classes and grades: В25, F150, W6, REI 60, EI 45, R 90, Ф1.3, «III степени»
_GRADE = re.compile(
    r"\b(?:(?P<kind>REI|EI|RE|R|E|B|В|F|W|П|D|Д|М|Ф)(?P<num>\d+(?:[.,]\d+)?)|"
    r"(?P<fire>REI|EI|RE|R)\s(?P<minutes>\d+))\b"
    r"|\b(?P<roman>I{1,3}V?|IV|V)\s+(?:степен|класс|категор)",
)
_BOUND_MIN = re.compile(
    r"(?<![а-яё])(?:не\s+(?:менее|ниже|меньше|тоньше|короче|уже)|минимум|минимальн\w*|от|"
    r"свыше|более чем)[\s:]+(?:[а-яё]+\s+){0,2}$",
    re.I,
)
_BOUND_MAX = re.compile(
    r"(?<![а-яё])(?:не\s+(?:более|выше|больше|толще|длиннее|шире)|"
    r"не\s+(?:должн\w+\s+)?превыша\w*|максимум|максимальн\w*|до|не\s+свыше)"
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


@dataclass(frozen=True)
class Grade:
    """A class or grade: «В25», «F150», «REI 60», «Ф1.3», «III степени»."""

    kind: str
    number: str
    text: str


@dataclass
class Said:
    """What a piece of text states: values, grades and quoted phrases."""

    values: list[Value] = field(default_factory=list)
    grades: list[Grade] = field(default_factory=list)
    quotes: list[str] = field(default_factory=list)


def _number(text: str) -> float:
    text = text.lower().replace("\u00a0", "").replace(" ", "")
    negative = text.startswith(("минус", "-", "−", "–"))
    digits = text.removeprefix("минус").lstrip("-−–").replace(",", ".")
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


def _masked(text: str) -> str:
    """`text` with references, document codes and grades blanked (same length)."""

    def blank(match: re.Match[str]) -> str:
        return " " * len(match.group(0))

    for pattern in (_DOCUMENT, _TABLE_REF, _CLAUSE_REF, _BARE_CLAUSE, _GRADE):
        text = pattern.sub(blank, text)
    return text


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
    """The matches of `_VALUE` that are values: a year («2018», «2018 г.») is not one."""
    return [
        match
        for match in _VALUE.finditer(masked)
        if not (_YEAR.match(match.group("num").strip()) and _unit(match.group("unit")) in ("", "г"))
    ]


def _values_of(match: re.Match[str], bound: str) -> list[Value]:
    """The value a match states, or both ends of a range (the low end in its own unit if
    it has one, else in the high end's: «от 0,5 до 1,5 кН/м²»). Two ends in units of two
    dimensions, or falling («2 м — 15 мм»), are no range but two values and a dash."""
    unit, raw, text = _unit_at(match, "unit"), match.group("num"), match.group(0).strip()
    if not match.group("range"):
        return [Value(_number(raw), unit, text, bound, _step(raw))]
    low = match.group("low")
    low_unit = _unit_at(match, "low_unit")
    ends = [Value(_number(low), low_unit or unit, text, "min", _step(low))]
    ends.append(Value(_number(raw), unit, text, "max", _step(raw)))
    if low_unit and (ends[0].dimension != ends[1].dimension or ends[0].base > ends[1].base):
        first = match.string[match.start("low") : match.end("low_unit")]
        second = match.string[match.start("num") : match.end()]
        # the bound said before the first is the first's («не более 7 баллов — 7,2 м»)
        return [replace(ends[0], text=first, bound=bound), replace(ends[1], text=second, bound="")]
    return ends


def value_spans(text: str) -> list[tuple[int, int]]:
    """Where the values of `text` are (number and unit), in order: for marking them."""
    return [(match.start(), match.end()) for match in _values_matched(_masked(text))]


def grades_find(text: str) -> list[Grade]:
    out = []
    for match in _GRADE.finditer(text):
        if match.group("roman"):
            out.append(Grade("степень", match.group("roman"), match.group(0)))
        elif match.group("fire"):
            out.append(Grade(match.group("fire"), match.group("minutes"), match.group(0)))
        else:
            kind = match.group("kind").upper().replace("В", "B").replace("Д", "D")
            out.append(Grade(kind, match.group("num").replace(",", "."), match.group(0)))
    return out


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


def grade_held(grade: Grade, held: list[Grade]) -> bool:
    return any(g.kind == grade.kind and g.number == grade.number for g in held)


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
