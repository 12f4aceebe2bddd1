"""Repairing an OCR-damaged query for a site whose search matches words.

The site finds a problem only when it holds most of the words of the phrase asked
(../shared/fixtures/sdamgia/SEARCH.md): one damaged word in three and nothing comes back.
So the words are repaired first, and phrases are made only of words that look intact:

- line breaks inside words (`треуго-⏎льнике`) are undone;
- Latin look-alikes and digits inside Cyrillic words are read as the letters they imitate
  (`pавнa` → `равна`, `уг0л` → `угол`, `6ольший` → `больший`), digit look-alikes inside
  numbers as digits (`ll0` → `110`);
- merged words are split where both parts are words (`изоставшихся` → `из оставшихся`,
  `уголc` → `угол c`, `на90` → `на 90`), broken ones joined (`треугол ьнике`);
- a word one typing error away from exactly one known word becomes that word.

"Known" is the Russian dictionary (pymorphy3's OpenCorpora word forms) or a word of the
site's stored problems. A word still unknown after all that is left out of the phrases.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from core.russian import morphology
from problems.matching import STOP_WORDS

Known = Callable[[str], bool]

_CYRILLIC = re.compile(r"[а-яё]")
_LATIN = re.compile(r"[a-z]")
_LINE_BREAK_HYPHEN = re.compile(r"(\w)[-\u00ad‐‑]\s*\n\s*(\w)")
_TOKEN = re.compile(r"[0-9a-zа-яё]+")
_RUNS = re.compile(r"[а-яё]+|[a-z]+|[0-9]+")
# Look-alikes read as Cyrillic letters inside a Cyrillic word.
_AS_CYRILLIC = str.maketrans(
    {
        "a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "k": "к",
        "m": "м", "t": "т", "h": "н", "b": "в", "u": "и", "n": "п",
        "0": "о", "3": "з", "6": "б", "4": "ч",
    }
)  # fmt: skip
# Look-alikes read as digits inside a number.
_AS_DIGIT = str.maketrans({"o": "0", "о": "0", "з": "3", "б": "6", "l": "1", "i": "1", "|": "1"})
_NUMBERISH = frozenset("0123456789oозбli|")
ALPHABET = "абвгдежзийклмнопрстуфхцчшщъыьэюя"
# Words nearly every problem holds: they do not tell problems apart.
COMMON = STOP_WORDS | frozenset(
    "найдите ответ дайте градусах равен равна равно равны известно ответе запишите "
    "которого которой котором чему".split()
)
# How formulas read aloud (our text of a formula image): the site's search does not see them.
FORMULA = frozenset(
    "дробь дроби числитель знаменатель конец корень корня степени основанию".split()
)


@dataclass(frozen=True)
class Word:
    text: str
    intact: bool  # in the dictionary, a stored problem's word, or a number

    @property
    def number(self) -> bool:
        return self.text.isdigit()


def dictionary_knows(word: str) -> bool:
    """Whether `word` (lower case) is a Russian word form of the dictionary."""
    return bool(_CYRILLIC.search(word)) and morphology().word_is_known(word)


def words_repair(text: str, *, known: Known | None = None, edits: bool = True) -> list[Word]:
    """The query's words, repaired; `known` adds words (those of the stored problems).
    `edits=False` skips typo correction (the costly part: ~1,000 lookups a word)."""

    def knows(word: str) -> bool:
        return dictionary_knows(word) or (known is not None and known(word))

    text = _LINE_BREAK_HYPHEN.sub(r"\1\2", text)
    text = unicodedata.normalize("NFKC", text).lower().replace("ё", "е").replace("\u00ad", "")
    words: list[Word] = []
    for token in _TOKEN.findall(text):
        words.extend(_token_repair(token, knows, edits))
    return _join_broken(words, knows)


def _token_repair(token: str, knows: Known, edits: bool = True) -> list[Word]:
    if token.isdigit():
        return [Word(token, True)]
    if set(token) <= _NUMBERISH and any(ch.isdigit() for ch in token):
        return [Word(token.translate(_AS_DIGIT), True)]
    if not _CYRILLIC.search(token):  # a Latin label (ABC) or a Latin word: as written
        return [Word(token, True)]
    fixed = token.translate(_AS_CYRILLIC)
    cyrillic = len(_CYRILLIC.findall(token))
    if 2 * cyrillic >= len(token) and knows(fixed):  # mostly Cyrillic: `иBE` is `и BE`
        return [Word(fixed, True)]
    runs = _RUNS.findall(token)
    glued = _labels_glued(token, runs[-1], knows)
    if glued:
        return [glued, *_token_repair(runs[-1], knows, edits)]
    if len(runs) > 1:  # script or digit boundaries: `уголc`, `на90`, `треугольникеabc`
        return [word for run in runs for word in _token_repair(run, knows, edits)]
    split = _split(fixed, knows)
    if split:
        return [Word(part, True) for part in split]
    corrected = _one_edit(fixed, knows) if edits else None
    return [Word(corrected, True)] if corrected else [Word(fixed, False)]


def _labels_glued(token: str, last: str, knows: Known) -> Word | None:
    """The word before labels or a number glued on, when it has look-alikes of its own
    (`тpеyгольникеabc` is `треугольнике abc`): cut at every script boundary instead, it
    would be read as `т р е у гольнике`."""
    word = token[: -len(last)]
    if last == token or not (_LATIN.fullmatch(last[0]) or last.isdigit()):
        return None
    if not _CYRILLIC.search(word[-1:]):
        return None
    fixed = word.translate(_AS_CYRILLIC)
    return Word(fixed, True) if word != fixed and knows(fixed) else None


def _split(word: str, knows: Known) -> tuple[str, str] | None:
    """Two known words that make `word`; of several splits, the one with the longest word
    (`вточке` is `в точке`, not `вт очке`). A one-letter part must be a preposition."""
    splits = []
    for cut in range(1, len(word)):
        left, right = word[:cut], word[cut:]
        short = min((left, right), key=len)
        if len(short) == 1 and short not in "вксуоия":
            continue
        if knows(left) and knows(right):
            splits.append((len(left) ** 2 + len(right) ** 2, left, right))
    return max(splits)[1:] if splits else None


def _one_edit(word: str, knows: Known) -> str | None:
    """The one known word a single deletion, insertion, substitution or transposition away
    (words of 6+ letters: shorter ones have too many neighbours)."""
    if len(word) < 6:
        return None
    found = {candidate for candidate in _edits(word) if knows(candidate)}
    return found.pop() if len(found) == 1 else None


def _edits(word: str) -> Iterable[str]:
    for i in range(1, len(word)):
        yield word[:i] + word[i + 1 :]
        yield word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
        for letter in ALPHABET:
            yield word[:i] + letter + word[i:]
            yield word[:i] + letter + word[i + 1 :]


def _join_broken(words: list[Word], knows: Known) -> list[Word]:
    """Adjacent fragments that are not words but make one (`треугол ьнике`)."""
    out: list[Word] = []
    for word in words:
        if out and not (out[-1].intact and word.intact) and not word.number:
            joined = out[-1].text + word.text
            if _CYRILLIC.search(joined) and knows(joined):
                out[-1] = Word(joined, True)
                continue
        out.append(word)
    return out


def phrase_whole(words: list[Word], *, size: int = 12) -> str:
    """One phrase of the query's intact words, common ones too (up to `size`, telling ones
    first): the problem holding them all is the first the site shows."""
    pool = list(dict.fromkeys(w.text for w in words if w.intact and _searchable(w)))
    pool.sort(key=lambda w: (w in COMMON, -_weight(w)))
    return " ".join(pool[:size])


def phrase_prose(words: list[Word], *, size: int = 8) -> str:
    """One phrase of the query's intact Russian words (up to `size`, in text order, common
    ones too, short function words left out): no number, label or formula's word. A site
    whose search does not see a formula's text (labels and numbers are mostly formulas on
    the bank's pages) still finds the problem by its prose, where phrases holding labels
    or numbers find nothing. Empty for fewer than two such words."""
    pool = [
        w.text
        for w in words
        if w.intact
        and _CYRILLIC.match(w.text)
        and _searchable(w)
        and (len(w.text) >= 4 or w.text not in STOP_WORDS)
    ]
    pool = list(dict.fromkeys(pool))[:size]
    return " ".join(pool) if len(pool) >= 2 else ""


def phrases_build(
    words: list[Word], *, count: int, size: int = 6, skip: Iterable[str] = ()
) -> list[str]:
    """Up to `count` phrases of `size` intact, telling words (numbers, long words first),
    in text order, none sharing a word with another or with `skip` (phrases already sent)."""
    used = {w for phrase in skip for w in phrase.split()}
    pool = [w.text for w in words if w.intact and _telling(w)]
    pool = [w for i, w in enumerate(pool) if w not in pool[:i] and w not in used]
    if not pool:
        return []
    per = max(2, min(size, len(pool) // max(count, 1) or size))
    chosen: list[list[str]] = []
    for start in range(0, len(pool), per):
        window = pool[start : start + per]
        if len(window) >= 2 or not chosen:
            chosen.append(window)
    chosen.sort(key=lambda window: -sum(_weight(w) for w in window))
    return [" ".join(window) for window in chosen[:count]]


@dataclass(frozen=True)
class Anchor:
    """A word that pins a query to one problem, OCR-folded (`matching.ocr_fold`) as the
    candidates are; `exact`: a number or a label must be there as written, a word may
    end otherwise (a typo can turn a word into another of its forms)."""

    text: str
    exact: bool


def anchors(words: list[Word]) -> list[Anchor]:
    """The words that pin a query to one problem, in order: numbers, Latin labels of two
    letters or more (`AB`, `ABC`), long telling Russian words. A problem holding them all
    in this order is not a sibling with other numbers, another label or another function.

    A one-digit 0, 3, 4 or 6 is left out: it is as often a damaged letter (`о`, `з`, `ч`,
    `б`) standing alone as a number.
    """
    from problems.matching import ocr_fold

    found = []
    for w in words:
        if not w.intact:
            continue
        if (w.number and not (len(w.text) == 1 and w.text in "0346")) or (
            _LATIN.match(w.text) and len(w.text) >= 2
        ):
            found.append(Anchor(ocr_fold(w.text), exact=True))
        elif len(w.text) >= 5 and w.text not in COMMON and w.text not in FORMULA:
            found.append(Anchor(ocr_fold(w.text), exact=False))
    return found


def _same_stem(a: str, b: str) -> bool:
    """One word in two forms: they differ only in the last two letters (`биссектрис` and
    `биссектрисы`), never at the start (`вписанной` is not `описанной`)."""
    need = max(5, max(len(a), len(b)) - 2)
    return len(a) >= need and len(b) >= need and a[:need] == b[:need]


def anchors_held(pinned: list[Anchor], folded: str) -> bool:
    """Whether the folded text holds every anchor, in order (a word: in another form too)."""
    tokens = iter(folded.split())
    for anchor in pinned:
        for token in tokens:
            if token == anchor.text or (not anchor.exact and _same_stem(token, anchor.text)):
                break
        else:
            return False
    return True


def _searchable(word: Word) -> bool:
    """A word the site's search compares (two characters or more, not a formula's)."""
    return len(word.text) >= 2 and word.text not in FORMULA


def _telling(word: Word) -> bool:
    return (
        _searchable(word)
        and (word.number or word.text not in COMMON)
        and (word.number or len(word.text) >= 3 or bool(_LATIN.match(word.text)))
    )


def _weight(word: str) -> float:
    if word.isdigit():
        return 2.0
    return 0.3 if _LATIN.match(word) else min(len(word), 10) / 5
