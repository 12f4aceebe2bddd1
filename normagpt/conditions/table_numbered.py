"""Tables read across their rows (pure): rows opening with a number under a head naming its
unit («Наружный диаметр труб, мм» / «15» / «1,5» / «2,0»), in groups or not; a table laid
across, its conditions over its values («I» … «VIII» over «Sg, кПа» «0,5» … «4,0»)."""

from __future__ import annotations

import re
from collections import Counter

from normagpt import claims as c
from normagpt.conditions.entities import Segment
from normagpt.conditions.table_heads import heading_heads, names_unit
from normagpt.conditions.table_lines import Block, first_cells, read_blocks, row_segment
from normagpt.conditions.words import marks_of, stems_of, value_fits, values_located


def numbered_segments(
    body: list[str], blocks: list[Block], heading: frozenset[str], dimension: str
) -> list[Segment]:
    """A table whose rows open with a number under a head naming its unit («Наружный
    диаметр труб, мм» / «15» / «1,5» / «2,0»; «Толщина стенки печи, мм» / «120» /
    «Открытая» / «260» / «200»): each row is its number, its label if any, and a cell for
    each column's head; each cell given for its row's number and label and its column. []
    for any other table, or when its cells do not make up such rows."""
    if not blocks or not blocks[0][0] or not names_unit(_first_head(body)):
        return []
    first = first_cells(body, dimension)
    labelled = [i for i, line in enumerate(body[:first]) if _NUMBERED_LABEL.match(line)]
    cut = labelled[0] if labelled else first  # the heading ends at the first numbered group
    for width in range(2, 9):
        heads = heading_heads(body[:cut], width)
        if not heads:
            continue
        rows = _numbered_rows(blocks, width) or _grouped_rows(body[cut:], dimension, width)
        if not rows:
            continue
        context = heading | stems_of(" ".join(body[:cut]))
        out: list[Segment] = []
        for number, label, cells, group in rows:
            shown = " › ".join(x for x in (" ".join(group.split())[:80], number.text, label) if x)
            own = marks_of(number.text) | stems_of(label) | marks_of(label)
            for head, cell in zip(heads, cells, strict=True):
                out.append(
                    Segment(cell, own | stems_of(head) | marks_of(head), context | stems_of(group),
                            f"{shown} › {head}")
                )  # fmt: skip
        return out
    return []


# a group's label opening with its number: «1 Жилые, лечебно-профилактические …»
_NUMBERED_LABEL = re.compile(r"^\s*\d{1,2}\s+[А-ЯЁ][а-яё]")
Row = tuple[c.Value, str, list[tuple[c.Value, ...]], str]  # number, label, cells, group


def _grouped_rows(lines: list[str], dimension: str, width: int) -> list[Row] | None:
    """The rows of a table whose numbered rows stand under groups' labels («1 Жилые, …» /
    «2000» «2,1» «3,2» … / «4000» …): each a number rising within its group and `width`
    cells, under the group's label; what makes no such row (a row of coefficients the OCR
    broke) is left. None when no group has two rows."""
    stream: list[str | tuple[c.Value, ...]] = []
    for labels, cells, _ in read_blocks(lines, dimension):
        stream += [*labels, *cells]
    found: list[tuple[c.Value, list[tuple[c.Value, ...]], int]] = []
    groups: list[str] = []  # each group's label, its lines joined
    last = float("-inf")
    at = 0
    while at < len(stream):
        token = stream[at]
        if isinstance(token, str):
            if token[:1].islower() and groups:  # «режимом»: the label goes on
                groups[-1] = f"{groups[-1]} {token}"
            else:
                groups.append(token)
                last = float("-inf")
            at += 1
            continue
        row = [x for x in stream[at + 1 : at + 1 + width] if isinstance(x, tuple) and x]
        if len(token) == 1 and len(row) == width and token[0].number > last:
            found.append((token[0], row, len(groups) - 1))
            last = token[0].number
            at += 1 + width
            continue
        at += 1
    counts = Counter(group for _, _, group in found)
    if not counts or min(counts.values()) < 2:
        return None
    return [(number, "", cells, groups[g] if g >= 0 else "") for number, cells, g in found]


def _first_head(body: list[str]) -> str:
    """The first head of the heading: its first line, with those it runs on with."""
    first = ""
    for line in body:
        first = f"{first} {line}".strip()
        if not re.search(r"(?:[,-]|\b[а-яё]+)$", line.strip()) or names_unit(first):
            break
    return first


def _numbered_rows(blocks: list[Block], width: int) -> list[Row] | None:
    """The cells and label lines of the table, in order, read as rows of a number, the
    label lines after it and `width` cells; None when they do not read so."""
    stream: list[str | tuple[c.Value, ...]] = []
    for index, (labels, cells, _) in enumerate(blocks):
        stream += [] if index == 0 else labels
        stream += cells
    rows: list[Row] = []
    at = 0
    while at < len(stream):
        number = stream[at]
        if isinstance(number, str) or len(number) != 1:
            return None
        at += 1
        label: list[str] = []
        while at < len(stream) and isinstance(stream[at], str):
            label.append(str(stream[at]))
            at += 1
        taken = stream[at : at + width]
        if len(taken) != width or any(isinstance(x, str) or not x for x in taken):
            return None
        rows.append((number[0], " ".join(label), [x for x in taken if not isinstance(x, str)], ""))
        at += width
    return rows or None


_ACROSS_CODE = re.compile(r"^\s*(?:[IVXШ]{1,4}|[IVX]{1,4}[аб]?|\d[А-Я]|[А-ЯA-Z]\d?)\s*$")


def across_segments(body: list[str], heading: frozenset[str], dimension: str) -> list[Segment]:
    """A table laid across with codes: its conditions' codes one a line («Снеговые районы»:
    «I», «II», … «VIII») over a line naming the unit and as many values («Sg, кПа»: «0,5», …
    «4,0»): each value given for the code above it. [] for any other table."""
    codes = [i for i, line in enumerate(body) if _ACROSS_CODE.match(line)]
    if len(codes) < 2 or codes != list(range(codes[0], codes[-1] + 1)):
        return []
    at = codes[-1] + 1
    if at >= len(body) or not names_unit(body[at]):
        return []
    cells = body[at + 1 : at + 1 + len(codes)]
    values = [tuple(v for _, _, v in values_located(line)) for line in cells]
    if len(values) != len(codes) or not all(len(v) == 1 for v in values):
        return []
    if not all(value_fits(v[0], dimension, True) for v in values):
        return []
    lead = " ".join(body[: codes[0]])
    context = heading | stems_of(lead) | stems_of(body[at])
    return [
        Segment(cell, stems_of(body[i]) | marks_of(body[i]), context, f"{lead} {body[i].strip()}")
        for i, cell in zip(codes, values, strict=True)
    ]


def transposed_segments(blocks: list[Block], heading: frozenset[str]) -> list[Segment]:
    """A table laid across: a row of conditions over a row of values, each naming its unit
    («Диаметр трубопровода, мм: 50, 100, 150 и более» over «Длина выпуска …, м: 8, 12,
    15»): each value is given for the cell above it. [] for any other table."""
    rows = [(labels, cells) for labels, cells, _ in blocks if cells]
    if len(rows) != 2 or len(rows[0][1]) != len(rows[1][1]) or len(rows[1][1]) < 2:
        return []
    if not (rows[0][0] and rows[1][0]):
        return []
    (top, conditions), (label, cells) = (rows[0][0][-1], rows[0][1]), (rows[1][0][-1], rows[1][1])
    if not (names_unit(top) and names_unit(label) and all(conditions) and all(cells)):
        return []
    out = [row_segment(top, tuple(v for cell in conditions for v in cell), [], heading)]
    for above, cell in zip(conditions, cells, strict=True):
        marks = frozenset(f"#{v.number:g}" for v in above)
        shown = f"{top} {above[0].text} › {label}"
        out.append(Segment(cell, stems_of(label) | marks, heading | stems_of(top), shown))
    return out
