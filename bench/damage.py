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
    text = _drop_sentence(text, rng) if rng.random() < 0.5 * rate else text
    text = "".join(_confuse(ch, rng, 0.08 * rate) for ch in text)
    words = [_typo(word, rng, 0.06 * rate) for word in text.split(" ")]
    return _respace(words, rng, rate)


def _drop_sentence(text: str, rng: random.Random) -> str:
    sentences = SENTENCE.split(text)
    if len(sentences) < 3:
        return text
    victim = rng.randrange(len(sentences))
    kept = sentences[:victim] + sentences[victim + 1 :]
    shorter = " ".join(kept)
    return shorter if len(shorter) >= 0.6 * len(text) else text


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
