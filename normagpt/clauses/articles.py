"""Reading a law, which is numbered by its articles, not by clauses.

A code or a federal law («Жилищный кодекс Российской Федерации», «Федеральный закон
№ 123-ФЗ») is divided into parts («РАЗДЕЛ I», «Раздел II. …») and chapters («Глава 4. …»,
«Глава 2.1. …»), and numbered by articles: «Статья 26. Основание проведения …», «Статья
15.1. …», «Статья 55.16-1. …», the heading set whole on a line, or word by word on lines of
their own («Статья» / «8.» / «Полномочия» / «органов» …, a justified line of a PDF). An
article's parts «1.», «2.» and items «1)», «2)» are its text, with the notes on its edition
(«(В редакции Федерального закона …)», «(Статья введена …)»); a repealed article («Статья 7.
Утратила силу», «Статья 139.» / «(Утратила силу …)») is an article still, so that a citation
of it finds it. One clause per article, numbered as it is cited: «ст. 26» (`article_number`);
its heading the chapters above it and its own title. A law is known by its lines: at least
ARTICLES_MIN distinct articles open a line. What stands before the first article (the title
block, the list of laws that amended it) is unnumbered text page by page; the running header a
legal database prints on every page («Документ предоставлен КонсультантПлюс», «Страница 38 из
420») is left out.
"""

from __future__ import annotations

import re
from collections import Counter

from normagpt.clauses.lines import Line, blank
from normagpt.clauses.numbers import caption
from normagpt.clauses.reader import Clause, Heading, Structure
from normagpt.parsing import ARTICLE_NUMBER, article_number

ARTICLES_MIN = 10  # distinct articles opening a line: a law
HEADER_LINES = 10  # where a page's running header stands (its first lines)
HEADER_SHARE = 0.5  # of the pages whose first lines hold it
TITLE_LINES = 40  # lines a heading set word by word runs on to at most
ARTICLE_STEP_MAX = 10  # an article's number at most this far past the last one's

# as written: «9110» where a superscript was flattened (`_LawReader._superscript`)
_WRITTEN = rf"\d{{4}}|{ARTICLE_NUMBER}"
_ARTICLE = re.compile(rf"^Статья\s+(?P<number>{_WRITTEN})(?:\.|(?=\s|$))\s*(?P<rest>.*)$")
_NUMBER_ALONE = re.compile(rf"^(?P<number>{_WRITTEN})\.?\s*(?P<rest>.*)$")
_DIVISION = re.compile(
    r"^(?P<kind>Глава|ГЛАВА|Раздел|РАЗДЕЛ)\s+(?P<number>[IVXLC]{1,6}|\d{1,2}(?:\.\d{1,2})?)"
    r"(?:\.|(?=\s|$))\s*(?P<rest>.*)$"
)
# what opens an article's text: a part «1. …», an item «1) …», «14.2) …», a note «(…)»
_OPENS_TEXT = re.compile(r"^(?:\d{1,3}(?:\.\d{1,2})*[.)](?:\s|$)|\()")
_REST_START = re.compile(r"^(?:$|[(«\"A-ZА-ЯЁ])")
# the words written with a capital inside a title: a line of a title may open with them
_NAMES = ("Российск", "Федерац", "Федеральн", "Правительств", "Президент", "Кодекс", "Москв")


def law_like(lines: list[Line]) -> bool:
    """Whether the document is a law numbered by its articles (see the module's docstring)."""
    found = set()
    for i, line in enumerate(lines):
        if line.text.startswith("Статья") and (heading := _article(lines, i)) is not None:
            found.add(heading[0])
            if len(found) >= ARTICLES_MIN:
                return True
    return False


def law_read(lines: list[Line]) -> Structure:
    """A law's articles, tables and unnumbered text, and its parts and chapters as headings."""
    return _LawReader(_header_left_out(lines)).run()


def _header_left_out(lines: list[Line]) -> list[Line]:
    """`lines` without a running header or footer: a line (digits blanked) among the first or
    last HEADER_LINES of a page on at least HEADER_SHARE of the pages."""
    by_page: dict[int, list[str]] = {}
    for line in lines:
        by_page.setdefault(line.page, []).append(blank(line.text))
    edges: Counter[str] = Counter()
    for texts in by_page.values():
        edges.update(set(texts[:HEADER_LINES] + texts[-HEADER_LINES:]))
    least = max(2, HEADER_SHARE * len(by_page))
    header = {text for text, count in edges.items() if count >= least and text != "#"}
    return [line for line in lines if blank(line.text) not in header]


def _article(lines: list[Line], i: int) -> tuple[str, str, list[int]] | None:
    """(number, the title's first words, the lines read with line `i`) of an article's heading
    opening line `i`: «Статья 26. Основание …», «Статья» / «8.» / «Полномочия» …"""
    text = lines[i].text
    if text == "Статья" and i + 1 < len(lines):
        match = _NUMBER_ALONE.match(lines[i + 1].text)
        taken = [i + 1]
    else:
        match, taken = _ARTICLE.match(text), []
    if match is None or not _REST_START.match(match["rest"]):
        return None
    return match["number"], match["rest"].strip(), taken


def _division(text: str) -> tuple[str, str] | None:
    """(«Глава 4», the title's first words) of a line opening a part or a chapter."""
    match = _DIVISION.match(text)
    if match is None or not _REST_START.match(match["rest"]):
        return None
    return f"{match['kind'].capitalize()} {match['number']}", match["rest"].strip()


class _LawReader:
    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.units: list[Clause] = []
        self.headings: list[Heading] = []
        self.path: dict[int, tuple[str, str]] = {}  # 1: a part, 2: a chapter
        self.current: Clause | None = None
        self.taken: set[int] = set()
        self.last = ""  # the number of the last article read

    def run(self) -> Structure:
        for i, line in enumerate(self.lines):
            if i in self.taken:
                continue
            if not (self._opens_article(i) or self._opens_division(i) or self._table(line)):
                self._continue(line)
        self._close()
        for position, unit in enumerate(self.units):
            unit.position = position
        return Structure(self.units, self.headings)

    def _opens_article(self, i: int) -> bool:
        found = _article(self.lines, i) if self.lines[i].text.startswith("Статья") else None
        if found is None:
            return False
        number, title, taken = found
        number = self._superscript(number)
        title, more = self._title(title, i + len(taken))
        taken += more
        self.taken.update(taken)
        line = self.lines[i]
        heading = " ".join(["Статья", f"{number}.", title]).strip()
        path = " › ".join([*self._path(), heading])
        self._open("clause", article_number(number), path, line)
        for j in taken:
            self._add(self.lines[j])
        self.headings.append(Heading(article_number(number), title, line.page))
        return True

    def _superscript(self, number: str) -> str:
        """An article added between two, numbered with a superscript the text layer set on
        the line («Статья 91¹⁰» read «Статья 9110»): after article 91, «9110» is «91.10»
        when it does not follow 91 as a number does."""
        last, self.last = self.last, number
        base = last.split(".")[0].split("-")[0]
        if not (base and number.isdigit() and number.startswith(base)):
            return number
        rest = number[len(base) :]
        if rest and rest[0] != "0" and int(number) - int(base) > ARTICLE_STEP_MAX:
            self.last = number = f"{base}.{rest}"
        return number

    def _opens_division(self, i: int) -> bool:
        found = _division(self.lines[i].text)
        if found is None:
            return False
        number, title = found
        title, taken = self._title(title, i, article=False)
        self._close()
        self.taken.update(taken)
        depth = 1 if number.startswith("Раздел") else 2
        self.path = {d: h for d, h in self.path.items() if d < depth}
        self.path[depth] = (number, title)
        self.headings.append(Heading(number, title, self.lines[i].page))
        return True

    def _title(self, title: str, i: int, *, article: bool = True) -> tuple[str, list[int]]:
        """A heading's title from line `i` on, and the lines it was read from after it: the
        lines up to a blank line when one comes before the text does (a title set word by
        word), else those going on in lower case («… переустройства и (или)» /
        «перепланировки помещения …»)."""
        taken: list[int] = []
        block = self._block_end(i)
        for j in range(i + 1, min(i + TITLE_LINES, len(self.lines))):
            line = self.lines[j]
            if line.gap or _OPENS_TEXT.match(line.text) or self._heading_at(j):
                break
            goes_on = line.text[:1].islower() or not title
            if j < block:  # a title set apart: an article's goes on with a name («… субъекта
                # Российской» / «Федерации»; its first paragraph may stand before the blank
                # line), a chapter's with anything («Глава 2. Объекты жилищных прав.» /
                # «Жилищный фонд»)
                goes_on = goes_on or not article or line.text.startswith(_NAMES)
            capitals = title.isupper() and line.text.isupper()  # «Глава 3. ПОКАЗАТЕЛИ …»
            if not (goes_on or capitals):
                break
            title, taken = f"{title} {line.text}".strip(), [*taken, j]
        return title, taken

    def _block_end(self, i: int) -> int:
        """The index of the first line after a heading on line `i` set apart by a blank line
        (or by a note on its edition followed by one: «(введена …)»), or `i + 1` where no
        blank line comes before the text, or a sentence ends before it (an article of one
        paragraph: «Пользование жилым помещением … осуществляется …»)."""
        end = min(i + TITLE_LINES, len(self.lines))
        for j in range(i + 1, end):
            line = self.lines[j]
            if line.gap:
                return j
            if line.text.startswith("(") and any(x.gap for x in self.lines[j + 1 : j + 3]):
                return j
            if _OPENS_TEXT.match(line.text) or self._heading_at(j) or line.text[-1] in ".;:":
                break
        return i + 1

    def _heading_at(self, j: int) -> bool:
        text = self.lines[j].text
        return (text.startswith("Статья") and _article(self.lines, j) is not None) or bool(
            _division(text)
        )

    def _path(self) -> list[str]:
        return [f"{n}. {t}".strip() for _, (n, t) in sorted(self.path.items())]

    def _table(self, line: Line) -> bool:
        found = caption(line.text)
        if found is None:
            return False
        unit = self.current
        if found.continued and unit is not None and unit.kind == "table":
            return False  # «Продолжение таблицы 2» goes on with it
        self._open("table", found.number, " › ".join(self._path()), line)
        return True

    def _open(self, kind: str, number: str, heading: str, line: Line) -> None:
        self._close()
        self.current = Clause(kind, number, heading, line.page, line.start, line.end, 0)
        self.current.lines.append(line.text)
        self.current.last_page = line.page

    def _add(self, line: Line) -> None:
        unit = self.current
        if unit is None:
            return
        unit.lines.append(line.text)
        unit.last_page = line.page
        if line.page == unit.page_index:
            unit.end = line.end

    def _continue(self, line: Line) -> None:
        """A line of the article or table read, else of unnumbered text page by page."""
        unit = self.current
        if unit is None or (unit.kind == "text" and unit.page_index != line.page):
            self._open("text", "", " › ".join(self._path()), line)
            return
        self._add(line)

    def _close(self) -> None:
        if self.current is not None and self.current.text:
            self.units.append(self.current)
        self.current = None
