"""How the words of a query and of a problem compare: by their lemmas (pymorphy3,
`core.russian`), `угла` is `угол`, `дугу` is not; only words that name something count
(not prepositions, conjunctions, pronouns).

A query may be OCR-damaged: a word the dictionary does not know is damage, never another
word, and stands for the problem's word it resembles (or holds, glued to a neighbour); a
known word one typing error from the problem's, its first letter kept (`тугой` for
`тупой`), is a typo; a short preposition glued before a word (`заточку`) is that word.
Pure functions; the analyzer's answers are kept per word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import DamerauLevenshtein, Indel

from core.russian import morphology
from problems.matching import ocr_fold

_CYRILLIC = re.compile(r"[а-яё]")
_FUNCTION = frozenset({"PREP", "CONJ", "PRCL", "INTJ", "NPRO"})  # parts of speech not compared
TYPO_MIN = 3  # letters a word needs for a one-letter difference to be read as a typo
# Short words a lost space glues to the next (not `не`, `ко`: `нечетный`, `косинус`).
_LITTLE = ("в", "во", "за", "на", "и", "а", "с", "со", "к", "по", "о", "об", "у", "из", "от", "до")
ALIKE = 0.75  # a damaged word this similar to a problem's word (Indel) stands for it …
GLUED = 75  # … and one holding a part this similar to it (partial ratio), glued to another


def one_edit(word: str, target: str) -> bool:
    """Whether `word` is `target` or one edit (Damerau) from it."""
    return abs(len(word) - len(target)) <= 1 and DamerauLevenshtein.distance(word, target) <= 1


# Latin look-alikes and digits read as the Cyrillic letters they imitate, in a Cyrillic word.
AS_CYRILLIC = str.maketrans(
    {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "k": "к", "m": "м",
     "t": "т", "h": "н", "b": "в", "u": "и", "n": "п", "0": "о", "3": "з", "6": "б", "4": "ч"}
)  # fmt: skip


# Functions as written in formulas: the words they stand for.
NOTATION = {
    "sin": "синус", "cos": "косинус", "tg": "тангенс", "tan": "тангенс", "ctg": "котангенс",
    "cot": "котангенс",
}  # fmt: skip


def cyrillic(word: str) -> str:
    """Lower case, ё read as е; in a Cyrillic word look-alikes read as Cyrillic letters
    (`pавнa`, `уг0л`), a Latin one read as the word it notes (`sin`)."""
    lower = word.lower().replace("ё", "е")
    if not _CYRILLIC.search(lower):
        return NOTATION.get(lower, lower)
    return lower.translate(AS_CYRILLIC)


@lru_cache(maxsize=20_000)
def _parses(word: str) -> tuple[object, ...]:
    return tuple(morphology().parse(word))


@lru_cache(maxsize=20_000)
def known(word: str) -> bool:
    """Whether `word` (lower case, Cyrillic) is a word form of the dictionary."""
    return bool(_CYRILLIC.search(word)) and bool(morphology().word_is_known(word))


def lemmas(word: str) -> frozenset[str]:
    """The word's lemmas, of every reading (`стали`: стать, сталь), ё read as е."""
    return frozenset(p.normal_form.replace("ё", "е") for p in _parses(word))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Word:
    text: str  # lower case, look-alikes read as Cyrillic
    known: bool  # a word form of the dictionary, not cut off a number (`06разуют`)

    @classmethod
    def of(cls, written: str, *, glued: bool = False) -> Word:
        return _word(written, glued)

    @property
    def verb(self) -> bool:
        return self.known and any(p.tag.POS in ("VERB", "INFN") for p in _parses(self.text))  # type: ignore[attr-defined]

    @property
    def telling(self) -> bool:
        """Whether it names something: not a preposition, conjunction, particle, pronoun
        (`этого`, `его`, `которого`); a Cyrillic word (a Latin `r` is a name, as a label)."""
        return bool(_CYRILLIC.search(self.text)) and (not self.known or _telling(self.text))


@lru_cache(maxsize=20_000)
def _word(written: str, glued: bool) -> Word:
    text = cyrillic(written)
    return Word(text, known(text) and not glued)


def _telling(word: str) -> bool:
    first = _parses(word)[0]
    tag = first.tag  # type: ignore[attr-defined]
    return tag.POS not in _FUNCTION and "Apro" not in tag


@lru_cache(maxsize=50_000)
def alike(asked: Word, mine: Word) -> bool:
    """Whether the query's word stands for the problem's: one lemma of theirs is shared, or
    the query's is a typo or OCR damage of it (see the module's docstring), or it with a
    preposition glued before it (`заточку`: `за точку`)."""
    if asked.known and mine.known:
        if lemmas(asked.text) & lemmas(mine.text) or _typo(asked.text, mine.text):
            return True
        rests = [Word.of(asked.text[len(w) :]) for w in _LITTLE if asked.text.startswith(w)]
        return any(rest.known and len(rest.text) > 2 and alike(rest, mine) for rest in rests)
    a, b = ocr_fold(asked.text), ocr_fold(mine.text)
    if _glued(b, a) or _glued(a, b):  # glued to a neighbour, or cut
        return True
    return Indel.normalized_similarity(a, b) >= ALIKE


def _glued(part: str, whole: str) -> bool:
    return len(part) >= 3 and (whole.startswith(part) or whole.endswith(part))


def _typo(a: str, b: str) -> bool:
    """One deletion, insertion or substitution past the first letter, or a transposition."""
    if min(len(a), len(b)) < TYPO_MIN or DamerauLevenshtein.distance(a, b) != 1:
        return False
    return a[0] == b[0] or (len(a) == len(b) and a[:2] == b[1::-1])


def words_differ(asked: Word, mine: Word) -> bool:
    """Whether two words standing in one place of the data name two things: the query's
    known to the dictionary (a damaged word never differs), both telling, not `alike`."""
    if not (asked.known and asked.telling and mine.telling):
        return False
    return not alike(asked, mine)


def strangers(asked: Sequence[Word], mine: Sequence[Word]) -> list[int]:
    """The query's telling known words that no word of `mine` stands for (`alike`)."""
    known = _lemmas_of(mine)
    return [
        i
        for i, word in enumerate(asked)
        if word.known
        and word.telling
        and not lemmas(word.text) & known
        and not any(alike(word, other) for other in mine)
    ]


def missing(mine: Sequence[Word], asked: Sequence[Word]) -> list[int]:
    """The problem's telling words that no word of the query stands for, nor holds glued
    to another."""
    known = _lemmas_of(asked)
    damaged = [ocr_fold(w.text) for w in asked if not w.known]
    return [
        j
        for j, word in enumerate(mine)
        if word.telling
        and not (word.known and lemmas(word.text) & known)
        and not any(alike(other, word) for other in asked)
        and not _held(ocr_fold(word.text), damaged)
    ]


def _lemmas_of(words: Sequence[Word]) -> set[str]:
    return {lemma for word in words if word.known for lemma in lemmas(word.text)}


def same_kind(a: Word, b: Word) -> bool:
    """Whether two words are of one part of speech (an unknown word: of any)."""
    if not (a.known and b.known):
        return True
    return bool(_parses(a.text)[0].tag.POS == _parses(b.text)[0].tag.POS)  # type: ignore[attr-defined]


def phrases_differ(asked: Sequence[Word], mine: Sequence[Word], *, verbs: bool = True) -> bool:
    """Whether the query's phrase names another thing than the problem's. The two are
    aligned in order, word for `alike` word: a telling known word of the query left over,
    or a telling word of the problem's that no word of the query stands for (nor holds,
    damaged and glued to another: `острыйусгол`), is a difference. In order: `острую
    биссектрису, образованную биссектрисами` is not `острый угол, образованный
    биссектрисами`. `verbs=False`: verbs do not count (`дайте`, `выразите`)."""
    if not verbs:
        asked = [w for w in asked if not w.verb]
        mine = [w for w in mine if not w.verb]
    q_held, p_held = _aligned(asked, mine)
    if any(w.known and w.telling for i, w in enumerate(asked) if i not in q_held):
        return True
    damaged = [ocr_fold(w.text) for w in asked if not w.known]  # one may hold two words
    return any(
        m.telling and not _held(ocr_fold(m.text), damaged)
        for j, m in enumerate(mine)
        if j not in p_held
    )


def _aligned(asked: Sequence[Word], mine: Sequence[Word]) -> tuple[set[int], set[int]]:
    """The longest in-order pairing of `alike` words: the indexes paired on each side."""
    n, m = len(asked), len(mine)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if alike(asked[i], mine[j]):
                best[i][j] = best[i + 1][j + 1] + 1
            else:
                best[i][j] = max(best[i + 1][j], best[i][j + 1])
    i = j = 0
    q_held, p_held = set(), set()
    while i < n and j < m:
        if alike(asked[i], mine[j]) and best[i][j] == best[i + 1][j + 1] + 1:
            q_held.add(i)
            p_held.add(j)
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return q_held, p_held


def _held(word: str, damaged: list[str]) -> bool:
    return any(len(d) >= len(word) and fuzz.partial_ratio(word, d) >= GLUED for d in damaged)
