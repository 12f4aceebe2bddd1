"""Fuzzy matching of a (possibly OCR-damaged) condition text against problems.

Pure functions over normalized text. Normalization: NFKC, lower case, ё→е, soft hyphens
and odd spaces removed, Unicode-aware punctuation folding, and an OCR fold that maps look-
alike characters onto one form (Latin a/е/о… → Cyrillic, о→0, з→3, б→6, l/i→1) on both
sides, so a confusion in the query cancels out. The score in 0..1 combines a character
alignment that ignores spaces (dropped or merged spaces, line breaks), a token-set ratio
(a missing sentence) — both without the exam phrasing a hundred problems share («Найдите»,
«Ответ дайте в градусах»), so a query's telling sentence outweighs it —, keyword overlap,
and agreement of the numbers, which is what tells apart sibling problems of one prototype
that differ only in their numbers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel

_SPACES = dict.fromkeys(map(ord, "\u00a0\u202f\u2060\u2009\u2007\u200b\u3000\t\r\n\f\v"), " ")
_DROP = dict.fromkeys(map(ord, "\u00ad\u200c\u200d\ufeff"), None)
# Latin look-alikes → Cyrillic, then letters OCR confuses with digits → the digit.
_OCR_FOLD = str.maketrans(
    {
        "a": "а", "e": "е", "o": "0", "p": "р", "c": "с", "x": "х", "y": "у", "k": "к",
        "m": "м", "t": "т", "h": "н", "b": "в", "u": "и", "n": "п",
        "о": "0", "з": "3", "б": "6", "l": "1", "i": "1", "і": "1", "|": "1", "ч": "4",
    }
)  # fmt: skip
STOP_WORDS = frozenset(
    (
        "и в во на по из к ко с со у о об от до за для не ни что как а но или же ли бы то "
        "это его ее их он она они при под над про без между если так также чем где когда "
        "который которая которые найдите ответ дайте"
    ).split()
)


def normalize(text: str) -> str:
    """Lower-cased, NFKC, ё→е, punctuation folded to spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_DROP).translate(_SPACES).lower()
    text = text.replace("ё", "е")
    chars = [ch if ch.isalnum() else " " for ch in text]
    return " ".join("".join(chars).split())


def ocr_fold(normalized: str) -> str:
    """Fold look-alike characters of already normalized text onto one form."""
    return normalized.translate(_OCR_FOLD)


def matching_form(text: str) -> str:
    """The form stored in `Problem.search_text`: normalized, not yet OCR-folded."""
    return normalize(text)


def keyword_terms(text: str) -> list[str]:
    """The words of a keyword query as `Problem.search_text` holds them, each of five
    letters or more cut to a stem so that another ending still matches («ромба» finds
    «ромб»); stop words are left out unless they are all there is."""
    words = normalize(text).split()
    telling = [word for word in words if word not in STOP_WORDS] or words
    return list(dict.fromkeys(w[: max(4, len(w) - 2)] if len(w) >= 5 else w for w in telling))


_FOLDED_STOP_WORDS = frozenset(word.translate(_OCR_FOLD) for word in STOP_WORDS)


def keywords(folded: str) -> set[str]:
    """Distinctive words (4+ characters, not stop words) of a matching form."""
    return {w for w in folded.split() if len(w) >= 4 and w not in _FOLDED_STOP_WORDS}


_NUMBERISH = re.compile(r"[0-9озбliі]+")
_DIGIT_FOLD = str.maketrans({"о": "0", "з": "3", "б": "6", "l": "1", "i": "1", "і": "1"})


def numbers(normalized: str) -> tuple[str, ...]:
    """The numbers of a normalized text, in order, with look-alike letters read as digits.

    A run of digits and digit-like letters counts when it holds a digit and is not glued
    to letters on both sides (`уг0л` is a damaged word; `равна4` a number after a lost
    space), so `9о` in a damaged query and `90` in the problem are the same number.
    """
    found = []
    for match in _NUMBERISH.finditer(normalized):
        run = match.group()
        if not any(ch.isdigit() for ch in run):
            continue
        before = normalized[match.start() - 1] if match.start() else " "
        after = normalized[match.end()] if match.end() < len(normalized) else " "
        if before.isalpha() and after.isalpha():
            continue
        found.append(run.translate(_DIGIT_FOLD))
    return tuple(found)


@dataclass(frozen=True)
class Query:
    """A query prepared once and compared with many candidates."""

    folded: str
    compact: str
    words: frozenset[str]
    nums: tuple[str, ...]

    @classmethod
    def from_text(cls, text: str) -> Query:
        normalized = normalize(text)
        folded = ocr_fold(normalized)
        return cls(
            folded=folded,
            compact=folded.replace(" ", ""),
            words=frozenset(keywords(folded)),
            nums=numbers(normalized),
        )


@dataclass(frozen=True)
class Candidate:
    """A stored problem's matching form. What the exact score needs beyond the folded text
    is computed on first use: most candidates are dropped by the C prefilter before it."""

    key: object  # whatever identifies the candidate to the caller
    folded: str
    normalized: str

    @classmethod
    def from_normalized(cls, key: object, normalized: str) -> Candidate:
        """From a stored matching form (`Problem.search_text`)."""
        return cls(key=key, folded=ocr_fold(normalized), normalized=normalized)

    @cached_property
    def numbers(self) -> tuple[str, ...]:
        return numbers(self.normalized)

    @cached_property
    def compact(self) -> str:
        return self.folded.replace(" ", "")

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(keywords(self.folded))


def terms(words: Iterable[str], nums: Iterable[str]) -> set[str]:
    """What the candidate prefilter indexes: keywords, their 5-letter stems (a damaged
    ending still meets its word), and the numbers. Each is one token of letters and digits
    to any full-text engine: a number is `n12`, a stem `треугx` — Latin `n` and `x` never
    stay in folded words (`ocr_fold` reads them as Cyrillic п and х)."""
    found = {f"n{n}" for n in nums}
    for word in words:
        found.add(word)
        if len(word) > 6:
            found.add(word[:5] + "x")
    return found


def index_terms(normalized: str) -> str:
    """The tokens a stored matching form (`Problem.search_text`) is found by, space-joined
    and sorted (`Problem.search_terms`, which the database's full-text index reads)."""
    candidate = Candidate.from_normalized(None, normalized)
    return " ".join(sorted(terms(candidate.words, candidate.numbers)))


# Exam phrasing that a hundred problems share: it tells no problem from another, and a short
# problem that is little else would outrank the right one whose telling sentence a damaged
# query lost. Left out of the character and token comparisons (folded forms).
def _any(*words: str) -> str:
    return "(?:" + "|".join(ocr_fold(word) for word in words) + ")"


_GENERIC = re.compile(
    rf"\b{_any('ответ', 'результат')} {_any('дайте', 'округлите', 'запишите', 'укажите')}"
    rf" {_any('в', 'до')} \w+|\b{_any('найдите')}\b"
)


def telling(folded: str) -> str:
    """A folded text without its generic exam phrasing (the whole text if that is all)."""
    kept = " ".join(_GENERIC.sub(" ", folded).split())
    return kept or folded


def score(query: Query, candidate: Candidate) -> float:
    """Similarity of a candidate to the query, in 0..1."""
    if not query.folded or not candidate.folded:
        return 0.0
    asked, held = telling(query.folded), telling(candidate.folded)
    compact, query_compact = held.replace(" ", ""), asked.replace(" ", "")
    char = fuzz.ratio(query_compact, compact)
    if len(query_compact) < len(compact):  # a query missing a sentence aligns inside
        char = max(char, fuzz.partial_ratio(query_compact, compact))
    token = fuzz.token_set_ratio(asked, held) / 100
    cand_words = candidate.words
    if query.words and cand_words:
        overlap = len(query.words & cand_words) / min(len(query.words), len(cand_words))
    else:
        overlap = token
    if query.nums or candidate.numbers:
        nums = Indel.normalized_similarity(list(query.nums), list(candidate.numbers))
    else:
        nums = 1.0
    return round(0.35 * char / 100 + 0.2 * token + 0.2 * overlap + 0.25 * nums, 4)


def rank(
    query: Query,
    candidates: Iterable[Candidate],
    *,
    threshold: float,
    limit: int,
    prefilter: int = 300,
) -> list[tuple[Candidate, float]]:
    """The best `limit` candidates scoring at least `threshold`, best first.

    Large pools are narrowed in C first: a plain ratio over everything keeps the best
    `4 × prefilter`, a token-set ratio keeps the best `prefilter` of those; only those get
    the full score.
    """
    pool = list(candidates)
    for scorer, keep in ((fuzz.ratio, 4 * prefilter), (fuzz.token_set_ratio, prefilter)):
        if len(pool) > keep:
            best = process.extract(
                query.folded, [c.folded for c in pool], scorer=scorer, limit=keep
            )
            pool = [pool[index] for _, _, index in best]
    scored = [(c, score(query, c)) for c in pool]
    kept = [(c, s) for c, s in scored if s >= threshold]
    kept.sort(key=lambda pair: (-pair[1], pair[0].key))  # equal scores: the lower key first
    return kept[:limit]


def distinctive_phrases(text: str, *, count: int = 3, words: int = 7) -> list[str]:
    """1–3 phrases of the text to give the site's search (never the whole text).

    Windows of `words` consecutive words are ranked by how many long, non-stop, letter-
    only words they hold (OCR noise in digits and symbols makes poor search terms).
    """
    tokens = normalize(text).split()
    if len(tokens) <= words:
        return [" ".join(tokens)] if tokens else []
    windows = []
    for start in range(0, len(tokens) - words + 1):
        window = tokens[start : start + words]
        quality = sum(len(w) >= 5 and w.isalpha() and w not in STOP_WORDS for w in window)
        windows.append((quality, -start, " ".join(window)))
    windows.sort(reverse=True)
    chosen: list[str] = []
    used: set[str] = set()
    for _, _, phrase in windows:
        if not used.intersection(phrase.split()):
            chosen.append(phrase)
            used.update(phrase.split())
        if len(chosen) == count:
            break
    return chosen
