"""A clause read as a reader reads it (pure): its sentences and list items under the leads
above them, each value with the part of its sentence that says for what it is given."""

from __future__ import annotations

import re
from dataclasses import replace

from normagpt import claims as c
from normagpt.conditions.entities import Segment
from normagpt.conditions.respective import respective_segments
from normagpt.conditions.words import (
    PREPOSITIONS,
    is_threshold,
    marks_of,
    stems_of,
    value_fits,
    values_located,
    words_of,
)
from normagpt.kin import stems_related

# where a sentence or a list item ends: «;», a lead's «:», «.» before a capital, a new
# line opening a list item
_BOUNDARY = re.compile(
    r";|(?<!\d):(?=\s)|\.(?=\s+[«\"(А-ЯЁA-Z—–-])|\.\s*$|\n(?=\s*(?:[-—–•]\s|[а-я]\)\s))"
)
# where a sentence's part ends inside it, the strongest first: «, а», «,», «и», «(»
_PART_ENDS = [
    re.compile(r"[,;]\s*(?:а|но)\s+"),
    re.compile(r",\s*(?:(?:или|и)\s+)?"),
    re.compile(r"\s(?:а|и|или)\s"),
    re.compile(r"\("),
]
_AFTER_VALUE = re.compile(rf"^\s*(?:[-—–(]|(?:{'|'.join(PREPOSITIONS)})\s)", re.I)
# «…, га, не менее:», «(с толщиной слоев, м: песок — 0,7; …)», «не выше, °C:», «…, м. не менее:»
_DECLARED_UNIT = re.compile(
    r"[,(]\s*([а-яa-z°%]{1,4}\d?)(?:\s*(?=[,):]|$)|\.\s*(?=не\s+(?:менее|более)\b))", re.I
)


def _units(text: str) -> list[tuple[int, int, str]]:
    """Sentences and list items: start, end and the mark that ends each (';', ':', '.' or
    '' for a list item's new line or the end)."""
    out, start = [], 0
    for match in _BOUNDARY.finditer(text):
        mark = match.group(0).strip()[:1]
        out.append((start, match.start(), mark))
        start = match.end()
    if text[start:].strip():
        out.append((start, len(text), ""))
    return _conditions_after(text, [(s, e, m) for s, e, m in out if text[s:e].strip()])


_ENDS_IN_VALUE = re.compile(r"\d\s*[^\s\d]{0,8}\s*$")


def _conditions_after(text: str, units: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Units with a list item of no value that follows a value ending its line joined to
    it: the item is that value's condition («… и 50 Н/мм⏎- для кабелей с медными жилами»)."""
    out: list[tuple[int, int, str]] = []
    for start, end, mark in units:
        after_value = (
            out and not out[-1][2] and _ENDS_IN_VALUE.search(text[out[-1][0] : out[-1][1]])
        )
        if after_value and not re.search(r"\d", text[start:end]):
            out[-1] = (out[-1][0], end, mark)
            continue
        out.append((start, end, mark))
    return out


def clause_segments(text: str, dimension: str) -> list[Segment]:
    """The values of `dimension` in a clause's `text`, each with its condition."""
    segments: list[Segment] = []
    leads: list[str] = []  # the clause's lead, then a list item's lead («- в колоннах:»)
    said: list[str] = []  # the sentence's parts so far
    subject: frozenset[str] = frozenset()  # the context of the sentence's first part
    located = values_located(text)
    for start, end, mark in _units(text):
        unit = text[start:end]
        if mark == ":":
            item = bool(re.match(r"\s*(?:[-—–•]|[а-я]\))\s", unit))
            leads = [*leads[:1], unit] if item and leads else [unit]
            continue
        respective = respective_segments(unit, dimension)
        if respective:  # «2, 4 и 8 Ом соответственно при … 660, 380 и 220 В»
            segments += respective
            leads, said, subject = ([], [], frozenset()) if mark == "." else (leads, said, subject)
            continue
        said.append(unit)  # a unit named once holds to the sentence's end, across its «;»
        unitless = any(_declared(lead, dimension) for lead in [*leads, *said])
        found = _stated(
            text, [(s, e, v) for s, e, v in located if start <= s < end], dimension, unitless
        )
        found = [(s - start, e - start, v) for s, e, v in found]
        led = frozenset().union(*(stems_of(lead) for lead in leads))
        parts = _parts(unit, found, led | subject, segments[-1:])
        if parts and not subject:  # the sentence's subject holds across its «;» too
            subject = parts[0].context - led
        segments += parts
        if mark == ".":
            leads, said, subject = [], [], frozenset()
    return segments


# «при перепаде отметок пола более 1,0 м … — не менее 1,2 м»: a bare comparison (or how far
# a thing stands) bounds a condition when the sentence states another value
_COMPARED = re.compile(
    r"(?:(?<!\bне\s)\b(?:более|менее|свыше|больше|меньше|св\.)|\b(?:далее|дальше|ближе))\s*$", re.I
)  # «при расположении не далее 1,5 м от конька» too


# «не должен быть более 3 мм»: the bound of a value stated, its «не» words before
_NEGATED = re.compile(r"\bне\s+долж\w+\s+(?:быть\s+)?(?:более|менее|больше|меньше)\s*$", re.I)


def _stated(
    text: str, located: list[tuple[int, int, c.Value]], dimension: str, unitless: bool
) -> list[tuple[int, int, c.Value]]:
    """The values of a sentence the clause states, of the claim's kind: not the numbers
    bounding a condition («в балках высотой 150 мм и более», «при перепаде более 1,0 м»)."""
    found = [
        (s, e, v)
        for s, e, v in located
        if value_fits(v, dimension, unitless) or _unit_after(text, e, v, located, dimension)
    ]
    found = [(s, e, v) for s, e, v in found if not is_threshold(text, s, e)]
    stated = [
        (s, e, v)
        for s, e, v in found
        if not _COMPARED.search(text[max(0, s - 12) : s])
        or _NEGATED.search(text[max(0, s - 40) : s])
    ]
    stated = stated or found
    paired = [(s, e, v) for s, e, v in stated if not _PAIRED.match(text, e)]
    return paired or stated


def _unit_after(
    text: str, end: int, value: c.Value, located: list[tuple[int, int, c.Value]], dimension: str
) -> bool:
    """Whether a bare bounded number ends its part and the next value, bounded alike, names
    the unit for both: «не менее 1500, а для битумно-полимерных — не менее 2000 г/м2»."""
    if value.unit or not value.bound or not _ELLIPTIC.match(text, end):
        return False
    after = [v for s, _, v in located if s >= end]
    return bool(after) and after[0].dimension == dimension and after[0].bound == value.bound


_ELLIPTIC = re.compile(r"\s*,\s*(?:а|но)\s")  # «не менее 1500, а для …»


# «в зависимости от диаметра труб: 150 мм — 35 м, 200—450 мм — 50 м»: a value a dash leads
# from to another is the condition of that one
_PAIRED = re.compile(r"[ \t]*[—–][ \t]*\n?[ \t]*(?:(?:не\s+)?(?:более|менее)\s+|от\s+|до\s+)?\d")


def _declared(text: str, dimension: str) -> bool:
    """Whether `text` names the unit of the numbers after it («…, га, не менее:»)."""
    return any(
        v.dimension == dimension
        for m in _DECLARED_UNIT.finditer(text)
        for v in c.values_find(f"1 {m.group(1)}")
    )


def _parts(
    unit: str,
    found: list[tuple[int, int, c.Value]],
    context: frozenset[str],
    before: list[Segment],
) -> list[Segment]:
    """A sentence's or item's values, each with the part that says for what it is given (see
    the package): a value with no words of its own joins the part before it («200 мм — при
    высоте сечения ≤ 150 мм»: 150 мм is that part's condition)."""
    if not found:
        return []
    pieces = _pieces(unit, found)
    subject, pieces[0] = _subject(pieces[0], pieces[1:])
    context = context | stems_of(subject)
    out: list[Segment] = []
    owns: list[str] = []  # each part's condition as written
    for values, lead, shown, trail in pieces:
        own = f"{lead} {trail}"
        stems = stems_of(own)
        marks = marks_of(f"{lead}{shown}{trail}")
        numbers = {f"#{v.number:g}" for v in values}
        if not stems and out and not {m for m in marks_of(lead) if m.rstrip("+-") not in numbers}:
            last = out[-1]
            text = f"{last.text} {lead}{shown}{trail}"
            out[-1] = replace(last, values=last.values + values, own=last.own | marks, text=text)
            continue
        marks -= {m for m in marks if m.rstrip("+-") in numbers}
        inherited = _inherited(own, stems, out, before)
        shared = _shared(own, stems, out)
        if shared:  # «для основных … битумных материалов …, а для битумно-полимерных —»
            last = out[-1]
            out[-1] = replace(last, own=last.own - shared, context=last.context | shared)
            inherited |= shared
        text = f"{lead}{shown}{trail}"
        general = not stems and len(pieces) > 1  # «… не более 1,5 ч, а для крупных — 2 ч»
        other = general or bool(_OTHER_CASES.search(own))
        alone = len(pieces) == 1 and not context
        out.append(Segment(values, stems | marks, context | inherited, text, other, alone))
        owns.append(own)
    return _ellipsis_closed(out, owns)


def _ellipsis_closed(out: list[Segment], owns: list[str]) -> list[Segment]:
    """Parts that leave their noun to the last of them take its words: «140 Вт/м на
    постоянных и 250 Вт/м на непостоянных рабочих местах» (a part of one word opening with
    the preposition the next part opens with)."""
    for i in range(len(out) - 1):
        its, next_ = _OPENING.match(owns[i].strip()), _OPENING.match(owns[i + 1].strip())
        words = words_of(owns[i + 1])
        if not (its and next_ and its.group(1).lower() == next_.group(1).lower()):
            continue
        if len(words_of(owns[i])) == 1 and len(words) > 1:
            out[i] = replace(out[i], own=out[i].own | {stem for _, stem in words[1:]})
    return out


def _inherited(
    own: str, stems: frozenset[str], out: list[Segment], before: list[Segment]
) -> frozenset[str]:
    """The words a part leaves unsaid and takes from the part before it: all of that part's
    condition after «то же» («30 мм — то же, для верхней арматуры»); the words after the
    first of an elliptic part opening as the one before it did («при попутном движении
    пара — 30 м/с, при встречном — 20 м/с»: движения пара)."""
    previous = (out or before)[-1:]
    if not previous:
        return frozenset()
    if re.match(r"\W*то\s+же", own, re.I):
        return previous[0].own
    opening, its = _OPENING.match(own), _OPENING.match(previous[0].text)
    if not (out and opening and its and len(stems) == 1) or previous[0].other:
        return frozenset()
    if opening.group(1).lower() != its.group(1).lower():
        return frozenset()
    return frozenset(stem for _, stem in words_of(previous[0].text)[1:]) - stems


def _shared(own: str, stems: frozenset[str], out: list[Segment]) -> frozenset[str]:
    """The words of the part before that an elliptic part of one word (a hyphenated one
    too) opening with the same preposition leaves unsaid: all but those sharing a stem
    with its word, which they contrast («для основных наплавляемых битумных рулонных
    материалов … 1500, а для битумно-полимерных — 2000»: the kind of material is said for
    both, «битумных» and «битумно-полимерных» tell them apart)."""
    said = _WORDS.findall(own.split("—")[0])  # before its value's dash
    if not out or out[-1].other or len(said) != 2:  # its preposition and its one word
        return frozenset()
    opening, its = _OPENING.match(own), _OPENING.match(out[-1].text)
    if not (opening and its and opening.group(1).lower() == its.group(1).lower()):
        return frozenset()
    words = {m for m in out[-1].own if not m.startswith("#")}
    if not any(stems_related(a, b) for a in words for b in stems):
        return frozenset()  # no word of it contrasted: not the same phrase said again
    return frozenset(w for w in words if not any(stems_related(w, b) for b in stems))


_WORDS = re.compile(r"[А-ЯЁа-яё]+(?:-[А-ЯЁа-яё]+)*")  # a hyphenated word is one


_OTHER_CASES = re.compile(
    r"\b(?:в|во|для|при|на)\s+(?:други[хм]|остальны[хм]|прочи[хм]|ины[хм])\b"
    r"|\b(?:други[ех]|остальны[ех]|прочи[ех]|ины[ех])\s+случа",
    re.I,
)


# values, the text before them, their text, the text after them
Piece = tuple[tuple[c.Value, ...], str, str, str]


def _pieces(unit: str, found: list[tuple[int, int, c.Value]]) -> list[Piece]:
    """Each value (the ends of a range together) with the text around it: the text before
    it back to the previous value's part, its own text, and the text after it up to the
    next value's part (`_gap_cut`)."""
    groups: list[tuple[int, int, list[c.Value]]] = []
    for s, e, v in found:
        if groups and groups[-1][0] == s:
            groups[-1][2].append(v)
        else:
            groups.append((s, e, [v]))
    lead = [unit[: groups[0][0]]]
    trail = [""] * len(groups)
    for i in range(len(groups) - 1):
        trail[i], after = _gap_cut(unit[groups[i][1] : groups[i + 1][0]])
        lead.append(after)
    trail[-1] = unit[groups[-1][1] :]
    return [(tuple(g[2]), lead[i], unit[g[0] : g[1]], trail[i]) for i, g in enumerate(groups)]


def _gap_cut(gap: str) -> tuple[str, str]:
    """The text between two values: what goes with the value before, what with the value
    after. A gap that opens with a dash, a preposition or a bracket goes on with the value
    before («6 лк для горизонтальных поверхностей и не менее 10 лк…»: cut at its last mark);
    else it leads to the value after («14 м², общей жилой комнаты … — 16 м²»: cut at the
    first of its strongest marks)."""
    if _AFTER_VALUE.match(gap):
        cuts = sorted((m for p in _PART_ENDS for m in p.finditer(gap)), key=lambda m: m.start())
        if not cuts:
            return gap, ""
        return gap[: cuts[-1].start()], gap[cuts[-1].end() :]
    cut = next((m for p in _PART_ENDS if (m := p.search(gap))), None)
    return (gap[: cut.start()], gap[cut.end() :]) if cut else ("", gap)


def _subject(first: Piece, rest: list[Piece]) -> tuple[str, Piece]:
    """The subject of a sentence of several parts, which every part shares: the first part's
    text before the phrase parallel to a later part's opening («Высота … кухни» before «в
    климатических подрайонах …», parallel to «а в других климатических подрайонах»); all
    of its text before its value when no phrase of it is parallel (« … не более 1,5 ч, а
    для крупных городов — не более 2 ч»: the first part is then the general case)."""
    values, lead, shown, trail = first
    if not rest:
        return "", first
    cuts = [cut for piece in rest if (cut := _parallel(lead, piece[1])) is not None]
    if not cuts:
        return lead, (values, "", shown, trail)
    cut = max(cuts)
    if (joined := _COORDINATED.search(lead[:cut])) is not None:
        cut = joined.start(1)  # «возвышаться над кровлей и выступать … на 15 см»: both
    return lead[:cut], (values, lead[cut:], shown, trail)


# a predicate joined by «и» to the parallel phrase after it: the value is both's («должны
# возвышаться над кровлей и выступать за наружную облицовку стен не менее чем на 15 см, а
# при … — возвышаться над кровлей не менее 60 см и выступать … на 30 см»)
_COORDINATED = re.compile(r"[,;:—–]\s*(?:должн\w*\s+)?([^,;:—–]+?)\s+и\s*$", re.I)


_OPENING = re.compile(
    rf"^[\W\d]*(?:(?:а|и|но)\s+(?:также\s+)?)?({'|'.join(PREPOSITIONS)})\s", re.I
)  # «а в других подрайонах», «для крупных городов»
_ADJECTIVE_END = re.compile(
    r"(?:ый|ий|ой|ая|яя|ое|ее|ые|ие|ых|их|ого|его|ому|ему|ым|им|ыми|ими|ую|юю)$", re.I
)


def _parallel(lead: str, opening: str) -> int | None:
    """Where in `lead` the phrase parallel to a later part's `opening` begins: the last one
    opening with the same preposition (one naming a word of that part first); for a part
    opening with no preposition («парков планировочных районов»), the noun phrase of its
    first word («городских парков»). None when there is none."""
    said = _OPENING.match(opening)
    if said is None:
        words = words_of(opening)
        places = [at for at, stem in words_of(lead) if words and stem == words[0][1]]
        return _phrase_start(lead, places[-1]) if places else None
    later = {stem for _, stem in words_of(opening)[:4]}
    places = [m.start(1) for m in re.finditer(rf"(?:^|[\s,(])({said.group(1)})\s", lead, re.I)]
    naming = [at for at in places if {stem for _, stem in words_of(lead[at:])[:4]} & later]
    found = naming or places
    return found[-1] if found else None


def _phrase_start(text: str, at: int) -> int:
    """Where the noun phrase of the word at `at` begins: its adjectives before it, and the
    preposition before them."""
    while True:
        before = re.search(r"([а-яё]+)[\s,]*$", text[:at], re.I)
        if before is None:
            return at
        word = before.group(1)
        if word.lower() in PREPOSITIONS:
            return before.start(1)
        if not _ADJECTIVE_END.search(word):
            return at
        at = before.start(1)
