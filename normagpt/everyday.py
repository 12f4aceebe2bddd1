"""How common a word is in everyday Russian, and what that takes off a whole question's word.

A word everyone says («дом», «машина», «делать») and norms seldom write is rare in the
corpus, so its corpus weight (idf) is high; but its rarity there says only that norms call
the thing otherwise («здание», «техника»), not that a clause holding it answers. A clause
that happens to say it (a garden house's, a parking lot's) came first for questions it does
not answer. A whole question's word keeps less of its weight the more common it is in
everyday speech: the share `everyday_share`, from the word's Zipf frequency (the log of its
count per billion words: 6 is a word of every thousand, 3 of every million) in wordfreq's
Russian list (data: `everyday_words.txt`, written by `manage.py normagpt_everyday_words`).
Terms of the field («распалубка», «антресоль», «пандус») are rare in everyday speech too and
keep their weight.
"""

from __future__ import annotations

import functools
from pathlib import Path

from core.russian import morphology

WORDS = Path(__file__).with_name("everyday_words.txt")
COMMON = 4.5  # a word this common (Zipf) or less keeps its whole weight
SLOPE = 1.0  # the share of its weight a word loses for each Zipf point above COMMON
FLOOR = 0.2  # the least share a word keeps («дом», 5.5; «делать», 5.5; «быть», 6.9)


@functools.cache
def zipf_listed() -> dict[str, float]:
    """Each word of `WORDS` (the words at least COMMON) with its Zipf frequency, read once
    a process."""
    out = {}
    for line in WORDS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, zipf = line.split("\t")
            out[word] = float(zipf)
    return out


def everyday_share(word: str) -> float:
    """The share of its corpus weight a whole question's `word` keeps: that of its lemma
    (any form of «дом» is as common as «дом»), less SLOPE for each Zipf point above COMMON,
    at least FLOOR."""
    if not word.isalpha():
        return 1.0  # a number, a code: no word of speech
    lemma = morphology().parse(word.lower())[0].normal_form
    zipf = zipf_listed().get(lemma)
    if zipf is None:
        return 1.0
    return min(1.0, max(FLOOR, 1.0 - SLOPE * (zipf - COMMON)))


def everyday_weighed(weights: dict[str, float], words: dict[str, str]) -> None:
    """`weights` (of the query's stems) each times its word's `everyday_share` (`words`: each
    stem as the question writes it)."""
    for stem in weights:
        if word := words.get(stem):
            weights[stem] *= everyday_share(word)


def everyday_words_written(path: Path = WORDS) -> int:
    """Writes `path`: each word of wordfreq's large Russian list at least COMMON, with its
    Zipf frequency (wordfreq is a tool of the `dev` extra: search reads the file alone, a
    few milliseconds once a process, not wordfreq's imports and lists, two seconds on a slow
    machine). Returns how many."""
    from importlib.metadata import version

    import wordfreq  # the `dev` extra's, for this writer only

    lines = [
        "# Zipf frequencies (log10 of a word's count per billion words) of everyday Russian",
        f"# words, those at least {COMMON}: wordfreq {version('wordfreq')}'s large Russian list.",
        "# Written by `manage.py normagpt_everyday_words` (normagpt/everyday.py); do not edit.",
    ]
    count = 0
    for word in wordfreq.iter_wordlist("ru", wordlist="large"):
        zipf = wordfreq.zipf_frequency(word, "ru", wordlist="large")
        if zipf >= COMMON and word.isalpha():
            lines.append(f"{word}\t{zipf}")
            count += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return count
