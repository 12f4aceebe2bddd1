"""The site's formula images and their alt text, for whatever draws a problem (the printed
sheet, an Anki card).

The site marks a formula as `<img class="tex" src=".../formula/svg/….svg" alt="…">`
(STRUCTURE.md §4) whose alt is a Russian spoken transcription («дробь: числитель: CH,
знаменатель: CB конец дроби»): fine for search and for language models, never shown to a
reader. When a formula's image cannot be had, its alt stands in only when it reads as
plain mathematics (`plain_formula`), else MISSING_FORMULA does.
"""

from __future__ import annotations

import re

MISSING_FORMULA = "[формула недоступна]"

SPACES = dict.fromkeys(map(ord, "\u00a0\u202f\u2009\u2007\u3000"), " ") | dict.fromkeys(
    map(ord, "\u00ad\ufeff\u2060\u200b"), None
)
_SPOKEN = re.compile(
    r"дроб|числит|знаменат|корен|корня|степен|конец|индекс|логарифм|модул|интеграл|"
    r"предел|сумма|больше|меньше|равно|\\[a-z]+",
    re.IGNORECASE,
)
_PLAIN_WORDS = {
    "косинус": "cos",
    "синус": "sin",
    "тангенс": "tg",
    "котангенс": "ctg",
    "умножить на": "·",
}


def is_formula_src(src: str) -> bool:
    return "/formula/" in src


def plain_formula(alt: str) -> str:
    """A formula's alt when it reads as plain mathematics («cos A», «x = 5»), else "":
    spoken constructions («дробь: числитель: …») are never shown."""
    text = " ".join(alt.translate(SPACES).split())
    for spoken, written in _PLAIN_WORDS.items():
        text = re.sub(rf"\b{spoken}\b", written, text, flags=re.IGNORECASE)
    if not text or _SPOKEN.search(text) or re.search(r"[а-яё]{3,}", text, re.IGNORECASE):
        return ""
    return text


def formula_stand_in(alt: str) -> str:
    """What shows in a formula's place when its image cannot be had: its plain alt, else
    MISSING_FORMULA."""
    return plain_formula(alt) or MISSING_FORMULA
