"""Reading a document's lines into its parts, as a person reading it does.

The numbering is followed as a sequence: a clause's number follows the last one's (a gap of
a clause or two tolerated); a section's is the next section's, and where it is not the very
next, or stands inside a table, what follows must bear it out (its own clauses come next, not
more of the section it would end). A number that does not fit — a cross-reference wrapped to a
line's start, a value, a table's numbered row, a preface item, a contents entry — stays text
of the part it stands in. A numbering that starts again at «1» and is borne out by what
follows, after only short parts, was a table of contents: those parts become front matter.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from normagpt.clauses.lines import Line
from normagpt.clauses.numbers import (
    SECTION_STEP_MAX,
    Caption,
    Numbered,
    appendix,
    bibliography,
    caption,
    continues_sentence,
    follows,
    letter_rank,
    numbered,
    title_like,
)

LOOKAHEAD_LINES = 60  # how far what follows a number is read to bear it out
SECTION_LOOKAHEAD_LINES = 3000  # how far a section's clause numbers are looked for
RESYNC_LINES = 200  # how far the numbers that bear out a numbering picked up again are looked for
SHORT_PART_LINES = 3  # a contents entry taken for a part holds no more lines than this
# the pages after its first a part runs on to: past that the text is kept page by page
SPAN_PAGES = {"clause": 3, "table": 12}
_TITLE_WORDS = ("(обязательное)", "(справочное)", "(рекомендуемое)", "(informative)")


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
    last_page: int = -1  # index of the page where it ends

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()

    @property
    def span(self) -> int:
        """How many pages after its first it runs on to."""
        return max(0, self.last_page - self.page_index)


@dataclass(frozen=True)
class Heading:
    number: str
    title: str
    page_index: int


@dataclass
class Structure:
    """What a document was read into: its units and the headings above them."""

    units: list[Clause]
    headings: list[Heading]


class Reader:
    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.units: list[Clause] = []
        self.headings: list[Heading] = []
        self.path: dict[int, tuple[str, str]] = {}  # depth → (number, title)
        self.last_clause: tuple[float, ...] = ()
        self.last_section = 0
        self.appendix = 0  # the rank of the appendix read (0: the main text)
        self.numbered = 0  # clauses read since the main text or the appendix began
        self.section_dot: bool | None = None  # sections written «8.» (None: none read yet)
        self.tentative = False  # the last section's heading was read in a table, no clause yet
        self.main: tuple[tuple[float, ...], dict[int, tuple[str, str]], int] = ((), {}, 0)
        self.current: Clause | None = None
        self.taken: set[int] = set()  # lines read with the one before them
        self.found = [None if x.toc or x.front else numbered(x.text) for x in lines]

    def run(self) -> Structure:
        for i, line in enumerate(self.lines):
            if i in self.taken:
                continue
            if line.toc or line.front:
                self._front(line)
            elif not self._opens(line, i):
                self._continue(line)
        self._close()
        for position, unit in enumerate(self.units):
            unit.position = position
        return Structure(self.units, self.headings)

    def _opens(self, line: Line, i: int) -> bool:
        found = self.found[i]
        if found is not None:
            return self._numbered(found, line, i)
        return self._appendix(line, i) or self._table(line) or self._bibliography(line)

    # the parts ------------------------------------------------------------------------

    def _numbered(self, found: Numbered, line: Line, i: int) -> bool:
        rest, taken = found.rest, []
        if not rest:  # «4.2» alone: the next line is its text
            following = self._next(i)
            if following is None or numbered(following.text) is not None:
                return False
            rest, taken = following.text, [i + 1]
        if found.depth == 1 and not found.key[0]:
            return self._section(found, rest, line, i, taken)
        return self._clause(found, rest, line, i, taken)

    def _section(self, found: Numbered, rest: str, line: Line, i: int, taken: list[int]) -> bool:
        """«10 Конструктивные требования»: a section's heading (see the module's docstring)."""
        title, taken = self._title(rest, i, taken)
        value = int(found.key[1])
        if not title_like(title) or (self.appendix and self.numbered):
            return False
        restart = value == 1 and self.last_section >= 1
        again = value == self.last_section and self.tentative  # a table's row was taken for it
        if not (restart or again) and value <= self.last_section:
            return self._section_again(found, title, line, i + len(taken), taken)
        strict = restart or value - self.last_section > 1 or not found.rest
        own = self._in_table or (self.section_dot is not None and found.dot != self.section_dot)
        if not self._borne_out(value, i + len(taken), strict=strict, own=own):
            return False
        if restart and not self._restart():
            return False
        self._close()
        self.taken.update(taken)
        self.tentative = self._in_table  # a table's numbered row may be taken for a section
        self.last_section, self.last_clause, self.appendix = value, (0, value), 0
        self.section_dot = found.dot
        self._set_heading(1, found.number, title, line)
        return True

    def _section_again(
        self, found: Numbered, title: str, line: Line, i: int, taken: list[int]
    ) -> bool:
        """A section's heading below the last read: the numbering picks up there when it lost
        its way (a numbered list or table rows read as sections; see `_resync`)."""
        value = int(found.key[1])
        if self._in_table or not found.rest or not self._resync((0, value), i):
            return False
        self._close()
        self.taken.update(taken)
        self.tentative, self.section_dot = False, found.dot
        self.last_section, self.last_clause, self.appendix = value, (0, value), 0
        self._set_heading(1, found.number, title, line)
        return True

    def _clause(self, found: Numbered, rest: str, line: Line, i: int, taken: list[int]) -> bool:
        key = found.key
        if self.appendix and not key[0] and not self.numbered:
            self._leave_appendix()  # it holds no clause: a contents entry was taken for it
        if key[0] != self.appendix and (key[0] == 0 or key[0] < self.appendix):
            return False  # the main text's numbers in an appendix: references, rows
        heading = title_like(rest) and self._heads(found.number, i + len(taken))
        if not self._fits(found, rest, heading, i + len(taken)):
            return False
        self.taken.update(taken)
        if key[0] and key[0] != self.appendix:
            self.path, self.appendix = {}, int(key[0])  # an appendix without its title line
        self.last_clause, self.tentative = key, False
        self.numbered += 1
        if not key[0]:
            self.last_section = max(self.last_section, int(key[1]))
        text = f"{found.number} {rest}" if taken else line.text
        if heading:
            self._close()
            self._set_heading(found.depth, found.number, rest, line)
            return True
        # a clause ends the subsections below its level read before it («7.5.2 Текст» after
        # «7.5.1 Заголовок»: 7.5.2.1 is not under 7.5.1)
        self.path = {d: h for d, h in self.path.items() if d < found.depth}
        self._open("clause", found.number, self._heading_path(found.depth), line, text)
        self._extend(taken)
        return True

    def _fits(self, found: Numbered, rest: str, heading: bool, i: int) -> bool:
        """Whether clause `found` (a heading when `heading`) is the next in the numbering, or
        picks up a numbering that lost its way."""
        key, last = found.key, self.last_clause
        if key <= last or not (heading or self._follows_last(key, i)):
            return bool(found.rest) and self._resync(key, i)
        if rest[:1].islower() and not follows(key, last, most=1):
            return bool(found.rest) and self._resync(key, i)  # «…по / 4.2.3 настоящего»
        return heading or not (self._skipped_over(key, i) or self._told_later(found, i))

    def _resync(self, key: tuple[float, ...], i: int) -> bool:
        """Whether `key` picks the numbering up where it lost its way (text lost over a gap
        wider than SECTION_STEP_MAX, a number taken in error before): the next two clause
        numbers ahead follow it one by one, and none follows the last one read. Back in a
        table only within the section read (its rows «1.1 …», «1.2 …» number themselves;
        «7.4.6 Требования …» after an OCR's «7.45.12» goes on section 7), never on numbers
        alone on their lines (a table's column of clause numbers «8.22» / «8.23»)."""
        last = self.last_clause
        if (
            not last
            or key[0] != last[0]
            or (key <= last and self._in_table and key[:2] != last[:2])
        ):
            return False
        chain = [key]
        for _, found in self._ahead(i, RESYNC_LINES):
            if found.depth < 2 or found.key[0] != key[0] or not found.rest:
                continue
            if found.key > chain[-1] and follows(found.key, chain[-1], most=1):
                chain.append(found.key)
                if len(chain) == 3:
                    return True
            elif found.key > last and follows(found.key, last):
                return False
        return False

    def _appendix(self, line: Line, i: int) -> bool:
        """«Приложение А (обязательное)» opens an appendix: its clauses («А.1.2») go under it."""
        found = appendix(line.text)
        if found is None:
            return False
        letter, rest = found
        rank = letter_rank(letter)
        if rank <= self.appendix and self.numbered:
            return False  # a reference; an appendix taken from the contents holds no clause
        title, taken = rest, list[int]()
        for j in range(i + 1, min(i + 4, len(self.lines))):  # «(обязательное)», its title
            if not title.replace("(", "").strip() or title.endswith(_TITLE_WORDS):
                following = self.lines[j]
                if not title_like(following.text) and not following.text.startswith("("):
                    break
                title, taken = f"{title} {following.text}".strip(), [*taken, j]
        self._close()
        self.taken.update(taken)
        if not self.appendix:
            self.main = (self.last_clause, self.path, self.numbered)
        self.appendix, self.last_clause, self.numbered = rank, (rank,), 0
        self.path = {}
        self._set_heading(1, f"Приложение {letter}", title, line)
        return True

    def _table(self, line: Line) -> bool:
        found = caption(line.text)
        if found is None:
            return False
        if found.continued and self._table_goes_on(found):
            return False  # the line goes on with the table it continues
        self._open("table", found.number, self._heading_path(99), line, line.text)
        return True

    def _bibliography(self, line: Line) -> bool:
        if not bibliography(line.text):
            return False
        self._close()
        self.path = {1: ("", line.text)}
        return True

    # reading ahead -----------------------------------------------------------------------

    def _next(self, i: int) -> Line | None:
        return self.lines[i + 1] if i + 1 < len(self.lines) else None

    def _ahead(self, i: int, most: int = LOOKAHEAD_LINES) -> Iterator[tuple[int, Numbered]]:
        """The numbered lines after line `i`, within `most` lines, contents entries and the
        preface left out."""
        for j in range(i + 1, min(i + 1 + most, len(self.lines))):
            if (found := self.found[j]) is not None:
                yield j, found

    def _title(self, rest: str, i: int, taken: list[int]) -> tuple[str, list[int]]:
        """A section's title, with its wrapped second line («… деформативность /
        конструкций»)."""
        j = i + len(taken) + 1
        if j < len(self.lines) and self.lines[j].text[:1].islower():
            joined = f"{rest} {self.lines[j].text}"
            if title_like(joined) and not title_like(rest):
                return joined, [*taken, j]
        return rest, taken

    def _borne_out(self, value: int, i: int, *, strict: bool, own: bool = False) -> bool:
        """Whether what follows section `value`'s heading bears it out: the first clause
        numbers ahead are its own (or, a section or two missing, a section's just after), not
        the current section's going on; with none ahead, when `strict` (a section far past
        the last, a number alone on its line, a line in a table), the next section's heading
        follows. `own`: only clause numbers bear it out (a line in a table, a heading written
        unlike the sections before it, «8.» after «7»: a table's numbered row)."""
        far = value - self.last_section > SECTION_STEP_MAX
        if own and self._goes_on(i):
            return False  # the section's own numbering comes back: the table numbers its rows
        nxt = None
        for j, found in self._ahead(i, SECTION_LOOKAHEAD_LINES):
            if found.key[0]:
                continue
            section = int(found.key[1])
            if found.depth > 1 and section == self.last_section and found.key > self.last_clause:
                return False  # the current section goes on
            if found.depth > 1 and self.last_section < section < value:
                return False  # a section between comes first
            if found.depth > 1 and section >= value:
                return section == value or (not far and section <= value + SECTION_STEP_MAX)
            if found.depth == 1 and nxt is None and j - i <= LOOKAHEAD_LINES:
                nxt = section if title_like(found.rest) else None
        return not (strict or far or own) or (not own and nxt == value + 1)

    def _goes_on(self, i: int) -> bool:
        """Whether the current section's numbering goes on after line `i`: a clause number
        that follows the last one read stands ahead."""
        last = self.last_clause
        return len(last) > 1 and any(
            found.key[:2] == last[:2] and found.key > last and follows(found.key, last)
            for _, found in self._ahead(i, SECTION_LOOKAHEAD_LINES)
        )

    def _heads(self, number: str, i: int) -> bool:
        """Whether the line after line `i` opens `number`'s first clause or a table: the line
        `number` opens is a heading, not a clause."""
        following = self._next(i)
        if following is None:
            return False
        child = numbered(following.text)
        if child is not None:
            return child.number.startswith(f"{number}.")
        return caption(following.text) is not None

    def _follows_last(self, key: tuple[float, ...], i: int) -> bool:
        """Whether `key` follows the last number read; the first one read (an excerpt of a
        document begins anywhere), or an appendix's first without its title line, when the
        next clause number ahead follows it."""
        if (self.last_clause and key[0] == self.last_clause[0]) or follows(key, ()):
            return follows(key, self.last_clause)
        ahead = next((found for _, found in self._ahead(i) if found.depth > 1), None)
        return ahead is not None and follows(ahead.key, key)

    def _skipped_over(self, key: tuple[float, ...], i: int) -> bool:
        """Whether `key`, going on to another section, skips numbers that come later: one
        between the last clause's and `key` that follows the last stands ahead (a reference
        wrapped to a line's start, a table's column of clause numbers, not the next clause)."""
        last = self.last_clause
        if not last or key[:2] == last[:2]:
            return False
        return any(
            last < found.key < key and follows(found.key, last)
            for _, found in self._ahead(i, SECTION_LOOKAHEAD_LINES)
            if found.depth > 1
        )

    def _told_later(self, found: Numbered, i: int) -> bool:
        """Whether a number read as a term is a reference wrapped to a line's start: its
        words go on a sentence («5.2 и 5.3, второй группы …», «4.2.3 настоящего свода»), or
        the number opens a clause below."""
        if not found.rest[:1].islower():
            return False
        if continues_sentence(found.rest):
            return True
        return any(
            later.number == found.number and not later.rest[:1].islower()
            for _, later in self._ahead(i, SECTION_LOOKAHEAD_LINES)
        )

    @property
    def _in_table(self) -> bool:
        return self.current is not None and self.current.kind == "table"

    def _table_goes_on(self, found: Caption) -> bool:
        unit = self.current
        if unit is None and self.units and self.units[-1].kind == "table":
            unit = self.units[-1]
            self.units.pop()
            self.current = unit
        return unit is not None and unit.kind == "table" and unit.number == found.number

    def _leave_appendix(self) -> None:
        """Back to the main text where it was before an appendix that holds no clause."""
        self.appendix = 0
        self.last_clause, self.path, self.numbered = self.main

    def _restart(self) -> bool:
        """A numbering starting again at 1 after only short parts: they were contents
        entries, kept as front matter; numbering starts again."""
        if any(len(u.lines) > SHORT_PART_LINES for u in self.units if u.kind != "text"):
            return False
        for unit in self.units:
            unit.kind, unit.number = "text", ""
        if self.current is not None:
            self.current.kind, self.current.number = "text", ""
        self.last_clause, self.path = (), {}
        return True

    # units ----------------------------------------------------------------------------------

    def _heading_path(self, depth: int) -> str:
        return " › ".join(
            f"{n} {t}".strip() for d, (n, t) in sorted(self.path.items()) if d < depth
        )

    def _set_heading(self, depth: int, number: str, title: str, line: Line) -> None:
        self.path = {d: h for d, h in self.path.items() if d < depth}
        self.path[depth] = (number, title)
        self.headings.append(Heading(number, title, line.page))

    def _open(self, kind: str, number: str, heading: str, line: Line, text: str) -> None:
        self._close()
        self.current = Clause(kind, number, heading, line.page, line.start, line.end, 0)
        self.current.lines.append(text)
        self.current.last_page = line.page

    def _extend(self, taken: list[int]) -> None:
        """The lines read with the unit's first line: its span ends with them."""
        unit = self.current
        for j in taken:
            line = self.lines[j]
            if unit is not None and line.page == unit.page_index:
                unit.end = line.end

    def _close(self) -> None:
        if self.current is not None and self.current.text:
            self.units.append(self.current)
        self.current = None

    def _front(self, line: Line) -> None:
        """A line of the contents, the preface or an amendment bound in: text of its own,
        page by page, under no heading; it never goes on with a numbered part."""
        unit = self.current
        if unit is None or unit.kind != "text" or unit.heading or unit.page_index != line.page:
            self._open("text", "", "", line, line.text)
            return
        unit.lines.append(line.text)
        unit.end = line.end

    def _continue(self, line: Line) -> None:
        unit = self.current
        if (
            unit is None
            or (unit.kind == "text" and unit.page_index != line.page)
            or line.page - unit.page_index > SPAN_PAGES.get(unit.kind, 0)
        ):  # past what a part spans: numbering the reader could not follow
            self._open("text", "", self._heading_path(99), line, line.text)
            return
        unit.lines.append(line.text)
        unit.last_page = line.page
        if line.page == unit.page_index:
            unit.end = line.end
