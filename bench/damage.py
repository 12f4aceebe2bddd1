"""OCR-like damage for fuzzy-search queries: the generator the quality benchmark and its
smaller test use.

`damage(text, rng)` applies, at modest rates: letter/digit confusions (о↔0, з↔3, б↔6,
l↔1) and Latin/Cyrillic look-alikes, dropped and merged spaces, line breaks (some with a
hyphen inside a word), letter typos (delete, insert, substitute, transpose), and — in a
text of three or more sentences — one missing sentence.
"""

from __future__ import annotations

import random
import re

CONFUSIONS = {
    "о": "0", "0": "о", "О": "0", "з": "3", "3": "з", "б": "6", "6": "б", "1": "l",
    "а": "a", "е": "e", "р": "p", "с": "c", "х": "x", "у": "y",
}  # fmt: skip
LETTERS = "абвгдежзийклмнопрстуфхцчшщъыьэюя"
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def damage(text: str, rng: random.Random, *, rate: float = 1.0) -> str:
    """A damaged copy of `text`; `rate` scales every kind of damage."""
    return damage_kept(text, rng, rate=rate)[0]


def damage_kept(text: str, rng: random.Random, *, rate: float = 1.0) -> tuple[str, list[str]]:
    """A damaged copy of `text` and the sentences of `text` it still carries (all of them
    unless one was dropped): a search hits when its first result holds every one."""
    kept = SENTENCE.split(text)
    if rng.random() < 0.5 * rate:
        kept = _drop_sentence(kept, rng)
    text = " ".join(kept)
    text = "".join(_confuse(ch, rng, 0.08 * rate) for ch in text)
    words = [_typo(word, rng, 0.06 * rate) for word in text.split(" ")]
    return _respace(words, rng, rate), kept


def holds_every(condition: str, sentences: list[str]) -> bool:
    """Whether `condition` holds each of `sentences` (compared as normalized text): a
    problem of the same prototype that differs only in a dropped sentence is a hit too."""
    from problems.matching import normalize

    whole = normalize(condition)
    return all(normalize(sentence) in whole for sentence in sentences)


def _drop_sentence(sentences: list[str], rng: random.Random) -> list[str]:
    if len(sentences) < 3:
        return sentences
    victim = rng.randrange(len(sentences))
    kept = sentences[:victim] + sentences[victim + 1 :]
    whole = sum(map(len, sentences))
    return kept if sum(map(len, kept)) >= 0.6 * whole else sentences


def _confuse(ch: str, rng: random.Random, p: float) -> str:
    return CONFUSIONS[ch] if ch in CONFUSIONS and rng.random() < p else ch


def _typo(word: str, rng: random.Random, p: float) -> str:
    if len(word) < 4 or not word.isalpha() or rng.random() >= p:
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(["delete", "insert", "substitute", "transpose"])
    if kind == "delete":
        return word[:i] + word[i + 1 :]
    if kind == "insert":
        return word[:i] + rng.choice(LETTERS) + word[i:]
    if kind == "substitute":
        return word[:i] + rng.choice(LETTERS) + word[i + 1 :]
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]


def _respace(words: list[str], rng: random.Random, rate: float) -> str:
    out = []
    for word in words:
        if len(word) > 6 and rng.random() < 0.03 * rate:  # hyphenated line break
            cut = rng.randrange(3, len(word) - 2)
            word = word[:cut] + "-\n" + word[cut:]
        out.append(word)
        roll = rng.random()
        if roll < 0.05 * rate:
            continue  # dropped space: merged with the next word
        out.append("\n" if roll < 0.12 * rate else " ")
    return "".join(out).strip()
