"""Checking a learner's answer against a problem's stored one, as the site judges it
(issue 30, item 3).

- Numbers are compared as numbers: a decimal comma or point, trailing zeros, a simple
  fraction (1/4 = 0,25), a minus sign in any of its typographic forms, spaces between
  digit groups.
- The stored answer may hold alternatives («или», `|`): any of them is right.
- A digit sequence (the numbers of the right statements, «134») is compared digit by
  digit, separators dropped («1, 3, 4», «1 3 4», «1;3;4»), when the condition asks for one
  (`answer_form`: «запишите номера…», «цифры, под которыми…», «установите соответствие…»,
  or any wording of "any order") or the answer starts with 0. When the condition lets the
  digits come in any order («в любом порядке», «в произвольном порядке», «порядок цифр
  (в ответе) не важен», «порядок … не имеет значения», «независимо от порядка»), as a
  multiset. «В порядке возрастания» keeps the order: it is the answer's order the site
  asks for. Otherwise a string of digits is a number: «1, 3, 4» is not 134.
- Words are compared ignoring letter case, spaces and ё/е; a short name of look-alike
  letters (a point, a segment: «АВ») in either script («AB»).
- What learners add is read past: «Ответ: 12»; a unit after the number when it is the one
  the condition asks the answer in («12 см» for «Ответ дайте в сантиметрах», «45°»,
  «45 градусов»; «12 м» there is wrong); numbers of a list each as a number («2,0; 5» is
  «2; 5»); a mixed number («2 1/2»).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

_MINUS = str.maketrans(dict.fromkeys("−–—‒‐﹣－", "-"))
_SPACES = re.compile(r"[\s\u00a0\u202f]+")
_DIGIT_GROUP = re.compile(r"(?<=\d)[ \u00a0\u202f](?=\d{3}(?!\d))")  # «1 000»
_DECIMAL = re.compile(r"^[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)$")
_FRACTION = re.compile(r"^([+-]?\d+)/(\d+)$")
_SIGN_SPACE = re.compile(r"^([+-])\s+")  # «- 0,5»
_FRACTION_SPACED = re.compile(r"^[+-]?\s*\d+\s*/\s*\d+$")
_MIXED = re.compile(r"^([+-]?)(\d+)\s+(\d+)\s*/\s*(\d+)$")
_ALTERNATIVES = re.compile(r"\s*(?:\|| или )\s*", re.IGNORECASE)
_SEQUENCE_SEPARATORS = re.compile(r"[\s,;.]+(?:и\s+)?")  # «1, 3», «1 3», «1 и 3»
# The wordings of "any order" the bank's conditions use. «В порядке возрастания» is not
# one: it asks for that order.
_ANY_ORDER = re.compile(
    r"в\s+(?:любом|произвольном)\s+порядке"
    r"|\bпорядок\b[^.!?;]{0,60}?(?:не\s+важен|неважен|не\s+имеет\s+значени|значени[яе]\s+не\s+имеет)"
    r"|независимо\s+от\s+(?:их\s+)?порядка",
    re.IGNORECASE,
)
# The wordings that ask for a string of digits: the numbers of chosen statements, the
# digits under letters of a matching, a sequence.
_DIGITS_ASKED = re.compile(
    r"(?:запиш|укаж|выпиш|напиш)\w*\s+(?:в\s+(?:ответ|поле\s+ответа)\w*\s+)?(?:их\s+)?"
    r"(?:номера|цифры|последовательность\s+цифр)"
    r"|цифры,?\s+под\s+которыми"
    r"|номера\s+(?:выбранных|верных|правильных|неверных|ответов)"
    r"|последовательность\s+цифр"
    r"|выбранные\s+цифры"
    r"|установите\s+соответствие"
    r"|соответствующ\w+\s+буквам",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnswerForm:
    """How a condition asks for its short answer."""

    digits: bool = False  # a string of digits (statement numbers, a matching), not a number
    any_order: bool = False  # those digits in any order


def answer_form(condition: str) -> AnswerForm:
    """What `condition` says of its answer's form: a digit string, and in any order."""
    any_order = bool(_ANY_ORDER.search(condition))
    return AnswerForm(
        digits=any_order or bool(_DIGITS_ASKED.search(condition)), any_order=any_order
    )


def answer_correct(given: str, stored: str, *, condition: str = "") -> bool:
    """Whether `given` is one of the answers `stored` holds, as the site would judge it
    (`condition`: the problem's, which may ask for a digit string or any order)."""
    answer = _normal(given)
    if not answer:
        return False
    form = answer_form(condition)
    return any(
        _same(answer, _normal(alternative), form=form, condition=condition)
        for alternative in _ALTERNATIVES.split(stored)
        if _normal(alternative)
    )


def _same(given: str, right: str, *, form: AnswerForm, condition: str = "") -> bool:
    given = _ANSWER_SAID.sub("", given)  # «Ответ: 12»
    if right.isdigit() and len(right) > 1 and (form.digits or right.startswith("0")):
        digits = _SEQUENCE_SEPARATORS.sub("", given)
        if not digits.isdigit():
            return False
        return sorted(digits) == sorted(right) if form.any_order else digits == right
    expected = number(right)
    if expected is not None:  # a full stop ending the answer ends a sentence: «0,5.»
        return _in_unit_asked(given.removesuffix("."), condition) == expected
    rights, givens = right.split(";"), given.split(";")  # «2; 5»: numbers each
    values = [number(r.strip()) for r in rights]
    if len(rights) > 1 and len(givens) == len(rights) and None not in values:
        return [number(g.strip()) for g in givens] == values
    return _label(_compact(given)) == _label(_compact(right))


def _compact(text: str) -> str:
    return _SPACES.sub("", text).rstrip(".")


# «Ответ: 12», «Ответ. 12», «Ответ — 12», «Ответ 12»; never the minus of «Ответ -5»
_ANSWER_SAID = re.compile(r"^ответ\s*(?:[:：.]|[-—–](?=\s))?\s*", re.IGNORECASE)
# a number and a unit after it: «12 см», «45°», «45 градусов»
_WITH_UNIT = re.compile(r"^(?P<number>.*?\d)\s*(?P<unit>°|%|[a-zа-я]+\.?(?:[23²³])?)$")
# the unit the condition asks the answer in: «Ответ дайте в сантиметрах», «(в градусах)»
_ASKED_IN = re.compile(
    r"(?:ответ\w*[^.?!]*?|\()\bв\s+(?P<unit>[а-я]+)(?P<per>\s+(?:в|на)\s+[а-я]+)?", re.IGNORECASE
)
# a unit's abbreviation → the stem its words start with
_UNIT_STEMS = {
    "°": "градус", "%": "процент", "мм": "миллиметр", "см": "сантиметр", "дм": "дециметр",
    "м": "метр", "км": "километр", "г": "грамм", "кг": "килограмм", "т": "тонн",
    "с": "секунд", "сек": "секунд", "мин": "минут", "ч": "час", "л": "литр", "мл": "миллилитр",
    "р": "рубл", "руб": "рубл", "коп": "копе",
}  # fmt: skip
# the stems a unit's word starts with, longest first («сантиметр» before «метр»)
_STEMS = sorted(set(_UNIT_STEMS.values()), key=len, reverse=True)


def _unit_stem(word: str) -> str | None:
    """The stem of a unit's abbreviation or word («см», «сантиметров», «сантиметрах» →
    «сантиметр»); None for no unit («часть», «тоннель»: the stem and nothing a unit ends
    in after it)."""
    word = word.lower().rstrip(".").rstrip("23²³")
    if word in _UNIT_STEMS:
        return _UNIT_STEMS[word]
    for stem in _STEMS:
        if word.startswith(stem) and len(word) - len(stem) <= 3 and word[len(stem) :].isalpha():
            ending = word[len(stem) :]
            if ending in _UNIT_ENDINGS:
                return stem
    return None


# what a unit's word ends in after its stem («метр|ах», «рубл|ей», «час|ов», «градус|а»)
_UNIT_ENDINGS = frozenset(
    ["", "а", "ы", "у", "е", "ом", "ах", "ов", "ей", "я", "ям", "ях", "и", "ой", "ам", "ами"]
)


def _in_unit_asked(given: str, condition: str) -> Fraction | None:
    """The number a learner wrote, with the unit the condition asks the answer in after it
    or not («12 см» for «Ответ дайте в сантиметрах»); None for another unit, a compound
    unit («в метрах в секунду»), or no number."""
    value = number(given)
    if value is not None:
        return value
    said = _WITH_UNIT.match(given)
    if said is None:
        return None
    asked = _ASKED_IN.search(condition.replace("ё", "е"))
    if asked is None or asked.group("per"):
        return None
    stem = _unit_stem(said.group("unit"))
    if stem is None or stem != _unit_stem(asked.group("unit")):
        return None
    return number(said.group("number"))


# the look-alike letters of a point's or a figure's name, read as Latin («АВ» is «AB»)
_LATIN_LOOK = str.maketrans("авекмнорстух", "abekmhopctyx")
_LABEL_LIKE = re.compile(r"[a-z0-9авекмнорстух]{1,6}")


def _label(text: str) -> str:
    """A short answer of look-alike letters and digits (a point, a segment: «АВ», «ab»)
    in one script; any other text as it is."""
    return text.translate(_LATIN_LOOK) if _LABEL_LIKE.fullmatch(text) else text


def number(text: str) -> Fraction | None:
    """The value of a written number («−0,250», «1/4», «1 000»); None for anything else."""
    compact = _SIGN_SPACE.sub(r"\1", _DIGIT_GROUP.sub("", text.strip()).translate(_MINUS))
    mixed = _MIXED.match(compact)  # «2 1/2», «-1 3/4»
    if mixed and int(mixed.group(4)):
        whole = int(mixed.group(2)) + Fraction(int(mixed.group(3)), int(mixed.group(4)))
        return -whole if mixed.group(1) == "-" else whole
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


# a vulgar fraction, after a whole number or alone: «½», «1½» (NFKC would write «11⁄2»)
_VULGAR = re.compile(r"(?:(\d+)\s?)?([\u00bc-\u00be\u2150-\u215e])")


def _vulgar(match: re.Match[str]) -> str:
    value = int(match.group(1) or 0) + Fraction(
        unicodedata.numeric(match.group(2))
    ).limit_denominator(100)
    return f"{value.numerator}/{value.denominator}"


def vulgar_written(text: str) -> str:
    """`text` with each vulgar fraction written with a slash: «½» → «1/2», «1½» → «3/2»."""
    return _VULGAR.sub(_vulgar, text)


def _normal(text: str) -> str:
    text = vulgar_written(str(text))
    # NFKC; a fraction typed with the fraction slash «1⁄2» is 1/2
    text = unicodedata.normalize("NFKC", text).translate(_MINUS).replace("\u2044", "/")
    return " ".join(text.lower().replace("ё", "е").split())
