"""Classes and grades as the norms write them (pure functions, no I/O): «В25», «F150», «W6»,
«D500», «П4», «С0», «REI 60», «Ф1.3», «III степени огнестойкости».

One grade has many spellings, and a claim is held by any of them: the letter Cyrillic or
Latin («В20», «B20»), spaced from its number where the letter cannot be a word («F 75», «D
1000»; «В 20» only after «класс…»), ГОСТ 10060's F₁ («F₁75»: the F of old; not «F1 75»,
which OCR also makes of a letter-spaced «F 1 5 0»), a class's roman numeral before its word
or after «степени огнестойкости» («III степени», «степени огнестойкости III», a list «I, II,
III степени» or «I–III степени»: each of them), or in a table's column under «Степень
огнестойкости»; OCR's letters for digits («СО» for С0, «ПЗ» for П3, «Ш» for III). A clause
that gives a class as the range a rule applies to («для класса: до В25», «В30 и выше», «В5
и ниже») holds a class a claim names within it («бетон класса В20»); a class required («не
ниже F25») and a bound claimed («не ниже F150») are held only by their own number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ROMAN = r"(?:VI{0,3}|IV|IX|I{1,3}|Ш)(?![\w])"
_ROMANS = rf"{_ROMAN}(?:\s*(?:,|и|или|–|—|-)\s*{_ROMAN})*"
_NUMBER = r"\d+(?:[.,]\d+)?"
_AFTER_CLASS = r"(?:(?<=класс\s)|(?<=класс[а-я]\s)|(?<=класс[а-я]{2}\s))"
# every spelling of a grade (`grade_spans` blanks them where values are read)
GRADE_PATTERN = re.compile(
    rf"\b(?:F₁\s?(?P<f1>\d{{2,4}})|F₂\s?(?P<f2>\d{{2,4}})"
    rf"|(?P<kind>REI|EI|RE|R|E|B|В|F|W|П|D|Д|М|Ф|С|C)(?P<num>{_NUMBER})"
    rf"|(?P<fire>REI|EI|RE|R)\s(?P<minutes>\d+)"
    rf"|(?P<spaced>[BFWD])\s(?P<spaced_num>{_NUMBER})"
    rf"|{_AFTER_CLASS}В\s(?P<class_num>{_NUMBER})"
    r"|(?P<ocr>С[ОЗ]|ПЗ))\b"
    rf"|\b(?P<romans>{_ROMANS})\s+(?:степен|класс|категор)"
    rf"|степен[а-я]*\s+огнестойкости\s+(?P<romans_after>{_ROMANS})",
)
_KIND = str.maketrans("ВДС", "BDC")
_OCR = {"СО": ("C", "0"), "СЗ": ("C", "3"), "ПЗ": ("П", "3")}  # OCR's letters for digits
_ROMAN_VALUES = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9}
_ROMAN_OF = {v: k for k, v in _ROMAN_VALUES.items()}
# a class given as the range a rule applies to («для класса: до В25», «В30 и выше», «св.
# В25»), or as required («не ниже F25»: it holds F25 only)
_BOUNDS_BEFORE = (
    ("to", re.compile(r"(?<![а-яё])до\s+$", re.I)),
    ("from", re.compile(r"(?<![а-яё])(?:св\.|свыше|от)\s+$", re.I)),
    ("min", re.compile(r"(?<![а-яё])не\s+(?:ниже|менее)\s+$", re.I)),
    ("max", re.compile(r"(?<![а-яё])не\s+(?:выше|более)\s+$", re.I)),
)
_BOUND_AFTER = re.compile(r"\s+и\s+(?P<word>выше|более|ниже|менее)\b", re.I)
# a table's column of fire resistance degrees: lines holding roman numerals only
_DEGREES_TABLE = re.compile(r"степен[а-я]*\s+огнестойкост", re.I)
_ROMAN_LINE = re.compile(rf"^[ \t]*({_ROMANS})[ \t,.;]*$", re.M)


@dataclass(frozen=True)
class Grade:
    """A class or grade: «В25», «F150», «REI 60», «Ф1.3», «III степени». Its `bound`: "to"
    for a class given as a range «до В25» or «В5 и ниже», "from" for «В30 и выше» or «св.
    В25»; "min" for a class required as «не ниже F25», "max" for «не выше В25»."""

    kind: str
    number: str
    text: str
    bound: str = ""


def grades_find(text: str) -> list[Grade]:
    """The grades `text` states, in order, in any of their spellings (see the module)."""
    out: list[Grade] = []
    for match in GRADE_PATTERN.finditer(text):
        if match.group("romans") or match.group("romans_after"):
            romans = match.group("romans") or match.group("romans_after")
            out += [Grade("степень", r, match.group(0)) for r in _romans(romans)]
            continue
        kind, number = _kind_number(match)
        out.append(Grade(kind, number.replace(",", "."), match.group(0), _bound(match)))
    if _DEGREES_TABLE.search(text):
        taken = {g.number for g in out if g.kind == "степень"}
        for line in _ROMAN_LINE.finditer(text):
            out += [
                Grade("степень", r, line.group(1)) for r in _romans(line.group(1)) if r not in taken
            ]
    return out


def grade_spans(text: str) -> list[tuple[int, int]]:
    """Where the grades of `text` are written: the whole spelling, but of «степени
    огнестойкости III» only the numeral (the words say what the claim is about)."""
    return [
        match.span("romans_after") if match.group("romans_after") else match.span()
        for match in GRADE_PATTERN.finditer(text)
    ]


def _kind_number(match: re.Match[str]) -> tuple[str, str]:
    """A grade's kind (its letter, Latin where Cyrillic has a twin: В → B, С → C; Д → D) and
    number, from a match of `GRADE_PATTERN` that is no roman numeral."""
    if match.group("f1"):
        return "F", match.group("f1")
    if match.group("f2"):
        return "F₂", match.group("f2")
    if match.group("fire"):
        return match.group("fire"), match.group("minutes")
    if match.group("spaced"):
        return match.group("spaced"), match.group("spaced_num")
    if match.group("class_num"):
        return "B", match.group("class_num")
    if match.group("ocr"):
        return _OCR[match.group("ocr")]
    return match.group("kind").upper().translate(_KIND), match.group("num")


def _bound(match: re.Match[str]) -> str:
    """How a grade is bounded (see `Grade`): by the words before it, or «и выше», «и ниже»
    after it; '' when it is not."""
    before = match.string[max(0, match.start() - 12) : match.start()]
    for bound, pattern in _BOUNDS_BEFORE:
        if pattern.search(before):
            return bound
    after = _BOUND_AFTER.match(match.string, match.end())
    if after is None:
        return ""
    return "from" if after.group("word").lower() in ("выше", "более") else "to"


def _romans(written: str) -> list[str]:
    """The roman numerals a list or range names: «I, II и III» and «I–III» both I, II, III
    («Ш» read as III)."""
    parts = re.split(r"\s*(,|и|или|–|—|-)\s*", written.replace("Ш", "III"))
    numerals, out = parts[::2], [parts[0]]
    for separator, numeral in zip(parts[1::2], numerals[1:], strict=True):
        low, high = _ROMAN_VALUES.get(out[-1], 0), _ROMAN_VALUES.get(numeral, 0)
        if separator in "–—-" and 0 < low < high:
            out += [_ROMAN_OF[n] for n in range(low + 1, high)]
        out.append(numeral)
    return list(dict.fromkeys(out))


def grade_held(grade: Grade, held: list[Grade]) -> bool:
    """Whether a grade of `held` states `grade`: the same kind and number, or — for a grade
    claimed without a bound — a range of the same kind that takes it in («до В25» holds
    В20; «не ниже В25» holds only В25)."""
    return any(_holds(other, grade) for other in held)


def _holds(other: Grade, grade: Grade) -> bool:
    if other.kind != grade.kind:
        return False
    if other.number == grade.number:
        return True
    if grade.bound or other.bound not in ("to", "from") or grade.kind == "степень":
        return False
    try:
        claimed, given = float(grade.number), float(other.number)
    except ValueError:
        return False
    return claimed <= given if other.bound == "to" else claimed >= given
