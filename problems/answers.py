"""Checking a learner's answer against a problem's stored one, as the site judges it
(issue 30, item 3).

- Numbers are compared as numbers: a decimal comma or point, trailing zeros, a simple
  fraction (1/4 = 0,25), a minus sign in any of its typographic forms, spaces between
  digit groups.
- The stored answer may hold alternatives («или», `|`): any of them is right.
- A digit sequence (the numbers of the right statements, «134») is compared digit by
  digit; when the condition lets them come in any order («в любом порядке»), as a set.
  «В порядке возрастания» keeps the order: it is the answer's order the site asks for.
- Words are compared ignoring letter case, spaces and ё/е.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

_MINUS = str.maketrans(dict.fromkeys("−–—‒‐﹣－", "-"))
_SPACES = re.compile(r"[\s\u00a0\u202f]+")
_DIGIT_GROUP = re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))")  # «1 000»
_DECIMAL = re.compile(r"^[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)$")
_FRACTION = re.compile(r"^([+-]?\d+)/(\d+)$")
_SIGN_SPACE = re.compile(r"^([+-])\s+")  # «- 0,5»
_FRACTION_SPACED = re.compile(r"^[+-]?\s*\d+\s*/\s*\d+$")
_ALTERNATIVES = re.compile(r"\s*(?:\|| или )\s*", re.IGNORECASE)
_SEQUENCE_SEPARATORS = re.compile(r"[\s,;.]+")
_ANY_ORDER = re.compile(r"в\s+любом\s+порядке", re.IGNORECASE)


def any_order_asked(condition: str) -> bool:
    """Whether a condition lets the digits of a sequence answer come in any order."""
    return bool(_ANY_ORDER.search(condition))


def answer_correct(given: str, stored: str, *, any_order: bool = False) -> bool:
    """Whether `given` is one of the answers `stored` holds, as the site would judge it."""
    answer = _normal(given)
    if not answer:
        return False
    return any(
        _same(answer, _normal(alternative), any_order=any_order)
        for alternative in _ALTERNATIVES.split(stored)
        if _normal(alternative)
    )


def _same(given: str, right: str, *, any_order: bool) -> bool:
    if right.isdigit() and len(right) > 1 and (any_order or right.startswith("0")):
        digits = _SEQUENCE_SEPARATORS.sub("", given)
        if not digits.isdigit():
            return False
        return sorted(digits) == sorted(right) if any_order else digits == right
    expected = number(right)
    if expected is not None:
        return number(given) == expected
    return _SPACES.sub("", given).rstrip(".") == _SPACES.sub("", right).rstrip(".")


def number(text: str) -> Fraction | None:
    """The value of a written number («−0,250», «1/4», «1 000»); None for anything else."""
    compact = _SIGN_SPACE.sub(r"\1", _DIGIT_GROUP.sub("", text.strip()).translate(_MINUS))
    if _SPACES.search(compact) and not _FRACTION_SPACED.match(compact):
        return None  # two numbers, not one
    compact = _SPACES.sub("", compact)
    fraction = _FRACTION.match(compact)
    if fraction:
        denominator = int(fraction.group(2))
        return Fraction(int(fraction.group(1)), denominator) if denominator else None
    if _DECIMAL.match(compact):
        return Fraction(compact.replace(",", "."))
    return None


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text)).translate(_MINUS)
    return " ".join(text.lower().replace("ё", "е").split())
