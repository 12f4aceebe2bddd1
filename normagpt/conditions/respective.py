"""Values given «соответственно» (pure): a list of values paired, one by one in order, with
the lists of numbers after the word («не более 2, 4 и 8 Ом соответственно при линейных
напряжениях 660, 380 и 220 В источника трехфазного тока или 380, 220 и 127 В источника
однофазного тока»: 4 Ом at 380 В of a three-phase source, and at 220 В of a one-phase one)."""

from __future__ import annotations

import re

from normagpt import claims as c
from normagpt.conditions.entities import Segment
from normagpt.conditions.words import stems_of

_NUMBER = r"\d+(?:[.,]\d+)?"
_UNIT = r"[^\W\d_][^\s,;.]{0,10}"  # «Ом», «В», «мм», «м/с»
# «2, 4 и 8 Ом соответственно»
_VALUES = re.compile(
    rf"(?P<list>{_NUMBER}(?:\s*(?:,|и|или)\s*{_NUMBER})+)\s*(?P<unit>{_UNIT})\s*,?\s*"
    r"соответственно\b",
    re.I,
)
# «660,380 и 220 В» (OCR's lost space too), each list with the words after it
_CONDITIONS = re.compile(rf"(?P<list>\d[\d.,\s]*?\s*и\s*{_NUMBER})\s*(?P<unit>{_UNIT})", re.I)


def respective_segments(text: str, dimension: str) -> list[Segment]:
    """The segments of a sentence giving values «соответственно»: each value with the
    number of each list after the word at its place and the words after that list («источника
    трехфазного тока»); [] when `text` gives none so, or its lists are not of one length."""
    found = _VALUES.search(text)
    if found is None:
        return []
    values = [c.values_find(f"{n} {found['unit']}") for n in _numbers(found["list"], 0)]
    if not values or not all(len(v) == 1 and v[0].dimension == dimension for v in values):
        return []
    after = text[found.end() :]
    lists = list(_CONDITIONS.finditer(after))
    conditions = [_numbers(m["list"], len(values)) for m in lists]
    if not lists or any(len(numbers) != len(values) for numbers in conditions):
        return []
    context = stems_of(text[: found.start()]) | stems_of(after[: lists[0].start()])
    out: list[Segment] = []
    for index, (match, numbers) in enumerate(zip(lists, conditions, strict=True)):
        end = lists[index + 1].start() if index + 1 < len(lists) else len(after)
        words = re.sub(r"\s+или\s*$", "", after[match.end() : end].strip())
        for value, number in zip(values, numbers, strict=True):
            own = stems_of(words) | {f"#{_float(number):g}"}
            said = " ".join(f"{number} {match['unit']} {words}".split())
            out.append(Segment((value[0],), frozenset(own), context, said))
    return out


def _numbers(written: str, count: int) -> list[str]:
    """The numbers of a list «2, 4 и 8»; a comma OCR left without its space («660,380 и
    220») parts two numbers when the list must hold `count` of them."""
    parts = [p for p in re.split(r",\s+|\s+(?:и|или)\s+|\s*и\s*(?=\d)", written) if p.strip()]
    if count and len(parts) < count:
        parts = [q for p in parts for q in p.split(",")]
    return [p.strip() for p in parts if p.strip()]


def _float(number: str) -> float:
    return float(number.replace(",", "."))
