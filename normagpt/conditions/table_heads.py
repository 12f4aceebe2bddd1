"""The heads of a table's value columns as a reader finds them in its heading (pure): the
heading's lines after the one naming the unit, one a column, joined as a label's lines join,
under a head spanning them, two lines each, or two levels (a head over the same sub-heads
each); or a row of numbers under the heading («4-5 | 6-10 | 11-16», «1— 5 | 6 | 9»)."""

from __future__ import annotations

import functools
import itertools
import re

from normagpt import claims as c
from normagpt.conditions.words import PREPOSITIONS, values_located
from normagpt.units import UNIT_PATTERN, Unit, unit_read

_GROUP = re.compile(r"^\s*(?:[А-ЯЁA-Z]\.|\d+\.|[а-я]\))\s|:\s*$")  # «А. Из помещений…», «…этажи:»
# a column's heading names the unit of its cells: «Расстояние, м», «…, км, не более»
_UNIT_NAMED = re.compile(
    r"[,(]\s*(?:тыс\.\s*)?([^\s,()]{1,8})\s*(?=[,)]|$)|\bне\s+(?:более|менее)\s*$", re.I
)  # «…, тыс. чел.» too
# a code alone on its line: a degree, a class («I, II, III», «СО», «С2, СЗ», «IV»)
_CODES = re.compile(r"^[\sIVXШП0-9СCОOЗ,–—-]+$")


def heading_heads(heading: list[str], width: int) -> list[str]:
    """The heads of a row's last `width` cells among the `heading`'s lines (those above the
    first row's label): the lines after the last naming a unit (and the words it runs on
    with: «…, л (м3), при» / «размещении»), down to a group's label («Марши лестниц, ведущие на
    жилые этажи:»), read one a line, joined, under a head spanning them, two lines each or in
    two levels, the first of these that gives `width` distinct heads opening alike; [] when
    none does."""
    if width < 2:
        return []
    named = [i for i, line in enumerate(heading) if names_unit(line)]
    if not named:
        return []
    at = named[-1] + 1
    while at < len(heading) and re.search(r"(?:\b(?:при|для|в|на|по)|[,-])\s*$", heading[at - 1]):
        at += 1
    tail = dehyphenated(
        list(itertools.takewhile(lambda line: not _GROUP.search(line), heading[at:]))
    )
    candidates = [tail, joined(tail), _spanned(tail), _paired(tail, width), _two_level(tail)]
    candidates.append(_capitalised(tail))
    return next(
        (h for h in candidates if len(h) == width and _alike(h) and len(set(h)) == width), []
    )


def lower_heads(heading: list[str], width: int) -> list[str]:
    """The heads of `width` columns as the one run of `width` short lines in lower case in the
    heading, one a line («Пески» … «плотные» / «средней плотности» / «рыхлые»); [] when
    there is no such run, or more than one."""
    runs: list[list[str]] = [[]]
    for line in heading:
        words = line.split()
        short = 0 < len(words) <= 3 and not re.search(r"\d", line)
        if short and line.strip()[:1].islower() and words[0] not in PREPOSITIONS:
            runs[-1].append(line.strip())
        elif runs[-1]:
            runs.append([])
    found = [run for run in runs if len(run) == width]
    return found[0] if len(found) == 1 and len(set(found[0])) == width else []


def number_heads(lines: list[str]) -> list[str]:
    """A row of numbers under the heading as the heads of the value columns («4-5 | 6-10 |
    11-16», «1— 5 | 6 | 9 | 12»), each number or range one head; [] when the numbers only
    number the columns («1 2 3 4 5 6 7»)."""
    heads = [line[s:e] for line in lines for s, e in _spans(line)]
    numbers = [c.values_find(head) for head in heads]
    if all(len(n) == 1 and n[0].number == i for i, n in enumerate(numbers, 1)):
        return []
    return heads


def _spans(line: str) -> list[tuple[int, int]]:
    return list(dict.fromkeys((s, e) for s, e, _ in values_located(line)))


def dehyphenated(lines: list[str]) -> list[str]:
    """`lines` with a word broken at a line's end joined («кера-» / «мического»)."""
    out: list[str] = []
    for line in lines:
        if out and re.search(r"[а-яё]-$", out[-1]) and re.match(r"[а-яё]", line.strip()):
            out[-1] = out[-1][:-1] + line.strip()
        else:
            out.append(line.strip())
    return out


def _alike(heads: list[str]) -> bool:
    """Whether the heads open alike, as heads of one kind do: all with a number, a small
    letter or a capital («до 2» / «более 2»; not «Грунты насыпи» / «До 12» / «До 6», a label
    column's head among them); codes are alike («I, II, III СО» / «II, III С1»)."""
    kinds = {"digit" if h[:1].isdigit() else "lower" if h[:1].islower() else "upper" for h in heads}
    numbers = {bool(re.search(r"\d", h)) for h in heads}
    codes = all(_CODES.match(h) for h in heads)  # «I, II, III СО», «II, III С1»: codes alike
    return len(kinds) == 1 and (len(numbers) == 1 or codes)


def joined(lines: list[str]) -> list[str]:
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


def _paired(lines: list[str], width: int) -> list[str]:
    """Heads of two lines each, the first 2 × `width` lines: codes over codes («I, II, III» /
    «СО» as a row's label writes a degree and a class), or a head over the same second line
    each («не защищенной» / «от возгорания», «защищенной» / «от возгорания»); [] else."""
    if len(lines) < 2 * width:
        return []
    pairs = [lines[i : i + 2] for i in range(0, 2 * width, 2)]
    codes = all(_CODES.match(line) for pair in pairs for line in pair)
    repeated = len({pair[1] for pair in pairs}) == 1
    return [" ".join(pair) for pair in pairs] if codes or repeated else []


def _two_level(lines: list[str]) -> list[str]:
    """Heads in two levels: n heads over n × m sub-heads, the same m under each («Форма
    участка стены из керамического кирпича …» and «… из силикатного кирпича …» over
    «Прямолинейная» / «L-образная» twice): each sub-head under its head, in order."""
    for n in range(2, len(lines) // 3 + 1):
        tops, subs = lines[:n], lines[n:]
        m, rest = divmod(len(subs), n)
        if rest or m < 2:
            continue
        cycles = [subs[i : i + m] for i in range(0, len(subs), m)]
        if all(cycle == cycles[0] for cycle in cycles) and len(set(cycles[0])) == m:
            return [
                f"{top} › {sub}" for top, cycle in zip(tops, cycles, strict=True) for sub in cycle
            ]
    return []


def _capitalised(lines: list[str]) -> list[str]:
    """Heads broken into lines anyhow, each opening with a capital («Стен» / «Покрыт» / «ий
    и» / «перекр» / «ытий» / «над» / «проезда» / «ми» / «Перекрытий» / …): a head from each
    capitalised line to the next; lower-case lines before the first go on with the unit's
    head."""
    groups: list[list[str]] = []
    for line in lines:
        if line[:1].isupper():
            groups.append([line])
        elif groups:
            groups[-1].append(line)
    return [" ".join(group) for group in groups]


def is_group(line: str) -> bool:
    """Whether a label line is a group's label («А. Из помещений…», «…этажи:»)."""
    return bool(_GROUP.search(line))


def is_codes(line: str) -> bool:
    """Whether a label line holds codes only («I, II, III», «СО», «С2, СЗ»)."""
    return bool(_CODES.match(line)) and bool(line.strip())


def heading_end(lines: list[str]) -> int:
    """Where the columns' heading ends among the first row's label lines: after the last
    line naming a unit, else before a group's label («А. Из помещений …»), else at the
    row's own label."""
    named = [i for i, line in enumerate(lines) if names_unit(line)]
    if named:
        return named[-1] + 1
    return len(lines) - 1 if lines and _GROUP.match(lines[-1]) else len(lines)


def units_named(text: str) -> list[Unit]:
    """The units the lines of a table's `text` name for its cells, as `names_unit` finds
    them, and a unit before another in brackets («Уклон кровли, % (град)*»: % and degrees)."""
    found: list[Unit] = []
    for line in text.splitlines():
        for match in _UNIT_SAID.finditer(line):
            found += [u for v in c.values_find(f"1 {match.group(1)}") if (u := unit_read(v.unit))]
        pieces = [line, *line.split(",")]  # «лк, не менее» too
        found += [unit for piece in pieces if (unit := _unit_alone(piece)) is not None]
    return found


# «…, м», «(град)», «, % (град)»: a unit after a comma or in brackets
_UNIT_SAID = re.compile(r"[,(]\s*(?:тыс\.\s*)?([^\s,()]{1,8})\s*(?=[,)]|\s\(|$)", re.I)


def names_unit(line: str) -> bool:
    """Whether a heading's line names the unit of the cells under it («Расстояние, м»), or
    is a unit between commas or alone («°С·сут/год», «, (м ·°С)/Вт,»: its power lost)."""
    for match in _UNIT_NAMED.finditer(line):
        if match.group(1) is None or any(v.unit for v in c.values_find(f"1 {match.group(1)}")):
            return True
    return any(_unit_alone(piece) is not None for piece in [line, *line.split(",")[1:]])


def _unit_alone(piece: str) -> Unit | None:
    """The unit a piece of a heading's line is, alone (brackets and spaces aside), if any."""
    bare = re.sub(r"[()\s]", "", piece)
    if 1 < len(bare) <= 14 and _unit_alone_pattern().fullmatch(bare):
        return unit_read(bare)
    return None


@functools.cache
def _unit_alone_pattern() -> re.Pattern[str]:
    """Every unit's spelling, compiled on first use: a tenth of a second of each process's
    start (an MCP session's) that no search needs; claims and tables being read do."""
    return re.compile(UNIT_PATTERN, re.I)
