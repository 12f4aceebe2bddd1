"""Splitting a document's pages into clauses (pure functions, no I/O).

A norm is numbered: sections («10 Конструктивные требования»), subsections («10.3
Требования к толщине защитного слоя бетона») and clauses («10.3.2 Минимальную толщину …»),
with tables («Таблица 5.1 — …») between them. A clause runs from its number to the next
clause or table, across a page break if need be; the headings above it make its heading
path. Text before the first number (a cover, an introduction) is kept per page as
unnumbered text, and so is text past the page after a clause's first (SPAN_PAGES): no
clause runs on for pages. Lines repeated on most pages (running headers and footers, a banner)
are left out of the clauses' text.

A line that only looks like a clause (a wrapped cross-reference «…по\\n10.3.2 СП 63», a
value «20 МПа») is told apart by the order of numbers: a new clause's number follows the
last one; a section's number is at most a few past the last section's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

HEADING_MAX_CHARS = 120
SECTION_STEP_MAX = 3  # a section number at most this far past the last one
LOOKAHEAD_LINES = 40  # how far a numbering that jumps is checked against what follows
BOILERPLATE_SHARE = 0.5
EDGE_LINES = 3  # where a page's running header and footer are
# the pages after its first a unit runs on to: a clause ends on the next page at the latest, a
# table («Продолжение таблицы») may go on; past that, the text is kept page by page
SPAN_PAGES = {"clause": 1, "table": 3}

# «10.3.2 Текст», «10.3.2. Текст», «А.1.2 Текст», «п. 4.1 Текст»
_NUMBERED = re.compile(
    r"^\s*(?:п\.\s*)?((?:[А-ЯЁA-Z]\.)?\d{1,2}(?:\.\d{1,3}){0,4})\.?\s+(?=[«(\"А-ЯЁA-Z])(.*)$"
)
# «Таблица 5.1 — Заголовок», «Таблица Б.2», «Таблица 3»
_TABLE = re.compile(r"^\s*Таблица\s+((?:[А-ЯЁA-Z]\.?)?\d{1,2}(?:\.\d{1,3}){0,3})\b(.*)$")
_APPENDIX = re.compile(r"^\s*Приложение\s+([А-ЯЁ])\b\.?\s*(.*)$")
_TITLE_WORD = re.compile(r"^[А-ЯЁA-Z][а-яёa-z]+\b")
_DIGITS = re.compile(r"\d+")


@dataclass
class Clause:
    """One unit of a document: a numbered clause, a table or unnumbered text."""

    kind: str  # "clause", "table" or "text" (NormClause.Kind)
    number: str
    heading: str
    page_index: int  # 0-based index of the page where it begins
    start: int  # span on that page's text
    end: int
    position: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()


@dataclass
class _Line:
    page: int
    start: int
    end: int
    text: str


def number_key(number: str) -> tuple[int, ...]:
    """«10.3.2» → (0, 10, 3, 2); «Б.1.2» → (2, 1, 2) with the appendix letter's rank first
    (main text 0): the order in which numbers follow each other in a document."""
    parts = number.split(".")
    head = 0
    if parts and not parts[0].isdigit():
        head = ord(parts[0].upper()[0]) - ord("А") + 1 if parts[0] else 0
        parts = parts[1:]
    return (head, *(int(p) for p in parts if p.isdigit()))


def boilerplate_lines(pages: list[str]) -> set[str]:
    """Running headers and footers: lines (digits blanked) among the first or last
    EDGE_LINES of at least half the pages, when there are two pages or more."""
    if len(pages) < 2:
        return set()
    seen: Counter[str] = Counter()
    for text in pages:
        lines = [line for line in text.splitlines() if line.strip()]
        seen.update({_blank(line) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]})
    threshold = max(2, BOILERPLATE_SHARE * len(pages))
    return {line for line, count in seen.items() if count >= threshold}


def _blank(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()))


def _lines(pages: list[str], skip: set[str]) -> list[_Line]:
    out = []
    for index, text in enumerate(pages):
        offset = 0
        for raw in text.splitlines(keepends=True):
            start, offset = offset, offset + len(raw)
            line = raw.rstrip("\r\n")
            if line.strip() and _blank(line) not in skip and not line.strip().isdigit():
                out.append(_Line(index, start, start + len(line), line.strip()))
    return out


class _Splitter:
    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines
        self.units: list[Clause] = []
        self.headings: dict[int, tuple[str, str]] = {}  # depth → (number, title)
        self.last_clause: tuple[int, ...] = ()
        self.last_section = 0
        self.current: Clause | None = None

    def run(self) -> list[Clause]:
        for i, line in enumerate(self.lines):
            if not (self._appendix(line) or self._table(line) or self._numbered(line, i)):
                self._continue(line)
        self._close()
        for position, unit in enumerate(self.units):
            unit.position = position
        return self.units

    def _heading_path(self, depth: int) -> str:
        return " › ".join(
            f"{n} {t}".strip() for d, (n, t) in sorted(self.headings.items()) if d < depth
        )

    def _open(self, kind: str, number: str, heading: str, line: _Line) -> None:
        self._close()
        self.current = Clause(kind, number, heading, line.page, line.start, line.end, 0)
        self.current.lines.append(line.text)

    def _close(self) -> None:
        if self.current is not None and self.current.text:
            self.units.append(self.current)
        self.current = None

    def _continue(self, line: _Line) -> None:
        unit = self.current
        if (
            unit is None
            or (unit.kind == "text" and unit.page_index != line.page)
            or line.page - unit.page_index > SPAN_PAGES.get(unit.kind, 0)
        ):  # past what a clause spans: numbering the splitter could not follow
            self._open("text", "", self._heading_path(99), line)
            return
        unit.lines.append(line.text)
        if line.page == unit.page_index:
            unit.end = line.end

    def _appendix(self, line: _Line) -> bool:
        """«Приложение А» opens an appendix: its clauses («А.1.2») go under it."""
        match = _APPENDIX.match(line.text)
        if match is None or not _heading_like(line.text):
            return False
        self._close()
        self.headings = {1: (f"Приложение {match.group(1)}", match.group(2).strip())}
        return True

    def _table(self, line: _Line) -> bool:
        match = _TABLE.match(line.text)
        if match is None:
            return False
        self._open("table", match.group(1), self._heading_path(99), line)
        return True

    def _numbered(self, line: _Line, index: int) -> bool:
        match = _NUMBERED.match(line.text)
        if match is None:
            return False
        number, rest = match.group(1), match.group(2).strip()
        key = number_key(number)
        depth = number.count(".") + 1
        if depth == 1:  # «10 Конструктивные требования»: a section heading
            return self._section(number, rest, key[1], line)
        heading = self._is_heading(number, rest, index)
        if key <= self.last_clause or not (heading or self._follows(key)):
            return False  # a wrapped cross-reference or value, not a new clause
        if not heading and self._skipped_over(key, index):
            return False  # «…согласно / 9.2. Толщину…» where 6.2.11 comes next
        if self.last_clause and key[0] != self.last_clause[0] and 1 not in self.headings:
            self.headings = {}  # an appendix without its «Приложение» line
        elif self.last_clause and key[0] != self.last_clause[0]:
            self.headings = {d: h for d, h in self.headings.items() if d == 1}
        self.last_clause = key
        if heading:
            self._close()
            self._set_heading(depth, number, rest)
            return True
        self._open("clause", number, self._heading_path(depth), line)
        return True

    def _section(self, number: str, rest: str, value: int, line: _Line) -> bool:
        if not _TITLE_WORD.match(rest) or not _heading_like(rest):
            return False
        if value <= self.last_section:
            return False
        self._close()
        self.last_section = value
        self.last_clause = number_key(number)
        self._set_heading(1, number, rest)
        return True

    def _skipped_over(self, key: tuple[int, ...], index: int) -> bool:
        """Whether the next numbered line continues the last clause's numbering and not
        `key`'s: `key` jumped away from it (a reference wrapped to a line's start)."""
        if not self.last_clause or key[:2] == self.last_clause[:2]:  # the same section
            return False
        for line in self.lines[index + 1 : index + 1 + LOOKAHEAD_LINES]:
            match = _NUMBERED.match(line.text)
            if match is None or "." not in match.group(1):
                continue
            following = number_key(match.group(1))
            if following > self.last_clause and self._follows(following):
                return not self._follows(following, after=key)
        return False

    def _follows(self, key: tuple[int, ...], after: tuple[int, ...] | None = None) -> bool:
        """Whether `key` can be the next clause after the last (or `after`): one level's
        number a little past the last's (a gap of a clause or two is tolerated), the levels
        below it starting again (10.3.4 → 10.3.5, 10.4, 10.4.1, 11.1.1; not 12.5 or
        10.3.40)."""
        last = self.last_clause if after is None else after
        if not last:
            return True
        if key[0] != last[0]:
            return key[0] > last[0] and all(part <= 2 for part in key[1:])
        for level in range(1, len(key)):
            if key[:level] != last[:level]:
                return False
            if level < len(last) and key[level] != last[level]:
                step = key[level] - last[level]
                return 0 < step <= SECTION_STEP_MAX and all(p <= 2 for p in key[level + 1 :])
        return len(key) > len(last) and all(part <= 2 for part in key[len(last) :])

    def _is_heading(self, number: str, rest: str, index: int) -> bool:
        """A short title, not a sentence, followed by its first clause («10.3 …» then
        «10.3.1 …») or a table; a wrapped clause followed by the next clause is not."""
        if not _heading_like(rest):
            return False
        following = self.lines[index + 1].text if index + 1 < len(self.lines) else ""
        child = _NUMBERED.match(following)
        return bool((child and child.group(1).startswith(f"{number}.")) or _TABLE.match(following))

    def _set_heading(self, depth: int, number: str, title: str) -> None:
        self.headings = {d: h for d, h in self.headings.items() if d < depth}
        self.headings[depth] = (number, title)


def _heading_like(text: str) -> bool:
    """Short, not ending a sentence, not ending in a value (a table row «Глины 300»)."""
    return (
        len(text) <= HEADING_MAX_CHARS
        and not text.endswith((".", ":", ";", ","))
        and not (text[-1:].isdigit())
    )


def clauses_split(pages: list[str]) -> list[Clause]:
    """The clauses, tables and unnumbered text of a document whose pages' texts are
    `pages`, in order (see the module's docstring)."""
    skip = boilerplate_lines(pages)
    return _Splitter(_lines(pages, skip)).run()
