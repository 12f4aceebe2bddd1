"""A table's lines as a reader takes them (pure): the heading it repeats overleaf and OCR's
letters for digits read; blocks of a row's label lines, each with the cells after it."""

from __future__ import annotations

import re
from collections import Counter

from normagpt import claims as c
from normagpt.conditions.entities import Segment
from normagpt.conditions.table_heads import is_codes, names_unit
from normagpt.conditions.words import (
    PREPOSITIONS,
    bare_text,
    marks_of,
    stems_of,
    value_fits,
    values_located,
)

Cells = list[tuple[c.Value, ...]]  # a row's cells: the values of each line
Block = tuple[list[str], Cells, list[str]]  # a row's labels, its cells, its label lines as read

# notes: «Примечания», or a footnote's star before its words («* При условии …»; not the
# star of a head, «*, мм»)
NOTES = re.compile(r"^\s*(?:П\s?р\s?и\s?м\s?е\s?ч\s?а\s?н\s?и|\*+\s*[^\W\d_])", re.I)
_CONTINUED = re.compile(r"^\s*(?:Окончание|Продолжение)\s+табл", re.I)
_ROW = re.compile(r"^(?P<label>.*?\S)\s{2,}(?P<cells>\S.*)$")  # «Песок   1:1,5»
# a number a label's words say of the thing («мощностью 8,5 кВт»), not a cell of the row
_DESCRIBED = re.compile(
    r"[а-яё]{3,}(?:ью|ой|ом|ем)\s+(?:(?:не\s+)?(?:более|менее|до|от|свыше|св\.)\s*)?$", re.I
)  # «мощностью 8,5 кВт», «колонн высотой до 5 м»
# a cell with its bound («До 1,0»), and the same in other units after it in brackets («Не
# менее 40 (22)»: a slope in % and in degrees)
_BOUNDED_CELL = re.compile(
    r"^\s*(?:до|от|не\s+более|не\s+менее|более|менее|свыше|св\.)\s*\d[\d,.\s–—-]*"
    r"(?:\(\s*\d[\d,.\s–—-]*\)\s*)?$",
    re.I,
)
_OCR_CELL = re.compile(r"^\s*(?=.*[зЗоОбб])[зЗоОб\d]{1,3}[,.][зЗоОб\d]{1,3}\s*$")
_OCR_DIGITS = str.maketrans("зЗоОб", "33006")
_OCR_III = re.compile(r"(?<=[IV],\s)П1\b|\bШ\b")
_COUNTED = frozenset({"storeys", "people", "places", "pieces", "points", "apartments"})
# a cell whose words after its value qualify it: «70 % проектной»
_QUALIFIED_CELL = re.compile(r"^\s*\d[\d,.]*\s*\S{1,8}\s+([а-яё]+)(?:\s+[а-яё]{3,})?\s*$")
_YEARLIKE = re.compile(r"^\s*(?:19|20)\d\d\s*$")
_FORMULA_NUMBER = re.compile(r"^\s*\(\d+(?:\.\d+)+\)\s*$")  # «(7.39)» after a formula


def read_body(lines: list[str]) -> list[str]:
    """The table's lines without the heading it repeats where it runs on to the next page
    («Окончание таблицы 1» and the heading's lines after it), OCR's letters for digits read."""
    out: list[str] = []
    skipping = False
    for line in lines:
        if _CONTINUED.match(line):
            skipping = True
            continue
        if skipping and line in out[:40] and not values_located(line):
            continue
        skipping = False
        out.append(_ocr_read(line))
    return _unnumbered(out)


def _unnumbered(lines: list[str]) -> list[str]:
    """`lines` without a row numbering the columns («1» / «2» / … / «7» under the heads)."""
    out: list[str] = []
    run = 0
    for line in lines:
        run = run + 1 if line.strip() == str(run + 1) else (1 if line.strip() == "1" else 0)
        out.append(line)
        if run >= 3 and not _next_number(lines, len(out), run):
            del out[len(out) - run :]
            run = 0
    return out


def _next_number(lines: list[str], at: int, run: int) -> bool:
    return at < len(lines) and lines[at].strip() == str(run + 1)


def _ocr_read(line: str) -> str:
    """A line with OCR's letters for digits read: «з,о» for a cell «3,0», «П1» and «Ш» for
    «III» among Roman numerals («I, II, П1», «II, Ш»)."""
    if _OCR_CELL.match(line):
        line = line.translate(_OCR_DIGITS)
    return _OCR_III.sub("III", line) if is_codes(line) else line


def first_cells(body: list[str], dimension: str) -> int:
    """Where the first line of cells of the claim's kind is (the heading's lines before it)."""
    return next(
        (
            i
            for i, line in enumerate(body)
            if cells_only(line)
            and any(value_fits(v, dimension, True) for _, _, v in values_located(line))
        ),
        len(body),
    )


def row_width(blocks: list[Block]) -> int:
    """The number of cells most rows have (0 when no row has any)."""
    counts = Counter(len(cells) for _, cells, _ in blocks[1:] if cells)
    return counts.most_common(1)[0][0] if counts else 0


def label_lines_cut(lines: list[str], label: str) -> list[str]:
    """`lines` without the last ones, which make up the row's `label`."""
    want, got = re.sub(r"\W", "", label), ""
    for i in range(len(lines) - 1, -1, -1):
        got = re.sub(r"\W", "", lines[i]) + got
        if len(got) >= len(want):
            return lines[:i]
    return []


def cells_only(line: str) -> bool:
    return bool(values_located(line)) and not has_letters(line)


def read_blocks(lines: list[str], dimension: str) -> list[Block]:
    """The table's lines as blocks of label lines, each with the cells after it (the
    cells of a row read one a line, or a row on one line: «Песок   1:1,5»). In the heading, a
    line of numbers of another quantity («3 этажа и выше») is a head's words; a row's number
    on a line of its own before its label («1» / «Квартиры с плитами:») is no cell; a line
    of a dash or a star alone is a cell left empty, not a row's label."""
    blocks: list[Block] = [([], [], [])]
    numbered = 0  # the rows numbered so far
    seen = False  # a line of cells read: the heading is over («3 этажа и выше» is a head's)
    # «До 1,0» is a cell, unless the heading names a unit for the rows' labels as well as
    # for the cells («Диаметр труб, мм» / «Расчетное время …, ч»: «До 400» labels a row)
    first = next((i for i, line in enumerate(lines) if cells_only(line)), len(lines))
    bounded_cells = sum(names_unit(line) for line in lines[:first]) < 2
    for index, line in enumerate(lines):
        found = [] if _FORMULA_NUMBER.match(line) else values_located(line)
        if not found and _YEARLIKE.match(line):  # «2000» alone in a table: a cell, no year
            found = [(0, len(line), c.Value(float(line), "", line.strip(), "", 1.0))]
        fitting = tuple(v for _, _, v in found if value_fits(v, dimension, True))
        whole = _ROW.match(line)
        if re.match(rf"\s*{numbered + 1}\s", line) and has_letters(line):
            numbered += 1
        if is_row_number(line, lines[index + 1 : index + 2], numbered + 1):
            numbered += 1
            if blocks[-1][1]:
                blocks.append(([], [], []))
            continue
        if not found and not re.search(r"\w", line) and (blocks[-1][0] or blocks[-1][1]):
            blocks[-1][1].append(())  # «-», «*»: a cell the row leaves empty
            continue
        cells = not has_letters(line) or (bounded_cells and _BOUNDED_CELL.match(line))
        qualified = _QUALIFIED_CELL.match(line)
        if qualified and fitting and fitting[0].unit and qualified[1] not in PREPOSITIONS:
            cells = True
        counted = all(v.dimension in _COUNTED for _, _, v in found)
        if found and cells and (fitting or seen or not counted):  # a line of cells
            blocks[-1][1].append(fitting)
            seen = True
            continue
        if blocks[-1][1]:
            blocks.append(([], [], []))
        if found and whole and not has_letters(whole["cells"]):
            blocks[-1][0].append(whole["label"].strip())
            blocks[-1][1].append(fitting)
            blocks[-1][2].append(whole["label"])
            continue
        _label_add(blocks[-1][0], line)
        blocks[-1][2].append(line)
        # a cell closing the label's line: «обратная лопата +15 см» (its unit tells it from a
        # label's number, «От 5 до 12»; «50 м3/ч на» goes on to its condition; «мощностью 8,5
        # кВт» says what the row is of)
        last = found[-1] if found else None
        if (
            last
            and last[2].dimension == dimension
            and not line[last[1] :].strip()
            and not _DESCRIBED.search(line[: last[0]])
        ):
            blocks[-1][1].append(tuple(v for s, _, v in found if s == last[0]))
    return blocks


def is_row_number(line: str, after: list[str], expected: int) -> bool:
    """Whether `line` is a row's number on its own line: the next number of the rows'
    numbering, before a label opening with a capital («2» / «Летние домики»)."""
    if line.strip() != str(expected):
        return False
    return bool(after) and bool(re.match(r"\s*[А-ЯЁA-Z][а-яё]", after[0]))


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


def has_letters(text: str) -> bool:
    """Whether `text` holds words besides its values («630 или 1000», «8(10)*», «150 и более»
    hold none)."""
    bare = re.sub(r"\b(?:или|и)\b(?:\s+(?:более|менее|выше|ниже)\s*$)?", "", bare_text(text))
    return bool(re.search(r"[^\W\d_]", bare))


def row_segment(
    label: str, values: tuple[c.Value, ...], group: list[str], heading: frozenset[str]
) -> Segment:
    context = heading.union(*(stems_of(line) for line in group))
    shown = " ".join(label.split())
    if group and min(len(shown), len(group[-1])) < 40:
        shown = f"{' '.join(group[-1].split())[:80]} › {shown}"
    return Segment(values, stems_of(label) | marks_of(label), context, shown)
