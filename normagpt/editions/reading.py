"""Reading an amendment's text into its orders (pure, no database).

An amendment is a sequence of orders, each naming what it changes and saying how: «Пункт
10.3.2 изложить в новой редакции: «…»», «Раздел 2. Пункт 2.1. Заменить слово: «…» на «…»»,
«Пункты 2.10—2.12 изложить …», «Раздел 2 дополнить пунктом 2.7а (после пункта 2.7): «…»»,
«Пункт 4.4. Таблица 1. … Для строки «…» заменить обозначение: «…» на «…»; дополнить
строкой: «…»», «Приложение А изложить в новой редакции: «…»», «По всему тексту стандарта
заменить слово: «…» на «…»».

An order begins where a capitalized «Раздел», «Пункт», «Таблица», «Приложение»,
«Предисловие», «По всему тексту» … starts a line or a sentence after the last order's verb
(before its first verb, such words name what it changes: «Раздел 2. Пункт 2.1.»). Each of
its verbs outside quotes («изложить», «исключить», «дополнить», «заменить», «вставить»,
«читать», «признать утратившим силу») is one act, read on its own (`acts.act_read`): the
clause named before the first verb holds for the acts that follow it («…; дополнить видом
бетона Е: «…»»). Every verb outside quotes is an order that is read or named.
`orders.amendment_read` puts the two together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from normagpt.editions.entities import CLAUSE, PART, PREFACE, TABLE, TEXT, number_form
from normagpt.editions.quotes import (
    VERB,
    Quoted,
    blanked,
    furniture_removed,
    quoted_spans,
)
from normagpt.parsing import text_clean

NUMBER = r"(?:[А-ЯЁA-Z]\.)?\d+(?:\.\d+)*(?:[а-яa-z](?![а-яёa-z]))?"
NUMBERS = rf"{NUMBER}(?:\s*(?:,|\bи\b|—|–|-|\.)\s*{NUMBER})*"
LETTERS = r"[А-ЯЁA-Z](?:\s*(?:,|\bи\b)\s*[А-ЯЁA-Z])*(?![а-яёa-z.\d])"  # appendices
_ONE = re.compile(rf"{NUMBER}|[А-ЯЁA-Z]")
_TARGET = re.compile(
    r"(?P<what>Разделы?|Подразделы?|Пункты?|Подпункты?|Таблиц[аыу]"
    r"|В\s+(?:пункте|подпункте|таблице|разделе|подразделе))"
    rf"\s+(?P<numbers>{NUMBERS})"
    rf"|(?P<appendix>Приложени[ея]|В\s+приложении)\s+(?P<letters>{LETTERS})"
    r"|(?P<front>Предисловие|Введение|Библиографи[юя])(?![а-яё])"
    r"|(?P<whole>По\s+всему\s+тексту(?:\s+(?:стандарта|документа|свода\s+правил|правил))?)"
)
_SEPARATOR = re.compile(r"[.;:,](?=\s)|\n|\sи\s|\sа\s+также\s")
_RANGE = re.compile(r"\s*[—–-]\s*")


@dataclass(frozen=True)
class Token:
    """A piece of an order after its verb: its own words, or a quoted text."""

    text: str
    quoted: bool = False
    closed: bool = True


@dataclass(frozen=True)
class Target:
    """What an order names: a kind and its numbers (None: a range that cannot be told)."""

    kind: str
    numbers: tuple[str, ...] | None
    written: str


@dataclass(frozen=True)
class Act:
    """One verb of an order with what surrounds it (see the module's docstring)."""

    verb: str
    targets: tuple[Target, ...]
    place: str  # the words between what it names (or the act before) and the verb
    tokens: tuple[Token, ...]  # after the verb
    text: str  # the order as shown: its words, with what it names when it continues one


def acts_found(text: str) -> list[Act]:
    """The acts of an amendment's text (a PDF's text layer or typed text), in its order: each
    verb outside quotes with what it names and the words after it."""
    text = furniture_removed(text_clean(text))
    spans = quoted_spans(text)
    outside = blanked(text, spans)
    return [act for bounds in order_bounds(outside) for act in _acts(text, outside, spans, bounds)]


def order_bounds(outside: str) -> list[tuple[int, int]]:
    """Where each order stands in `outside` (the text with its quotes blanked): from a name
    at a line's or sentence's start (or a capitalized verb starting a line: «Дополнить
    пунктами …») that follows a verb, to the next such one. Only spans holding a verb are
    orders."""
    verbs = [match.start() for match in VERB.finditer(outside)]
    starts = [m.start() for m in _TARGET.finditer(outside) if sentence_start(outside, m.start())]
    starts += [v for v in verbs if outside[v].isupper() and line_start(outside, v)]
    bounds, begin, named = [], 0, False
    for at in sorted(starts):
        if any(begin <= verb < at for verb in verbs):
            bounds.append((begin, at))
            begin, named = at, True
        elif not named:
            begin, named = at, True  # what stood before the first name is no order
    bounds.append((begin, len(outside)))
    return [(a, b) for a, b in bounds if any(a <= verb < b for verb in verbs)]


def line_start(text: str, at: int) -> bool:
    """Whether `at` begins a line (spaces before it aside)."""
    return _before(text, at) in ("", "\n")


def sentence_start(text: str, at: int) -> bool:
    """Whether `at` begins a line or follows the end of a sentence («.», «;», «:»)."""
    return _before(text, at) in ("", "\n", ".", ";", ":")


def _before(text: str, at: int) -> str:
    """The character before `at` and the spaces before it ('' at the text's start)."""
    at -= 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return text[at] if at >= 0 else ""


def _acts(text: str, outside: str, spans: list[Quoted], bounds: tuple[int, int]) -> list[Act]:
    start, end = bounds
    verbs = list(VERB.finditer(outside, start, end))
    names = [
        match
        for match in _TARGET.finditer(outside, start, verbs[0].start())
        if sentence_start(outside, match.start())
    ]
    targets = tuple(_target(match) for match in names)
    cut = names[-1].end() if names else start
    head = text[start:cut].strip()
    starts = [start] + [_act_start(outside, a.end(), b.start()) for a, b in pairwise(verbs)]
    ends = [*starts[1:], end]
    acts = []
    for k, verb in enumerate(verbs):
        tokens = _tokens(text, spans, verb.end(), ends[k])
        stop = ends[k] - len(tokens[-1].text)
        if len(tokens) > 1:  # the order ends on the line of its last quote: lines after it
            tokens[-1] = Token(tokens[-1].text.split("\n", 1)[0])  # and before the next order
        stop += len(tokens[-1].text)  # are other text (a footnote, a date, «ИУС № …»)
        shown = text[starts[k] : stop].strip()
        acts.append(
            Act(
                verb=" ".join(verb.group().lower().split()),
                targets=targets,
                place=text[cut if k == 0 else starts[k] : verb.start()],
                tokens=tuple(tokens),
                text=f"{head} … {shown}" if k and head else shown,
            )
        )
    return acts


def _act_start(outside: str, after: int, verb: int) -> int:
    """Where an act after another begins: past the last separator between the two verbs."""
    found = [match.end() for match in _SEPARATOR.finditer(outside, after, verb)]
    return found[-1] if found else verb


def _tokens(text: str, spans: list[Quoted], start: int, end: int) -> list[Token]:
    """`text[start:end]` as its own words and quoted texts, in order."""
    tokens, at = [], start
    for span in spans:
        if span.start - 1 < start or span.start >= end:
            continue
        tokens.append(Token(text[at : span.start - 1]))
        tokens.append(Token(text[span.start : min(span.end, end)], True, span.closed))
        at = min(span.end + 1 if span.closed else span.end, end)
    tokens.append(Token(text[at:end]))
    return tokens


def _target(match: re.Match[str]) -> Target:
    written = " ".join(match.group().split())
    if match["whole"]:
        return Target(PART, ("",), written)
    if match["front"]:
        return Target(TEXT, (PREFACE if match["front"] == PREFACE else match["front"],), written)
    if match["appendix"]:
        return Target(PART, numbers_read(match["letters"]), written)
    what = match["what"].lower()
    kind = TABLE if "таблиц" in what else PART if "раздел" in what else CLAUSE
    return Target(kind, numbers_read(match["numbers"], plural=what.endswith("ы")), written)


def numbers_read(written: str, *, plural: bool = True) -> tuple[str, ...] | None:
    """The numbers a list names: «5.1, 5.2 и 5.3», «9.26. 9.27, 9.28», a range «2.10—2.12»
    (its numbers in between: None when its ends differ but in their last part); only the
    first for a single clause («Пункт 5.1. 2-й абзац»)."""
    found = list(_ONE.finditer(written))
    if not plural:
        return (number_form(found[0].group()),)
    numbers: list[str] = []
    for previous, match in zip([None, *found], found, strict=False):
        between = written[previous.end() : match.start()] if previous else ""
        if previous is not None and _RANGE.fullmatch(between):
            inside = _range(previous.group(), match.group())
            if inside is None:
                return None
            numbers += inside
        numbers.append(number_form(match.group()))
    return tuple(dict.fromkeys(numbers))


def _range(first: str, last: str) -> list[str] | None:
    """The numbers strictly between two ends of a range of one section («2.10», «2.12» →
    «2.11»)."""
    head, _, low = first.rpartition(".")
    tail, _, high = last.rpartition(".")
    if head != tail or not (low.isdigit() and high.isdigit()) or int(high) - int(low) > 50:
        return None
    prefix = f"{head}." if head else ""
    return [number_form(f"{prefix}{n}") for n in range(int(low) + 1, int(high))]
