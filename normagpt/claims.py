"""Reading what an answer claims (pure functions, no I/O): its sentences, the clauses and
tables each cites, the values it states and the phrases it quotes.

A value is a number as a number: «20 мм» = «2 см» = «0,02 м», «20,0» = «20», «минус
40 °С» = «−40 °С»; a range «от 20 до 30 мм» is its two ends; «не менее», «не более» and
their kin are its bound. Numbers inside references and document codes («п. 10.3.2», «СП
63.13330.2018», «Ф1.3») are not values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from normagpt.parsing import search_normalize

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

# unit → (dimension, factor to the dimension's base)
UNITS: dict[str, tuple[str, float]] = {
    ":": ("ratio", 1.0),
    "мм": ("length", 0.001), "см": ("length", 0.01), "дм": ("length", 0.1),
    "м": ("length", 1.0), "км": ("length", 1000.0),
    "мм2": ("area", 1e-6), "см2": ("area", 1e-4), "м2": ("area", 1.0), "га": ("area", 1e4),
    "м3": ("volume", 1.0), "л": ("volume", 0.001), "дм3": ("volume", 0.001),
    "г": ("mass", 0.001), "кг": ("mass", 1.0), "т": ("mass", 1000.0),
    "н": ("force", 1.0), "кн": ("force", 1e3), "мн": ("force", 1e6),
    "па": ("pressure", 1.0), "кпа": ("pressure", 1e3), "мпа": ("pressure", 1e6),
    "гпа": ("pressure", 1e9),
    "с": ("time", 1.0), "сек": ("time", 1.0), "мин": ("time", 60.0), "ч": ("time", 3600.0),
    "сут": ("time", 86400.0),
    "°c": ("temperature", 1.0), "°": ("angle", 1.0), "%": ("share", 1.0),
    "дб": ("sound", 1.0), "дба": ("sound", 1.0), "лк": ("light", 1.0),
    "вт": ("power", 1.0), "квт": ("power", 1e3), "мвт": ("power", 1e6),
    "м/с": ("speed", 1.0), "км/ч": ("speed", 1 / 3.6),
    "л/с": ("flow", 0.001), "м3/ч": ("flow", 1 / 3600), "м3/с": ("flow", 1.0),
    "л/мин": ("flow", 0.001 / 60),
    "кг/м3": ("density", 1.0), "чел": ("people", 1.0), "этаж": ("storeys", 1.0),
    "балл": ("points", 1.0), "шт": ("pieces", 1.0),
}  # fmt: skip
_UNIT_ALIASES = {
    "м²": "м2", "мм²": "мм2", "см²": "см2", "м³": "м3", "дм³": "дм3", "°с": "°c", "ºс": "°c",
    "ºc": "°c", "° с": "°c", "° c": "°c", "град": "°", "кгс": "кгс", "дб(а)": "дба",
    "м³/ч": "м3/ч", "м³/с": "м3/с", "кг/м³": "кг/м3", "этажа": "этаж", "этажей": "этаж",
    "этажах": "этаж", "баллов": "балл", "балла": "балл", "человек": "чел",
}  # fmt: skip
_UNIT_WORDS = sorted({*UNITS, *_UNIT_ALIASES} - {":"}, key=len, reverse=True)
_UNIT = "|".join(re.escape(u) for u in _UNIT_WORDS)
_NUM = r"(?:минус\s*|(?<![\w.,])[-−–]\s?)?\d+(?:[\u00a0\u202f\u2009]\d{3})*(?:[.,]\d+)?"
_VALUE = re.compile(
    rf"(?P<range>(?:от\s+)?(?P<low>{_NUM})\s*(?:{_UNIT})?\s*(?:до|–|—|-|\.\.\.|…)\s*)?"
    rf"(?P<num>{_NUM})(?:\s*(?P<unit>{_UNIT})(?![а-яёa-z]))?",
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
    """A value as stated: its number (negative for «минус»), unit and bound."""

    number: float
    unit: str  # canonical unit, '' when none
    text: str
    bound: str = ""  # "min", "max" or ''

    @property
    def dimension(self) -> str:
        return UNITS.get(self.unit, ("", 1.0))[0]

    @property
    def base(self) -> float:
        return self.number * UNITS.get(self.unit, ("", 1.0))[1]


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


def _unit(text: str | None) -> str:
    if not text:
        return ""
    unit = text.lower().replace(" ", "").replace("º", "°")
    if unit.startswith("°") and len(unit) > 1:
        return "°c"
    return _UNIT_ALIASES.get(unit, unit)


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
    for match in _VALUE.finditer(masked):
        raw = match.group("num")
        if _YEAR.match(raw.strip()) and not match.group("unit"):
            continue
        unit = _unit(match.group("unit"))
        before = masked[max(0, match.start() - 40) : match.start()]
        if "." in masked[last : match.start()].replace(",", ""):
            listed = ""
        last = match.end()
        bound = "min" if _BOUND_MIN.search(before) else "max" if _BOUND_MAX.search(before) else ""
        if bound and re.search(r":\s*$", before):
            listed = bound
        bound = bound or listed
        if match.group("range"):
            low = match.group("low")
            out.append(Value(_number(low), unit, match.group(0).strip(), "min"))
            out.append(Value(_number(raw), unit, match.group(0).strip(), "max"))
        else:
            out.append(Value(_number(raw), unit, match.group(0).strip(), bound))
    return out


def value_spans(text: str) -> list[tuple[int, int]]:
    """Where the values of `text` are (number and unit), in order: for marking them."""
    masked = _masked(text)
    return [
        (match.start(), match.end())
        for match in _VALUE.finditer(masked)
        if not (_YEAR.match(match.group("num").strip()) and not match.group("unit"))
    ]


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
    """The value of `held` that states `value` (same number in the same dimension, or a
    number without a unit on either side), None when there is none. A bound that says the
    opposite («не менее» against «не более») does not hold."""
    for other in held:
        if value.unit and other.unit:
            if value.dimension != other.dimension:
                continue
            same = abs(value.base - other.base) <= TOLERANCE * max(1.0, abs(value.base))
        else:
            same = abs(value.number - other.number) <= TOLERANCE * max(1.0, abs(value.number))
        if same and not (value.bound and other.bound and value.bound != other.bound):
            return other
    return None


def opposite_bound(value: Value, held: list[Value]) -> Value | None:
    """The same number stated with the opposite bound, if the clause has it."""
    for other in held:
        same_number = abs(value.number - other.number) <= TOLERANCE * max(1.0, abs(value.number))
        if same_number and value.bound and other.bound and value.bound != other.bound:
            return other
    return None


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
    bound = {"min": "не менее ", "max": "не более "}.get(value.bound, "")
    number = f"{value.number:g}".replace(".", ",")
    return f"{bound}{number} {value.unit}".strip()
