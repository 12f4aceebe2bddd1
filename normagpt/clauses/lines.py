"""A document's lines as a reader meets them: the page furniture (running headers and footers,
page numbers) told apart from the text, and the table of contents recognised.

A page number is known by where it stands (a page's first or last line) and by counting
with the pages (its value and the page's place in the file keep one difference over several
pages, Roman numerals in the front matter alike), never by being a number alone on its line:
a table's cells are numbers alone on their lines too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

BOILERPLATE_SHARE = 0.5
EDGE_LINES = 3  # where a page's running header and footer are
PAGE_NUMBER_PAGES = 2  # pages whose numbers keep one difference with their place: a numbering
TOC_GAP = 3  # lines of a wrapped entry's title before its dot leaders
TOC_WRAP = 8  # in a table of contents, lines of a title wrapped word by word

_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"^(?=[IVXL])(L?X{0,3})(IX|IV|V?I{0,3})$")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50}
# «7.7 Определение пороков ……… 12», «1 Область применения ....... 1», «Библиография ___ 29»
_LEADER = re.compile(r"(?:[.…·](?:\s?[.…·]){3,}\s*\d{0,4}|(?:…{2,}|\.{2,}|_{3,})\s*\d{1,4})\s*$")
_ENDS_IN_PAGE = re.compile(r"(?:^|\S\s+)\d{1,4}\s*$")
_TOC_TITLE = re.compile(r"^(?:с\s?о\s?д\s?е\s?р\s?ж\s?а\s?н\s?и\s?е|оглавление)\s*:?$", re.I)
# the preface's items («1 РАЗРАБОТАН …», «4 Приказом Федерального агентства …») run from its
# title to the contents, the introduction or the title block of the text («Дата введения …»);
# so do those of a ministry's order bound in front («ПРИКАЗ … 1 Утвердить и ввести в действие»)
_PREFACE = re.compile(
    r"^(?:п\s?р\s?е\s?д\s?и\s?с\s?л\s?о\s?в\s?и\s?е|сведения о (?:стандарте|своде правил)"
    r"|приказ)\s*$",
    re.I,
)
# an erratum («Поправка к ГОСТ …»: «В каком месте / Напечатано / Должно быть») or an amendment
# bound in («Изменение № 1 ГОСТ 24866—2014 …», «(Продолжение Изменения № 1 к ГОСТ …)»): its
# orders are not the document's clauses; to its page's end
_ERRATUM = re.compile(
    r"^\(?(?:Продолжение\s+)?(?:Поправк[аи]|ПОПРАВКА|Изменени[ея]|ИЗМЕНЕНИЕ)\s+"
    r"(?:№\s*\d+\s+)?(?:к\s+)?(?:ГОСТ|СП|СНиП|СанПиН|своду|стандарту)\b"
)
_PREFACE_END = re.compile(
    r"^(?:в\s?в\s?е\s?д\s?е\s?н\s?и\s?е\s*$|дата введения"
    r"|1\.?\s+(?:область применения|общие положения|назначение и область применения))",
    re.I,
)


@dataclass
class Line:
    page: int  # 0-based index of its page
    start: int  # span in that page's text
    end: int
    text: str  # stripped
    toc: bool = False  # an entry of the table of contents
    front: bool = False  # the preface
    gap: bool = False  # a blank line stands before it on its page (where a title ends)


def blank(line: str) -> str:
    """A line with its digits blanked: how repeated headers and footers are compared."""
    return _DIGITS.sub("#", " ".join(line.split()))


def boilerplate_lines(pages: list[str]) -> set[str]:
    """Running headers and footers: lines (digits blanked) among the first or last
    EDGE_LINES of at least half the pages, when there are two pages or more."""
    if len(pages) < 2:
        return set()
    seen: Counter[str] = Counter()
    for text in pages:
        lines = [line for line in text.splitlines() if line.strip()]
        seen.update({blank(line) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]})
    threshold = max(2, BOILERPLATE_SHARE * len(pages))
    return {line for line, count in seen.items() if count >= threshold and line != "#"}


def document_lines(pages: list[str]) -> list[Line]:
    """The lines of the pages that are text: running headers, footers and page numbers left
    out, entries of the table of contents marked."""
    skip = boilerplate_lines(pages)
    by_page = [_page_lines(index, text, skip) for index, text in enumerate(pages)]
    numbers = _page_number_lines(by_page)
    lines = [line for page in by_page for line in page if id(line) not in numbers]
    _mark_contents(lines)
    _mark_preface(lines)
    return lines


def _page_lines(index: int, text: str, skip: set[str]) -> list[Line]:
    out, offset, gap = [], 0, False
    for raw in text.splitlines(keepends=True):
        start, offset = offset, offset + len(raw)
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if stripped and blank(line) not in skip:
            lead = len(line) - len(line.lstrip())
            out.append(Line(index, start + lead, start + lead + len(stripped), stripped, gap=gap))
        gap = not stripped or (gap and blank(line) in skip)
    return out


def _number_value(text: str) -> int | None:
    if text.isdigit() and len(text) <= 4:
        return int(text)
    roman = text.upper() if text.isupper() else ""
    if roman and _ROMAN.match(roman):
        values = [_ROMAN_VALUES[c] for c in roman]
        return sum(
            -v if v < after else v for v, after in zip(values, [*values[1:], 0], strict=True)
        )
    return None


def _page_number_lines(by_page: list[list[Line]]) -> set[int]:
    """The ids of the lines that number their page: a page's first or last line holding a
    number whose difference with the page's place other pages' numbers share (one page of a
    document numbers itself: its only edge number counts)."""
    edges: list[tuple[int, Line, int, bool]] = []
    for index, lines in enumerate(by_page):
        for line in {id(x): x for x in (lines[:1] + lines[-1:])}.values():
            value = _number_value(line.text)
            if value is not None:
                edges.append((index, line, index - value, line.text.isdigit()))
    shared = Counter((offset, arabic) for _, _, offset, arabic in edges)
    needed = min(PAGE_NUMBER_PAGES, len(by_page))
    return {id(line) for _, line, offset, arabic in edges if shared[offset, arabic] >= needed}


def _mark_contents(lines: list[Line]) -> None:
    """Mark the entries of a table of contents: a line ending in dot leaders (and a page
    number), and the lines of a title wrapped before it on its page (TOC_GAP); after a
    «Содержание» title, every line up to the last entry that follows it with no more than
    TOC_WRAP lines between (titles wrapped word by word)."""
    leader = [bool(_LEADER.search(x.text)) for x in lines]
    entry = [leader[i] or bool(_ENDS_IN_PAGE.search(x.text)) for i, x in enumerate(lines)]
    inside = False
    for i, line in enumerate(lines):
        ahead = range(i + 1, min(i + 1 + TOC_WRAP, len(lines)))
        if _TOC_TITLE.match(line.text):
            line.toc = inside = True
        elif inside:
            line.toc = inside = entry[i] or any(entry[j] for j in ahead)
        near = [j for j in ahead[:TOC_GAP] if lines[j].page == line.page]
        line.toc = line.toc or leader[i] or any(leader[j] for j in near)


def _mark_preface(lines: list[Line]) -> None:
    """Mark the preface: from its title («Предисловие», «Сведения о стандарте») to the
    contents, the introduction or the text's title block (see _PREFACE_END); and an erratum
    or amendment bound in, to its page's end."""
    inside, erratum = False, -1
    for line in lines:
        if _PREFACE.match(line.text):
            inside = True
        elif inside and (line.toc or _PREFACE_END.match(line.text)):
            inside = False
        if _ERRATUM.match(line.text):
            erratum = line.page
        line.front = inside or line.page == erratum
