"""Where an amendment's quoted texts are (pure): the new wording of a clause, the words
replaced, stand between «», and quotes nest. Real amendments leave quotes open («…; the
next order», a table's rows with no closing »): a line that starts an order closes every
quote still open, so an unbalanced quote never swallows the orders after it."""

from __future__ import annotations

import re
from dataclasses import dataclass

VERB = re.compile(
    r"(?<![а-яёa-z])(?:изложить|исключить|дополнить|заменить|вставить|читать"
    r"|признать\s+утратившим\s+силу)(?![а-яёa-z])",
    re.IGNORECASE,
)
# a line that starts an order: what it names, then one of the verbs on the same line
_ORDER_LINE = re.compile(
    r"[ \t]*(?:(?:Разделы?|Подразделы?|Пункты?|Подпункты?|Таблиц[аыу]|Приложени[еяй]|"
    r"В\s+(?:пункте|подпункте|таблице|разделе|подразделе|приложении))\s+[\dА-ЯA-Z]"
    r"|Предисловие|Введение|Библиографи[юя]|По\s+всему\s+тексту)[^\n]*?(?i:" + VERB.pattern + ")"
)
# a page's running lines inside the amendment's text: «(Продолжение Изменения № 1 к …)»
# with the page number before it, the footnote of the day it holds from in one country
_FURNITURE = re.compile(
    r"(?m)(?:^[ \t]*\d{1,3}[ \t]*\n)?^[ \t]*\((?:Продолжение|Окончание)\s+[Ии]зменения\s+№"
    r"[^\n]*\)[ \t]*$\n?|^[ \t]*\*[ \t]*Дата введения[^\n]*$\n?"
)


@dataclass(frozen=True)
class Quoted:
    """A quoted text: its span inside the quotes, and whether a » closed it."""

    start: int
    end: int
    closed: bool


def furniture_removed(text: str) -> str:
    """`text` without the running lines of the amendment's pages (see above)."""
    return _FURNITURE.sub("", text)


def quoted_spans(text: str) -> list[Quoted]:
    """The outermost quoted texts of `text`, in order. A quote closes at its » (quotes
    nest), at a line that starts an order, or at the end; a » with no quote open is text."""
    found: list[Quoted] = []
    depth, start = 0, 0
    for at, char in enumerate(text):
        if depth and char == "\n" and _ORDER_LINE.match(text, at + 1):
            found.append(Quoted(start, at, False))
            depth = 0
        elif char == "«":
            depth += 1
            start = at + 1 if depth == 1 else start
        elif char == "»" and depth:
            depth -= 1
            if not depth:
                found.append(Quoted(start, at, True))
    if depth:
        found.append(Quoted(start, len(text), False))
    return found


def blanked(text: str, spans: list[Quoted]) -> str:
    """`text` with what its quotes hold made spaces (every place kept): where the orders'
    own words are."""
    out = list(text)
    for span in spans:
        out[span.start : span.end] = " " * (span.end - span.start)
    return "".join(out)
