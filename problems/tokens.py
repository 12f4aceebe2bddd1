"""A condition's text as the fuzzy search compares it: numbers, labels and words in
order, each marked as the data, the question or the answer's unit (`problems.question`).

The case is kept to tell a label from a word (`B` is a point, `в` a preposition; the site
writes some labels in Cyrillic capitals, `АВ`). OCR damage is read back where it can be:
look-alike letters in a number are digits (`l6` is 16, `о,25` is 0,25), numbers glued to
words are cut off them (`равенl20`, `на90`) and marked uncertain, a word broken by a
hyphenated line break is joined, `√` is read as the site reads it (`корень из`). Pure
functions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from problems.answers import vulgar_written
from problems.matching import ocr_fold
from problems.question import Part, lead_split, parts
from problems.words import AS_CYRILLIC, NOTATION

_LOOK = r"[\dоОзЗбlі]"  # a digit or a letter OCR makes of one
# before a decimal comma, a Latin O too (`O,5`): a point O is never followed by one
_LEAD = r"[\dоОзЗбlіoO]"
# A simple fraction (`1/2`: a number, the same as `0,5`), a number standing apart (a
# decimal one too: `0,5`, `о,25`), else a word.
_TOKEN = re.compile(
    r"(?<![^\W_/])\d{1,6}/[1-9]\d{0,5}(?![^\W_/])"
    rf"|(?<![^\W_])(?:{_LEAD}+[.,])?{_LOOK}*\d{_LOOK}*(?![^\W_])|[^\W_]+"
)
_FRACTION = re.compile(r"(\d+)/(\d+)")
# a minus of the number after it (`x = -3`, `(−0,5)`, `минус 2`), not an operator
# between two terms (`x-3`, `5 - 3`): glued to the number, after a space, a bracket or a
# sign of relation, or the word
_NEGATIVE = re.compile(r"(?:(?:^|[\s(\[=<>≤≥,;:])[-−–]|(?:^|\s)минус\s+)\Z", re.I)
_LINE_BREAK_HYPHEN = re.compile(r"(\w)[-\u00ad‐‑]\s*\n\s*(\w)")
_NUMBERISH = frozenset("0123456789oоOОзЗбlIiі|.,")
_AS_DIGIT = str.maketrans(
    {"o": "0", "о": "0", "O": "0", "О": "0", "з": "3", "З": "3", "б": "6", "l": "1", "I": "1",
     "i": "1", "і": "1", "|": "1"}
)  # fmt: skip
# Cyrillic capitals that look like Latin ones: a label the site (or a user) wrote in Cyrillic.
_AS_LATIN = str.maketrans("АВСЕНКМОРТХ", "ABCEHKMOPTX")
# A number inside a token: from a digit on, or from look-alikes that do not end a word.
_NUMBER_RUN = re.compile(
    r"\d[\dоОзЗбl]*(?![^\W_])|\d+|(?<![^\W\d_])[оОзЗбl]+\d[\dоОзЗбl]*(?![^\W_])"
)
_LABEL = re.compile(r"[A-Z]+[0-9]*(?:[A-Z]+[0-9]*)*")
_CYRILLIC = re.compile(r"[а-яё]")
_MIXED = re.compile(r"[0-9A-Z]")  # in a Cyrillic word: damage or a word glued to another


@dataclass(frozen=True)
class Token:
    kind: Literal["number", "label", "text"]
    key: str  # what is compared: digits, Latin capitals, a folded word
    shown: str  # as written
    # read off a word it was glued to (`равенl20`), or a word with digits or Latin capitals
    # in it (`3раза`, `Cравнен`): uncertain, never a difference of its own
    glued: bool = False
    part: Part = "data"  # of the data, the question or the answer's unit (`question.parts`)
    # read off a photo: a label's letters may be OCR's look-alikes of others (`D` read `O`)
    read: bool = False


@lru_cache(maxsize=4096)
def stored_tokens(text: str) -> tuple[Token, ...]:
    """`tokens` of a stored problem's text, kept: the same problems meet many queries."""
    return tuple(tokens(text))


def tokens(text: str, *, read: bool = False) -> list[Token]:
    """The text's tokens in order — numbers, labels and words —, each marked as data, the
    question or the answer's unit (`question.parts`); `read`: the text is OCR's, off a
    photo (its labels are marked so)."""
    text = vulgar_written(_LINE_BREAK_HYPHEN.sub(r"\1\2", text))  # «½» is 1/2
    text = unicodedata.normalize("NFKC", text).replace("ё", "е").replace("Ё", "Е")
    text = text.replace("√", " корень из ").replace("\u2044", "/")  # «1⁄2» is 1/2 too
    found: list[tuple[Token, bool]] = []
    for match in _TOKEN.finditer(text):
        opens = _sentence_start(text, match.start())
        written = match.group()
        words = lead_split(written) if opens or written[:1].isupper() else [written]
        pieces = [t for w in words for t in _classify(w, opens)]
        sign = _NEGATIVE.search(text, 0, match.start()) if pieces[:1] else None
        if sign and _between_terms(text, sign.start()):
            sign = None  # «7 -2», «f(x) -2»: a term before it, however spaced
        if sign and pieces[0].kind == "number":  # «x = -3» is not 3
            said = sign.group().strip()
            shown = f"{said} {pieces[0].shown}" if said.isalpha() else said + pieces[0].shown
            pieces[0] = replace(pieces[0], key=f"-{pieces[0].key}", shown=shown)
        found += [(token, opens and n == 0) for n, token in enumerate(pieces)]
    roles = parts([(token.shown, opens) for token, opens in found])
    return [
        replace(token, part=role, read=read and token.kind == "label")
        for (token, _), role in zip(found, roles, strict=True)
    ]


def _between_terms(text: str, at: int) -> bool:
    """Whether the minus found at `at` follows a term (a number, a letter, a bracket
    closed): an operator, however it is spaced (OCR's spacing is no guide). «минус» said
    in words is a sign."""
    before = text[:at].rstrip()
    said = text[at:].lstrip().lower().startswith("минус")
    return bool(before) and not said and (before[-1].isalnum() or before[-1] in ")]")


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?"


def _fraction_key(raw: str) -> str:
    """A fraction's key: the decimal it is when it ends (`1/2` → `0,5`, as the site writes
    it), else the fraction (`1/3`)."""
    value = Fraction(int(_FRACTION.fullmatch(raw).group(1)), int(raw.split("/")[1]))  # type: ignore[union-attr]
    denominator = value.denominator
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    return format(Decimal(value.numerator) / Decimal(value.denominator), "f").replace(".", ",")


def _classify(raw: str, first: bool, glued: bool = False) -> list[Token]:
    if _FRACTION.fullmatch(raw):
        return [Token("number", _fraction_key(raw), raw, glued)]
    if set(raw) <= _NUMBERISH and any(ch.isdigit() for ch in raw):  # `16`, `l6`, `о,25`
        return [Token("number", raw.translate(_AS_DIGIT).replace(".", ","), raw, glued)]
    latin = raw.translate(_AS_LATIN)
    if _LABEL.fullmatch(latin) and (raw.isascii() or len(raw) > 1 or not first):
        return [Token("label", latin, raw)]  # a capital Cyrillic `В` opening a sentence: a word
    lower = raw.lower()
    if _CYRILLIC.search(lower):
        word = lower.translate(AS_CYRILLIC)  # `уг0л`, `pавнa`
        if any(ch.isdigit() for ch in word) or _edge_number(raw) or _edge_number(raw[::-1]):
            # `на90`, `30градусов`, `равенl20`: words and numbers glued
            return [t for piece in _unglued(raw) for t in _classify(piece, False, glued=True)]
        return [_word(word, raw, glued or _MIXED.search(raw) is not None)]
    return [_word(lower, raw, glued)]


def _edge_number(raw: str) -> bool:
    """Whether a word starts with a number: not one look-alike digit (`0дна` is `Одна`)."""
    return raw[0].isdigit() and (raw[0] not in "0346" or raw[1].isdigit())


def _unglued(raw: str) -> list[str]:
    pieces, last = [], 0
    for match in _NUMBER_RUN.finditer(raw):
        pieces += [raw[last : match.start()], match.group()]
        last = match.end()
    return [piece for piece in [*pieces, raw[last:]] if piece]


def _word(word: str, raw: str, glued: bool) -> Token:
    return Token("text", ocr_fold(NOTATION.get(word, word)), raw, glued)  # `sin` is `синус`
