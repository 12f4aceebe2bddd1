"""Reading what an answer cites (pure functions, no I/O): the clauses and tables a claim
names, each with its document, and the numbers of a text that name rather than measure.

A clause is cited as «п. 10.3.2», «пп. 10.3.3 и 10.3.4», «пункт Б.3», «п. Г.13» (an
appendix's letter, Cyrillic or a Latin lookalike, read as stored: `number_normal`), bare
«согласно 10.3.2» or «10.3.2 СП 63»; a table as «табл. 5.1», «таблице Б.2». A document by
its code («СП 63.13330.2018», «ГОСТ 10180-2012», «63.13330») or, for the documents known by
their names, by the short name `code_aliases` gives them: «ПУЭ» («Правил ПУЭ», «Правила
устройства электроустановок»), «123-ФЗ» («Федерального закона от 22.07.2008 № 123-ФЗ»,
«ФЗ-123»). A law's article as «ст. 26», «статья 26», «ч. 2 ст. 26» (the article: one clause
holds it, numbered «ст. 26»), of a code named by its name or abbreviation («Жилищного
кодекса», «ЖК РФ», «ГрК РФ»: the short name `title_aliases` gives the code).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from normagpt.parsing import (
    ARTICLE_REF,
    CODEX_PATTERN,
    DOCUMENT_SERIES,
    article_number,
    codex_name,
    number_normal,
)
from normagpt.units import UNIT_PATTERN

# a clause's number: «10.3.2», or an appendix's «Г.13», «А.2.2» (its letter capital, Cyrillic
# or a Latin lookalike, not ending a word)
_NUMBER = r"(?:(?<![^\W\d_])[А-ЯЁA-Z]\.\d{1,2}(?:\.\d{1,3}){0,4}|\d{1,2}(?:\.\d{1,3}){1,4})"
_TABLE_NUMBER = r"(?:[А-ЯЁA-Z]\.?)?\d{1,2}(?:\.\d{1,3}){0,3}"
_LIST = rf"{_NUMBER}(?:\s*(?:,|и|или|–|-)\s*{_NUMBER})*"
_CLAUSE_REF = re.compile(
    rf"\b(?:пп?\.|пункт[а-я]*|п)\s*({_LIST})"
    rf"|(?<![\d.])({_NUMBER})(?=\s*\)?\s*(?:{DOCUMENT_SERIES})\b)",
    re.I,
)
_TABLE_REF = re.compile(
    rf"\b(?:табл\.|таблиц[а-я]*)\s*({_TABLE_NUMBER}(?:\s*(?:,|и)\s*{_TABLE_NUMBER})*)"
    r"(?![\d.]*\d)",
    re.I,
)
# a number cited bare («согласно 10.3.2»): three parts at least, or four with a letter
_BARE_CLAUSE = re.compile(
    r"(?<![\d.ФF])((?:[А-ЯЁA-Z]\.)?\d{1,2}(?:\.\d{1,3}){2,5}|\d{1,2}\.\d{1,3}\.\d{1,3})\b"
)


# numbers that name, not measure: an appendix's part («рисунок Г.1», «Г.13» opening its
# clause), a law's article («ст. 69»), a product's designation («грунтовка ГФ-021», «эмаль
# ПФ-115»: its letters, a hyphen and its number) and the number opening a clause, a table's
# row or a note («6.7 Минимальные расстояния», «4 Входные двери в квартиры»; «15 Вт/м»
# opening a line is a value); compiled on first use (some 40 ms a server started for other
# tools would pay)
@functools.cache
def _naming() -> re.Pattern[str]:
    return re.compile(
        r"(?<![\w.,])[А-ЯЁA-Z]\.\d{1,2}(?:\.\d{1,3})*(?![\d,])"
        r"|(?<![\w-])[А-ЯЁ]{2,3}-\d{2,4}(?![\d,.]\d)"
        r"|\b(?i:ст\.|стать[а-я]*)\s*\d{1,3}(?:\.\d{1,2})?(?![\d,])"
        r"|^[ \t]*\d{1,2}(?:\.\d{1,3}){0,4}\.?(?=[ \t]+[А-ЯЁA-Z])"
        rf"(?![ \t]+(?i:{UNIT_PATTERN}))",
        re.M,
    )


# a document by its code («СП 63.13330.2018», «63.13330»), or by its name: the ПУЭ
# («Правил устройства электроустановок», «ПУЭ-7») and a federal law («123-ФЗ», «Федерального
# закона от 22.07.2008 № 123-ФЗ», «ФЗ-384»); a name's words and numbers are not values
_PUE = (
    r"(?:Правил\w*\s+устройства\s+электроустановок(?:\s*\(ПУЭ\))?|(?:Правил\w*\s+)?ПУЭ)"
    r"(?:[-\s]?7\b)?"
)
_LAW = (
    r"Федеральн\w*\s+закон\w*\s+(?:от\s+\d{1,2}\.\d{1,2}\.\d{4}\s*(?:г\.\s*)?)?(?:№\s*)?"
    r"(?P<law>\d{1,3})(?:\s*-\s*ФЗ)?"
    r"|(?:№\s*)?(?P<law_code>\d{1,3})\s*-\s*ФЗ|ФЗ\s*(?:-|№)?\s*(?P<law_short>\d{1,3})"
)
_DOCUMENT = re.compile(
    rf"\b(?:{DOCUMENT_SERIES})\s*\d[\d.\-–—]*\d|\b\d{{1,3}}\.\d{{5,7}}(?:\.\d{{4}})?\b"
    rf"|\b(?:{_PUE}|{_LAW}|{CODEX_PATTERN})(?!\w)",
    re.I,
)
_LIST_ITEM = re.compile(_NUMBER)
# a page cited: «стр. 2», «с. 12», «страница 2», «на странице 3–4», «p. 2»: where a value
# is, not one. Not «м/с. 3» (a unit's «с» ending a sentence), nor «5 с. 2 м» (seconds),
# nor the first digits of a decimal («стр. 12,5»: the number is taken whole or not at all)
_PAGE = re.compile(
    r"(?<![\w/])(?:(?<!\d\s)(?<!\d)с\.|стр\.|pp?\.|страниц[а-яё]*|pages?)\s*"
    r"(?>\d{1,4})(?:\s*[-–—]\s*(?>\d{1,4}))?(?![\d,.]\d)",
    re.I,
)


@dataclass(frozen=True)
class Reference:
    kind: str  # "clause" or "table"
    number: str
    document: str  # as written in the claim (a named one by its alias: «ПУЭ»), '' for none
    text: str  # the reference as written


def references_find(claim: str) -> list[Reference]:
    """The clauses and tables `claim` cites, each with the document named next to it (the
    one right after it, else right before it, else the only one the claim names)."""
    documents = [(m.start(), m.end(), _document_name(m)) for m in _DOCUMENT.finditer(claim)]
    found: list[tuple[int, int, str, str]] = []  # start, end, kind, numbers
    taken: list[tuple[int, int]] = []
    for pattern, kind in ((ARTICLE_REF, "article"), (_TABLE_REF, "table"), (_CLAUSE_REF, "clause")):
        for match in pattern.finditer(claim):
            numbers = match.group(1) or (match.group(2) if pattern is _CLAUSE_REF else "")
            if numbers and not _inside(match.start(), taken):
                found.append((match.start(), match.end(), kind, numbers))
                taken.append((match.start(), match.end()))
    for match in _BARE_CLAUSE.finditer(claim):
        if not _inside(match.start(), taken) and not _inside(match.start(), _spans(documents)):
            found.append((match.start(), match.end(), "clause", match.group(1)))
            taken.append((match.start(), match.end()))
    references = []
    for start, end, kind, numbers in sorted(found):
        document = _document_near(start, end, documents)
        if kind == "article":  # «ч. 2 ст. 26»: the article, which one clause holds
            written = claim[start:end].strip(" ,;")
            references.append(Reference("clause", article_number(numbers), document, written))
            continue
        pattern = _LIST_ITEM if kind == "clause" else re.compile(_TABLE_NUMBER)
        for number in pattern.findall(numbers):
            references.append(
                Reference(kind, number_normal(number), document, claim[start:end].strip(" ,;"))
            )
    return list(dict.fromkeys(references))


def documents_find(text: str) -> list[str]:
    """The document codes and short names `text` mentions, in order."""
    return list(dict.fromkeys(_document_name(m) for m in _DOCUMENT.finditer(text)))


def _document_name(match: re.Match[str]) -> str:
    """A document as named: its code as written, or the short name a document known by its
    name has as an alias (`normagpt.parsing.code_aliases`): «ПУЭ», «123-ФЗ»."""
    law = match.group("law") or match.group("law_code") or match.group("law_short")
    if law:
        return f"{law}-ФЗ"
    written = match.group(0)
    if match.group("codex"):
        return codex_name(written)
    return "ПУЭ" if re.search(r"ПУЭ|электроустановок", written, re.I) else written


def _spans(documents: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    return [(start, end) for start, end, _ in documents]


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _document_near(start: int, end: int, documents: list[tuple[int, int, str]]) -> str:
    after = [d for d in documents if 0 <= d[0] - end <= 12]
    if after:
        return after[0][2]
    before = [d for d in documents if 0 <= start - d[1] <= 12]
    if before:
        return before[-1][2]
    return documents[0][2] if len(documents) == 1 else ""


def naming_blanked(text: str) -> str:
    """`text` with what cites clauses, tables, pages and documents blanked, and the numbers
    that name a clause, a row or an appendix's part (same length): what is left of its
    numbers are values."""
    for pattern in (
        _DOCUMENT,
        ARTICLE_REF,
        _TABLE_REF,
        _CLAUSE_REF,
        _BARE_CLAUSE,
        _PAGE,
        _naming(),
    ):
        text = pattern.sub(lambda match: " " * len(match.group(0)), text)
    return text
