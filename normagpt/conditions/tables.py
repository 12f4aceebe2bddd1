"""A table read as a reader reads it (pure): its rows, each with its values, its label and
the group label and heading above it; a row's cells under the columns' heads, one a column; a
table laid across, each value under the condition above it; its notes read as a clause."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from normagpt import claims as c
from normagpt.conditions.entities import Segment
from normagpt.conditions.segments import clause_segments
from normagpt.conditions.table_heads import (
    dehyphenated,
    heading_end,
    heading_heads,
    is_codes,
    is_group,
    lower_heads,
    number_heads,
)
from normagpt.conditions.table_lines import (
    NOTES,
    Block,
    Cells,
    cells_only,
    first_cells,
    is_row_number,
    label_lines_cut,
    read_blocks,
    read_body,
    row_segment,
    row_width,
)
from normagpt.conditions.table_numbered import (
    across_segments,
    numbered_segments,
    transposed_segments,
)
from normagpt.conditions.words import (
    marks_of,
    stems_of,
)


def table_segments(text: str, dimension: str) -> list[Segment]:
    """A table's rows with their values (a cell without a unit has the heading's): a row's
    label is its condition; the group label above it («А. Из помещений …», «Марши лестниц,
    ведущие на жилые этажи:») and the table's heading are its context. Under column heads
    («между выходами», «в тупиковой части»; «до 2», «более 2»; a row of numbers «4-5», «6-10»)
    a row's last cells are one a column, each given for its row and its column. A table whose
    rows open with a number (its head names the unit: «Наружный диаметр труб, мм») gives each
    row's cells for that number. Its notes are read as a clause."""
    title, *lines = text.splitlines() or [""]
    notes = next((i for i, line in enumerate(lines) if NOTES.match(line)), len(lines))
    body = read_body(lines[:notes])
    heading = stems_of(title)
    blocks = read_blocks(body, dimension)
    rows = (
        across_segments(body, heading, dimension)
        or numbered_segments(body, blocks, heading, dimension)
        or transposed_segments(blocks, heading)
        or _rows(body, blocks, heading, dimension)
    )
    return rows + clause_segments("\n".join(lines[notes:]), dimension)


def _rows(
    body: list[str], blocks: list[Block], heading: frozenset[str], dimension: str
) -> list[Segment]:
    """The rows of a table read down: each block's last label with its cells, under its
    group's label; the heading's lines, or a row of numbers under it, make the columns'
    heads."""
    width = row_width(blocks)
    heads = _number_heads(body, blocks, dimension, width)
    columns = heads or _columns(body, blocks, dimension)
    rows: list[Segment] = []
    group: list[str] = []
    for index, (labels, cells, lines) in enumerate(blocks):
        *above, label = labels or [""]
        while above and is_codes(above[-1]) and is_codes(label):  # «I, II, III» / «СО»
            label = f"{above.pop()} {label}"
        if index == 0:  # the columns' heading, then perhaps the first group's label
            split = heading_end(above)
            heading |= stems_of(" ".join(above[:split]))
            above = [] if columns else above[split:]
            if heads:  # its cells are the heads
                continue
        # a label line above a capitalised row label that is no group's: the cell of another
        # label column («Тавровое с двусторонними …» beside «Ручная дуговая …»), not a
        # group's label read on by its rows («Учебные помещения …» / «при групповых формах»)
        capital = re.match(r"[А-ЯЁ][а-яё]", label)
        own = [line for line in above if not is_group(line)][-1:] if capital else []
        group = above or group
        items = _items(lines, cells) if len(cells) >= 2 and not columns else []
        if items:  # «- на 1м длины» … «25 мм» / «75 мм»: its items' cells, in order
            rows += [_item(item, lead, cell, group, heading) for item, lead, cell in items]
        elif cells:
            rows += _row_cells(label, cells, group, heading, columns, own)
    return rows


def _items(lines: list[str], cells: Cells) -> list[tuple[str, str, tuple[c.Value, ...]]]:
    """A row that lists its conditions, a line each, under leads ending with «:», and then
    as many cells, one for each in order («10 Минимальная прочность …:» / «вертикальных …» /
    «горизонтальных и наклонных при пролете:» / «до 6 м» / «св. 6 м» over «0,5 МПа» / «70 %
    проектной» / «80 % проектной»): each item with its lead and its cell; [] when the row is
    no such list. The row begins at its number («10  Минимальная …»), lines above it being
    the columns of the row before."""
    numbered = [i for i, line in enumerate(lines) if re.match(r"\s*\d{1,2}\s+[А-ЯЁ]", line)]
    lines = dehyphenated(lines[numbered[-1] if numbered else 0 :])
    if len(lines) < 2 or not lines[0].rstrip().endswith(":"):
        return []
    items: list[tuple[str, str]] = []
    lead = ""
    for line in lines[1:]:
        if line.rstrip().endswith(":"):
            lead = line
        else:
            items.append((line, lead))
    if len(items) != len(cells):
        return []
    return [(item, lead, cell) for (item, lead), cell in zip(items, cells, strict=True) if cell]


def _item(
    item: str, lead: str, cell: tuple[c.Value, ...], group: list[str], heading: frozenset[str]
) -> Segment:
    own = stems_of(f"{lead} {item}") | marks_of(item)
    context = heading.union(*(stems_of(line) for line in group))
    return Segment(cell, own, context, f"{lead} {item}".strip(" -"))


def _number_heads(body: list[str], blocks: list[Block], dimension: str, width: int) -> list[str]:
    """The heads of the value columns when they are a row of numbers right under the
    heading, rising or falling, as many as a row's cells («4-5 | 6-10 | 11-16», «100 | 50 |
    25»); [] else."""
    if width < 2 or not blocks or not blocks[0][1] or not blocks[0][0]:
        return []
    if heading_end(blocks[0][0]) < len(blocks[0][0]):  # a row's label before the numbers
        return []
    first = first_cells(body, dimension)
    lines = []
    for index, line in enumerate(body[first:], first):
        if not cells_only(line) or is_row_number(line, body[index + 1 : index + 2], 1):
            break
        lines.append(line)
    heads = number_heads(lines)
    starts = [c.values_find(head)[0].number for head in heads]
    rising = all(a < b for a, b in itertools.pairwise(starts))
    falling = all(a > b for a, b in itertools.pairwise(starts))
    return heads if len(heads) == width and (rising or falling) else []


def _row_cells(
    label: str,
    cells: Cells,
    group: list[str],
    heading: frozenset[str],
    columns: list[str],
    own: list[str],
) -> list[Segment]:
    """A row as segments: one for each column's cell when the row has a cell for every
    column (its last cells), else one for the whole row. `own`: the label of another label
    column beside its label («Тавровое с двусторонними угловыми швами» beside «Ручная
    дуговая …»), its condition too."""
    values = tuple(v for cell in cells for v in cell)
    row = row_segment(label, values, group, heading)
    row = replace(row, own=row.own.union(*(stems_of(line) | marks_of(line) for line in own)))
    if not columns or len(cells) < len(columns) or not all(cells[-len(columns) :]):
        return [row]
    first = cells[: len(cells) - len(columns)]
    out = [replace(row, values=tuple(v for cell in first for v in cell))] if any(first) else []
    for head, cell in zip(columns, cells[-len(columns) :], strict=True):
        head_own = row.own | stems_of(head) | marks_of(head)
        out.append(replace(row, values=cell, own=head_own, text=f"{row.text} › {head}"))
    return out


def _columns(body: list[str], blocks: list[Block], dimension: str) -> list[str]:
    """The heads of the value columns (`table_heads.heading_heads`) in the heading's lines
    above the first row's label, as many as a row's cells; or as many as its last cells
    when the heads name fewer (a column of its own before them: «Расчетное количество
    одновременных пожаров» before «Застройка … не более 2 этажей», «… 3 этажа и выше»)."""
    width = row_width(blocks)
    if width < 2 or not blocks or not blocks[0][0]:
        return []
    raw = label_lines_cut(body[: first_cells(body, dimension)], blocks[0][0][-1])
    for fewer in range(width, 1, -1):
        heads = heading_heads(raw, fewer)
        if heads:
            return heads
    return lower_heads(raw, width)
