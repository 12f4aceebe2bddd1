"""Russian morphology, one per process, for every app that reads Russian words.

pymorphy3's analyzer (OpenCorpora's word forms: 16 MB of dictionaries, 0.3 s to load) is
loaded on first use, not at start-up: a desktop client's new process pays it only when a
request needs it.

A word's parses are a function of the word alone (the dictionaries do not change while a
process runs): the analyzer keeps the last PARSES_KEPT words' (questions repeat their words:
«какой», «должна», «высота»…; a parse costs 10 µs with pymorphy3's dictionary reader in C,
DAWG2, 0.1 ms without it). Each call gets a list of its own: a caller may change it.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

PARSES_KEPT = 4096
ADJECTIVES = frozenset({"ADJF", "PRTF"})  # an adjective's and a participle's parts of speech


@cache
def morphology() -> Any:
    """The process's pymorphy3 `MorphAnalyzer` (thread-safe for parsing), its parses kept."""
    import pymorphy3

    analyzer = pymorphy3.MorphAnalyzer()
    parsed = lru_cache(maxsize=PARSES_KEPT)(analyzer.parse)

    def parse(word: str) -> list[Any]:
        return list(parsed(word))

    analyzer.parse = parse
    return analyzer


@lru_cache(maxsize=4096)
def is_noun(word: str) -> bool:
    """Whether `word` is a noun (its likeliest reading)."""
    return bool(morphology().parse(word)[0].tag.POS == "NOUN")


def may_be_adjective(word: str) -> bool:
    """Whether `word` may be an adjective or a participle (any of its readings)."""
    return any(p.tag.POS in ADJECTIVES for p in morphology().parse(word))
