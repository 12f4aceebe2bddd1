"""What tells a fuzzy match apart from the problem asked.

Siblings of one prototype differ only in their values: the numbers, the point and segment
labels (A, B, AB, ABC…) and the words that change the task (синус/косинус, больше/меньше,
наибольшее/наименьшее…). A score cannot tell them apart — one number of five changed
still scores 0.9 —, so each match is aligned with the query token by token and the values
that stand in the same place but differ are listed.

Pure functions over raw text (the query as given, a problem's condition as stored): the
case is needed to tell a label from a word (`B` is a point, `в` a preposition; the site
writes some labels in Cyrillic capitals, `АВ`). Labels match whole: `B` is not in `AB`.
OCR damage in the query does not make differences: look-alike letters in a number are read
as digits (`l6` is 16), a value the damage dropped is a gap, not a difference.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from problems.matching import ocr_fold

Kind = Literal["number", "label", "word"]
Verdict = Literal["same", "same_prototype", "other"]

# Words that change the task, in groups of rivals: a word of a group standing where the
# problem has another of the same group is a difference. Each word: the beginnings of its
# forms (Latin ones whole: `sin`, `tg`).
RIVALS: tuple[dict[str, tuple[str, ...]], ...] = (
    {
        "синус": ("синус", "sin"),
        "косинус": ("косинус", "cos"),
        "тангенс": ("тангенс", "tg", "tan"),
        "котангенс": ("котангенс", "ctg", "cot"),
    },
    {"больше": ("больш",), "меньше": ("меньш",)},
    {"наибольшее": ("наибольш",), "наименьшее": ("наименьш",)},
    {"максимум": ("максим",), "минимум": ("миним",)},
    {"возрастает": ("возраст",), "убывает": ("убыва", "убыв")},
    {"вписанный": ("вписан",), "описанный": ("описан",), "центральный": ("центральн",)},
    {"острый": ("остр",), "тупой": ("туп",)},
    {"внутренний": ("внутрен",), "внешний": ("внешн",)},
    {"периметр": ("периметр",), "площадь": ("площад",)},
    {"радиус": ("радиус",), "диаметр": ("диаметр",)},
    {"высота": ("высот",), "медиана": ("медиан",), "биссектриса": ("биссектрис",)},
    {"четный": ("четн",), "нечетный": ("нечетн",)},
    {"положительный": ("положительн",), "отрицательный": ("отрицательн",)},
    {"параллельный": ("параллельн",), "перпендикулярный": ("перпендикулярн",)},
    {"сумма": ("сумм",), "разность": ("разност",), "произведение": ("произведен",)},
)
_RIVAL_OF = {
    start: (group, name)
    for group, words in enumerate(RIVALS)
    for name, starts in words.items()
    for start in starts
}
_LATIN_WHOLE = frozenset(s for s in _RIVAL_OF if s.isascii())

_LOOK = r"[\dоОзЗбlі]"  # a digit or a letter OCR makes of one
# A number standing apart (a decimal one too: `0,5`, `о,25`), else a word.
_TOKEN = re.compile(rf"(?<![^\W_])(?:{_LOOK}+[.,])?{_LOOK}*\d{_LOOK}*(?![^\W_])|[^\W_]+")
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
_LOOKALIKE_LETTERS = str.maketrans(
    {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "k": "к", "m": "м",
     "t": "т", "h": "н", "b": "в", "u": "и", "n": "п", "0": "о", "3": "з", "6": "б", "4": "ч"}
)  # fmt: skip
_EQUALS = frozenset({"равен", "равна", "равно", "равны"})


@dataclass(frozen=True)
class Token:
    kind: Kind | Literal["text"]
    key: str  # what is compared: digits, Latin capitals, a rival's name, a folded word
    shown: str  # as written
    glued: bool = False  # a number read off a word it was glued to (`равенl20`): uncertain


@dataclass(frozen=True)
class Difference:
    """A value of the query and the problem's value in its place."""

    kind: Kind
    query: str
    problem: str
    of: str = ""  # the label a number belongs to: `BC` of `BC = 7`


def tokens(text: str) -> list[Token]:
    """The text's tokens in order: numbers, labels, rival words, and the other words."""
    text = _LINE_BREAK_HYPHEN.sub(r"\1\2", text)
    text = unicodedata.normalize("NFKC", text).replace("ё", "е").replace("Ё", "Е")
    found: list[Token] = []
    for match in _TOKEN.finditer(text):
        found.extend(_classify(match.group(), _sentence_start(text, match.start())))
    return found


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?"


def _classify(raw: str, first: bool, glued: bool = False) -> list[Token]:
    if set(raw) <= _NUMBERISH and any(ch.isdigit() for ch in raw):  # `16`, `l6`, `о,25`
        return [Token("number", raw.translate(_AS_DIGIT).replace(".", ","), raw, glued)]
    latin = raw.translate(_AS_LATIN)
    if _LABEL.fullmatch(latin) and (raw.isascii() or len(raw) > 1 or not first):
        return [Token("label", latin, raw)]  # a capital Cyrillic `В` opening a sentence: a word
    lower = raw.lower()
    if _CYRILLIC.search(lower):
        word = lower.translate(_LOOKALIKE_LETTERS)  # `уг0л`, `pавнa`
        if any(ch.isdigit() for ch in word) or _edge_number(raw) or _edge_number(raw[::-1]):
            # `на90`, `30градусов`, `равенl20`: words and numbers glued
            return [t for part in _unglued(raw) for t in _classify(part, False, glued=True)]
        return [_word(word, raw)]
    return [_word(lower, raw)]


def _edge_number(raw: str) -> bool:
    """Whether a word starts with a number: not one look-alike digit (`0дна` is `Одна`)."""
    return raw[0].isdigit() and (raw[0] not in "0346" or raw[1].isdigit())


def _unglued(raw: str) -> list[str]:
    parts, last = [], 0
    for match in _NUMBER_RUN.finditer(raw):
        parts += [raw[last : match.start()], match.group()]
        last = match.end()
    return [part for part in [*parts, raw[last:]] if part]


def _word(word: str, raw: str) -> Token:
    if word.isascii():
        rival = _RIVAL_OF.get(word) if word in _LATIN_WHOLE else None
    else:
        rival = next((_RIVAL_OF[s] for s in _starts(word) if s in _RIVAL_OF), None)
    if rival is not None:
        return Token("word", f"{rival[0]}:{rival[1]}", raw)
    return Token("text", ocr_fold(word), raw)


def _starts(word: str) -> list[str]:
    return [word[:n] for n in range(len(word), 2, -1)]


@dataclass(frozen=True)
class Comparison:
    differences: list[Difference]
    coverage: float  # the share of the query's tokens found in place in the problem


def compare(asked: list[Token], problem: list[Token]) -> Comparison:
    """The query's values that stand where the problem has others (in query order), and
    how much of the query the problem holds in place."""
    asked = _unmerged(asked, {t.key for t in problem if t.kind == "label"})
    q_keys = [(t.kind, t.key) for t in asked]
    p_keys = [(t.kind, t.key) for t in problem]
    matcher = SequenceMatcher(None, q_keys, p_keys, autojunk=False)
    held = 0
    found: list[Difference] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            held += i2 - i1
        elif op == "replace":
            pairs = _values_paired(asked[i1:i2], problem, j1, j2)
            held += len(pairs)
            found += [_difference(q, problem, j) for q, j in pairs if _differ(q, problem[j])]
    return Comparison(found, held / len(asked) if asked else 0.0)


def _values_paired(
    asked: list[Token], problem: list[Token], j1: int, j2: int
) -> list[tuple[Token, int]]:
    """The values of a stretch the two texts do not share, paired where they stand in the
    same place: runs of equal length and kind (a value dropped on one side pairs nothing)."""
    q_values = [t for t in asked if t.kind != "text"]
    p_index = [j for j in range(j1, j2) if problem[j].kind != "text"]
    kinds = SequenceMatcher(
        None, [t.kind for t in q_values], [problem[j].kind for j in p_index], autojunk=False
    )
    pairs = []
    for op, a1, a2, b1, b2 in kinds.get_opcodes():
        if op in ("equal", "replace") and a2 - a1 == b2 - b1:
            for q, j in zip(q_values[a1:a2], p_index[b1:b2], strict=True):
                if q.kind == problem[j].kind and _rivals(q, problem[j]):
                    pairs.append((q, j))
    return pairs


def _unmerged(asked: list[Token], labels: set[str]) -> list[Token]:
    """The query's tokens with a label the problem lacks split into two or three of its
    labels when they make it: a space lost between them (`ABCAC` is `ABC AC`)."""
    out: list[Token] = []
    for token in asked:
        parts = _split_label(token.key, labels, 3) if token.kind == "label" else None
        if parts and token.key not in labels:
            out += [Token("label", part, part) for part in parts]
        else:
            out.append(token)
    return out


def _split_label(label: str, labels: set[str], most: int) -> list[str] | None:
    if label in labels:
        return [label]
    if most < 2:
        return None
    for cut in range(len(label) - 1, 0, -1):
        rest = _split_label(label[cut:], labels, most - 1) if label[:cut] in labels else None
        if rest:
            return [label[:cut], *rest]
    return None


def _differ(asked: Token, mine: Token) -> bool:
    """Whether two values in one place differ. A polygon's name of four letters or more
    with one of them lost or two swapped (`ACD`, `ABDC` for `ABCD`) is damage, not another
    figure."""
    if asked.key == mine.key:
        return False
    short, long = sorted((asked.key, mine.key), key=len)
    if asked.glued and (long.startswith(short) or long.endswith(short)):
        return False  # `равенl20`, `равн012`: where the word ends is a guess
    if asked.kind != "label" or len(mine.key) < 4:
        return True
    a, b = asked.key, mine.key
    dropped = len(a) == len(b) - 1 and any(b[:i] + b[i + 1 :] == a for i in range(len(b)))
    swapped = (
        len(a) == len(b)
        and sorted(a) == sorted(b)
        and sum(x != y for x, y in zip(a, b, strict=True)) == 2
    )
    return not (dropped or swapped)


def _rivals(a: Token, b: Token) -> bool:
    """Numbers and labels always compare; words only within their group."""
    return a.kind != "word" or a.key.split(":")[0] == b.key.split(":")[0]


def _difference(asked: Token, problem: list[Token], at: int) -> Difference:
    mine = problem[at]
    if mine.kind == "label":  # in Latin capitals: the site writes some in Cyrillic ones
        return Difference("label", asked.key, mine.key)
    if mine.kind == "number":
        return Difference("number", asked.shown, mine.shown, _owner(problem, at))
    return Difference("word", asked.shown, mine.shown)


def _owner(problem: list[Token], at: int) -> str:
    """The label a number is the value of: `BC = 7`, `угол A равен 30`."""
    if problem[at].kind != "number":
        return ""
    back = at - 1
    if back >= 0 and problem[back].kind == "text" and problem[back].key in _FOLDED_EQUALS:
        back -= 1
    return problem[back].key if back >= 0 and problem[back].kind == "label" else ""


_FOLDED_EQUALS = frozenset(ocr_fold(word) for word in _EQUALS)


def verdict_of(comparison: Comparison, score: float, *, close: float, held: float) -> Verdict:
    """`same`: the problem holds the query's text in place (a score of `close` or more and
    `held` of the query's tokens in place) and its values; `same_prototype`: its text
    (either of the two) with other values; `other`: another text."""
    if comparison.differences:
        return "same_prototype" if score >= close or comparison.coverage >= held else "other"
    return "same" if score >= close and comparison.coverage >= held else "other"
