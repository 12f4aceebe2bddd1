"""A table read as a reader reads it (pure): its rows, each with its values, its label and
the group label and heading above it; a row's cells under the columns' heads, one a column; a
table laid across, each value under the condition above it; its notes read as a clause."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import replace

from normagpt import claims as c
from normagpt.conditions.segments import Segment, clause_segments
from normagpt.conditions.words import (
    PREPOSITIONS,
    bare_text,
    marks_of,
    stems_of,
    value_fits,
    values_located,
)

_NOTES = re.compile(r"^\s*(?:П\s?р\s?и\s?м\s?е\s?ч\s?а\s?н\s?и|\*)", re.I)
_CONTINUED = re.compile(r"^\s*(?:Окончание|Продолжение)\s+табл", re.I)
_ROW = re.compile(r"^(?P<label>.*?\S)\s{2,}(?P<cells>\S.*)$")  # «Песок   1:1,5»


def table_segments(text: str, dimension: str) -> list[Segment]:
    """A table's rows with their values (a cell without a unit has the heading's): a row's
    label is its condition; the group label above it («А. Из помещений …», «Марши лестниц,
    ведущие на жилые этажи:») and the table's heading are its context. Under column heads
    («между выходами», «в тупиковой части»; «до 2», «более 2») a row's last cells are one a
    column, each given for its row and its column. Its notes are read as a clause."""
    title, *lines = text.splitlines() or [""]
    notes = next((i for i, line in enumerate(lines) if _NOTES.match(line)), len(lines))
    body = [line for line in lines[:notes] if not _CONTINUED.match(line)]
    blocks = _blocks(body, dimension)
    heading = stems_of(title)
    columns = _columns(body, blocks)
    rows: list[Segment] = []
    group: list[str] = []
    for index, (labels, cells) in enumerate(blocks):
        *above, label = labels or [""]
        if index == 0:  # the columns' heading, then perhaps the first group's label
            split = _heading_end(above)
            heading |= stems_of(" ".join(above[:split]))
            above = [] if columns else above[split:]
        group = above or group
        if cells:
            rows += _row_cells(label, cells, group, heading, columns)
    rows = _transposed(blocks, heading) or rows
    return rows + clause_segments("\n".join(lines[notes:]), dimension)


def _transposed(blocks: list[tuple[list[str], Cells]], heading: frozenset[str]) -> list[Segment]:
    """A table laid across: a row of conditions over a row of values, each naming its unit
    («Диаметр трубопровода, мм: 50, 100, 150 и более» over «Длина выпуска …, м: 8, 12,
    15»): each value is given for the cell above it. [] for any other table."""
    rows = [(labels, cells) for labels, cells in blocks if cells]
    if len(rows) != 2 or len(rows[0][1]) != len(rows[1][1]) or len(rows[1][1]) < 2:
        return []
    if not (rows[0][0] and rows[1][0]):
        return []
    (top, conditions), (label, cells) = (rows[0][0][-1], rows[0][1]), (rows[1][0][-1], rows[1][1])
    if not (_names_unit(top) and _names_unit(label) and all(conditions) and all(cells)):
        return []
    out = [_row(top, tuple(v for cell in conditions for v in cell), [], heading)]
    for above, cell in zip(conditions, cells, strict=True):
        marks = frozenset(f"#{v.number:g}" for v in above)
        shown = f"{top} {above[0].text} › {label}"
        out.append(Segment(cell, stems_of(label) | marks, heading | stems_of(top), shown))
    return out


Cells = list[tuple[c.Value, ...]]  # a row's cells: the values of each line


def _row_cells(
    label: str, cells: Cells, group: list[str], heading: frozenset[str], columns: list[str]
) -> list[Segment]:
    """A row as segments: one for each column's cell when the row has a cell for every
    column (its last cells), else one for the whole row."""
    values = tuple(v for cell in cells for v in cell)
    row = _row(label, values, group, heading)
    if not columns or len(cells) < len(columns) or not all(cells[-len(columns) :]):
        return [row]
    first = cells[: len(cells) - len(columns)]
    out = [replace(row, values=tuple(v for cell in first for v in cell))] if any(first) else []
    for head, cell in zip(columns, cells[-len(columns) :], strict=True):
        own = row.own | stems_of(head) | marks_of(head)
        out.append(replace(row, values=cell, own=own, text=f"{row.text} › {head}"))
    return out


def _columns(body: list[str], blocks: list[tuple[list[str], Cells]]) -> list[str]:
    """The heads of the value columns: the heading's lines after the one naming the unit
    (and the words it runs on with: «…, л (м3), при» / «размещении») down to the first row's
    label (a group's label, «Марши лестниц, ведущие на жилые этажи:», ends them), one a
    line, joined as a label's lines join or under a head spanning them, when there are as
    many as a row's cells. [] when the table has no such heads, or heads repeated under
    others (a second level of heads, not read)."""
    width = _width(blocks)
    if width < 2 or not blocks or not blocks[0][0]:
        return []
    first = next((i for i, line in enumerate(body) if _cells_only(line)), len(body))
    raw = _label_lines_cut(body[:first], blocks[0][0][-1])
    named = [i for i, line in enumerate(raw) if _names_unit(line)]
    if named:
        at = named[-1] + 1
        while at < len(raw) and re.search(r"(?:\b(?:при|для|в|на|по)|[,-])\s*$", raw[at - 1]):
            at += 1
        tail = list(itertools.takewhile(lambda line: not _GROUP.search(line), raw[at:]))
        below = [line.strip() for line in body[at:first]]
        if len(set(below)) < len(below):  # heads repeated under heads: a second level, unread
            return []
        heads = (tail, _joined(tail), _spanned(tail))
        return next((h for h in heads if len(h) == width and _alike(h)), [])
    return []


def _alike(heads: list[str]) -> bool:
    """Whether the heads open alike, as heads of one kind do: all with a number, a small
    letter or a capital («до 2» / «более 2»; not «Грунты насыпи» / «До 12» / «До 6», a label
    column's head among them)."""
    kinds = {"digit" if h[:1].isdigit() else "lower" if h[:1].islower() else "upper" for h in heads}
    numbers = {bool(re.search(r"\d", h)) for h in heads}
    return len(kinds) == 1 and len(numbers) == 1


def _width(blocks: list[tuple[list[str], Cells]]) -> int:
    """The number of cells most rows have (0 when no row has any)."""
    counts = Counter(len(cells) for _, cells in blocks[1:] if cells)
    return counts.most_common(1)[0][0] if counts else 0


def _label_lines_cut(lines: list[str], label: str) -> list[str]:
    """`lines` without the last ones, which make up the row's `label`."""
    want, got = re.sub(r"\W", "", label), ""
    for i in range(len(lines) - 1, -1, -1):
        got = re.sub(r"\W", "", lines[i]) + got
        if len(got) >= len(want):
            return lines[:i]
    return []


def _joined(lines: list[str]) -> list[str]:
    """Heads split over lines, joined: a line opening with a lower-case word (not a
    preposition) or a number goes on with the one before («Застройка зданиями высотой» /
    «3 этажа и выше»)."""
    return [" ".join(group) for group in _joined_groups(lines)]


def _spanned(lines: list[str]) -> list[str]:
    """Heads under a head spanning them: a line followed by two or more lower-case lines
    heads each of them («Допускаемые на трудных участках местности» / «пересеченной» /
    «горной»)."""
    out: list[str] = []
    for line in _joined_groups(lines):
        head, *subs = line
        out += [f"{head} {sub}" for sub in subs] if len(subs) >= 2 else [" ".join(line)]
    return out


def _joined_groups(lines: list[str]) -> list[list[str]]:
    """`lines` in groups: a line and the lower-case lines that go on with it."""
    groups: list[list[str]] = []
    for line in lines:
        opening = re.match(r"\s*([а-яё]+|\d)", line)
        if groups and opening and opening.group(1) not in PREPOSITIONS:
            groups[-1].append(line.strip())
        else:
            groups.append([line.strip()])
    return groups


def _cells_only(line: str) -> bool:
    return bool(values_located(line)) and not _letters(line)


_GROUP = re.compile(r"^\s*(?:[А-ЯЁA-Z]\.|\d+\.|[а-я]\))\s|:\s*$")  # «А. Из помещений…», «…этажи:»
# a column's heading names the unit of its cells: «Расстояние, м», «…, км, не более»
_UNIT_NAMED = re.compile(r"[,(]\s*([^\s,()]{1,8})\s*(?=[,)]|$)|\bне\s+(?:более|менее)\s*$", re.I)


def _heading_end(lines: list[str]) -> int:
    """Where the columns' heading ends among the first row's label lines: after the last
    line naming a unit, else before a group's label («А. Из помещений …»), else at the
    row's own label."""
    named = [i for i, line in enumerate(lines) if _names_unit(line)]
    if named:
        return named[-1] + 1
    return len(lines) - 1 if lines and _GROUP.match(lines[-1]) else len(lines)


def _names_unit(line: str) -> bool:
    for match in _UNIT_NAMED.finditer(line):
        if match.group(1) is None or any(v.unit for v in c.values_find(f"1 {match.group(1)}")):
            return True
    return False


def _blocks(lines: list[str], dimension: str) -> list[tuple[list[str], Cells]]:
    """The table's lines as blocks of label lines, each with the cells after it (the
    cells of a row read one a line, or a row on one line: «Песок   1:1,5»)."""
    blocks: list[tuple[list[str], Cells]] = [([], [])]
    for line in lines:
        found = values_located(line)
        fitting = tuple(v for _, _, v in found if value_fits(v, dimension, True))
        whole = _ROW.match(line)
        if found and not _letters(line):  # a line of cells
            blocks[-1][1].append(fitting)
            continue
        if blocks[-1][1]:
            blocks.append(([], []))
        if found and whole and not _letters(whole["cells"]):
            blocks[-1][0].append(whole["label"].strip())
            blocks[-1][1].append(fitting)
            continue
        _label_add(blocks[-1][0], line)
        # a cell closing the label's line: «обратная лопата +15 см» (its unit tells it from a
        # label's number, «От 5 до 12»; «50 м3/ч на» goes on to its condition)
        if found and found[-1][2].dimension == dimension and not line[found[-1][1] :].strip():
            blocks[-1][1].append(tuple(v for s, _, v in found if s == found[-1][0]))
    return blocks


def _label_add(labels: list[str], line: str) -> None:
    """A label line, joined to the one before when it goes on with it («…этажи,» /
    «технические подполья…», «бо-» / «лее 20 м2», «…основное общее» / «образование», «От 50
    до 60 ‰ (от 1:20 до» / «1:16,7) (включительно)»; not
    «при фронтальных формах занятий» under «Учебные помещения для групповых занятий»)."""
    last = labels[-1].rstrip() if labels else ":"
    lower = re.match(r"\s*([а-яё]+)", line)
    bracket = bool(labels) and (last.count("(") > last.count(")") or line.lstrip()[:1] == "(")
    if (
        last.endswith(("-", ","))
        or bracket
        or (lower and lower.group(1) not in PREPOSITIONS and not last.endswith(":"))
    ):
        joint = "" if last.endswith("-") else " "
        labels[-1] = f"{last.removesuffix('-')}{joint}{line.strip()}"
    else:
        labels.append(line.strip())


def _row(
    label: str, values: tuple[c.Value, ...], group: list[str], heading: frozenset[str]
) -> Segment:
    context = heading.union(*(stems_of(line) for line in group))
    shown = " ".join(label.split())
    if group and min(len(shown), len(group[-1])) < 40:
        shown = f"{' '.join(group[-1].split())[:80]} › {shown}"
    return Segment(values, stems_of(label) | marks_of(label), context, shown)


def _letters(text: str) -> bool:
    """Whether `text` holds words besides its values («630 или 1000», «8(10)*», «150 и более»
    hold none)."""
    bare = re.sub(r"\b(?:или|и)\b(?:\s+(?:более|менее|выше|ниже)\s*$)?", "", bare_text(text))
    return bool(re.search(r"[^\W\d_]", bare))
