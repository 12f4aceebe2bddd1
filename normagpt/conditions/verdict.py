"""Whether a claim's value is the one its clauses give for the claim's conditions (pure):
the part of the claim stating it, fitted to the clauses' parts (see the package)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from normagpt import claims as c
from normagpt.conditions.entities import Segment
from normagpt.conditions.segments import clause_segments
from normagpt.conditions.tables import table_segments
from normagpt.conditions.words import PREPOSITIONS, abbreviated, is_threshold, stems_of
from normagpt.kin import stems_related
from normagpt.parsing import search_stems


@dataclass(frozen=True)
class Mismatch:
    """A claim's value the clause gives for another condition than the claim's."""

    value: c.Value
    given_for: str  # the condition the clause gives the value for, as written
    instead: tuple[c.Value, ...]  # what the clause gives for the claim's condition
    source: int = 0  # which of the clauses checked gives it

    def reason(self, label: str) -> str:
        """The message, `label` the clause's: «в п. 5.8 СП 54.13330.2016 2,7 м — для «в
        климатических подрайонах …»; для условия утверждения: не менее 2,5 м»."""
        number = c.value_text(replace(self.value, bound=""))
        instead = ", ".join(dict.fromkeys(c.value_text(v) for v in self.instead[:3]))
        given = f"для «{self.given_for}»" if self.given_for.strip() else "для другого условия"
        return f"в {label} {number} — {given}; для условия утверждения: {instead}"


# the words between a condition and its value: «…, должна быть не менее»
_TAIL = re.compile(
    r"(?:[\s,;:—–-]|\b(?:(?:не\s+)?долж\w*|следует|принима\w*|быть|составля\w*|"
    r"не\s+(?:менее|более|ниже|выше|превыша\w*)|минимум|максимум)\b)*$",
    re.I,
)
_NUMBERED = re.compile(r"^\s*(?:[А-ЯЁA-Z]\.)?\d{1,2}(?:\.\d{1,3})+\s+")  # «9.13 Отношение…»
_HEAD = re.compile(r"^(?:[\s,;:—–•)-]|\b(?:а|и)\s)*", re.I)


def value_condition(
    claim: str,
    value: c.Value,
    clauses: Sequence[tuple[str, bool]],
    *,
    kind: str | None = None,
    named: dict[str, str] | None = None,
) -> Mismatch | None:
    """Whether the cited clauses (their text, and whether each is a table) give `value` for
    the conditions `claim` states: None when they do, when the value is not theirs at all or
    when they hold only one value of its kind (its dimension, or `kind`: '' for the numbers
    of a table's cells without a unit); else the condition they give it for and what they
    give for the claim's. `named`: the numbers of classes by the stems of their names, as
    a table the clauses point to names them («3 (влажный)»: a claim «во влажных условиях»
    says class 3, `class_names`)."""
    if kind is None:
        if not value.dimension:
            return None
        kind = value.dimension
    sources, segments = _segments_of(clauses, kind)
    if len({v.base if v.unit else v.number for s in segments for v in s.values}) < 2:
        return None
    holding = [i for i, s in enumerate(segments) if c.value_held(value, list(s.values))]
    if not holding:
        return None
    said = _claim_part(claim, value)
    if said is None:
        return None
    if named and (classes := {f"#{named[w]}" for w in said.own if w in named}):
        said = replace(said, own=said.own | classes)
    written_out = abbreviated(claim, "\n".join(text for text, _ in clauses))
    if written_out:  # «ориентированно-стружечных плит» is what the clause calls «ОСП»
        said = replace(said, own=said.own | stems_of(" ".join(written_out).upper()))
    best = _best(said, _measuring(said, segments))
    if not best or any(segments[i] is s for s in best for i in holding):
        return None
    others = [v for v in said.values if v != value and v.text != value.text]  # not its range's
    if any(c.value_held(v, list(s.values)) for v in others for s in best):
        return None  # «при диаметре 100 мм — 12 м»: the claim's 100 мм is the row's condition
    scores = _scores(said, segments)
    given = max(holding, key=lambda i: scores[i])
    held = c.value_held(value, list(segments[given].values))
    shown = _condition_shown(segments[given].text, held.text if held else "")
    instead = tuple(v for s in best for v in s.values)
    return Mismatch(value, shown, instead, sources[given])


# the measures of a thing's shape: a part giving another measure than a claim's gives another
# quantity's value («… полосы безопасности шириной 0,5 м» is no curb's «высотой»)
_MEASURES = frozenset(search_stems("высота ширина глубина толщина длина диаметр"))


def _measuring(said: Segment, segments: list[Segment]) -> list[Segment]:
    """The `segments` that may give the measure the claim's part names («высотой 0,12 м»):
    those naming it, or no measure of `_MEASURES`; all of them when the claim names none."""
    asked = _MEASURES.intersection(search_stems(said.text))
    if not asked:
        return segments
    return [
        segment
        for segment in segments
        if not (named := _MEASURES.intersection(search_stems(segment.text))) or named & asked
    ]


def table_cells(text: str) -> list[tuple[c.Value, ...]]:
    """The numbers without a unit a table gives, a segment's each."""
    return [segment.values for segment in _segments(text, True, "")]


def _segments_of(
    clauses: Sequence[tuple[str, bool]], dimension: str
) -> tuple[list[int], list[Segment]]:
    """The segments of every clause, and the index of the clause each is of."""
    sources: list[int] = []
    segments: list[Segment] = []
    for index, (text, table) in enumerate(clauses):
        found = _segments(text, table, dimension)
        sources += [index] * len(found)
        segments += found
    return sources, segments


@functools.lru_cache(maxsize=512)
def _segments(text: str, table: bool, dimension: str) -> tuple[Segment, ...]:
    """A clause's segments, read once for every value of a run's claims (a big table takes
    a second). A clause that is a table's caption and the table («20.1 Таблица 20.1 …») is
    read as a table."""
    if not table and _CAPTION.match(text):
        return tuple(table_segments(_CAPTION.sub("", text, count=1), dimension))
    return tuple((table_segments if table else clause_segments)(text, dimension))


# a clause opening with a table's caption: «20.1 Таблица 20.1», «5.3 Т а б л и ц а 5.3 — …»
_CAPTION = re.compile(r"^\s*[А-ЯA-Z]?[\d.]+\s+(?=Т\s?а\s?б\s?л\s?и\s?ц\s?а\s+[А-ЯA-Z]?[\d.]+)")


def _condition_shown(text: str, value: str) -> str:
    """A part's condition as a message shows it: its text without the value and the words
    that lead to it («…, должна быть не менее»)."""
    found = re.search(rf"(?<![\d,.]){re.escape(value)}(?![\d]|[,.]\d)", text) if value else None
    at = found.start() if found else -1  # «15» is not the «15» of «150»
    if at >= 0:
        text = f"{text[:at]}{text[at + len(value) :]}" if at else text[len(value) :]
        before, after = _TAIL.sub("", text[:at]), text[at:]
        text = f"{before} {after}" if before and after.strip(" .;,") else before or after
    text = _HEAD.sub("", _NUMBERED.sub("", " ".join(text.split())))
    return _TAIL.sub("", text.rstrip(" .;,"))[:160]


def _claim_part(claim: str, value: c.Value) -> Segment | None:
    """The part of `claim` that states `value`, read as a clause is read (a claim of two
    values states a condition for each); None when the value bounds the claim's condition
    («в зданиях высотой более 50 м»), stating nothing to check."""
    bare = c.masked_text(claim)
    grades = frozenset(f"#{g.kind}{g.number}" for g in c.grades_find(claim))  # masked in `bare`
    for segment in clause_segments(bare, value.dimension):
        if any(v.number == value.number and v.unit == value.unit for v in segment.values):
            said = stems_of(segment.text)  # «от трех до семи лет»: a number in words stays
            own = {m for m in segment.own if m in said or m.rstrip("+-") != f"#{value.number:g}"}
            return replace(segment, own=frozenset(own) | grades)
    at = bare.find(value.text)
    if at >= 0 and is_threshold(bare, at, at + len(value.text)):
        return None
    return Segment((value,), stems_of(bare) | grades, frozenset(), bare)


NEAR = 0.5  # segments this close to the best fit fit as well: a plain one among them wins


def _best(claim: Segment, segments: list[Segment]) -> list[Segment]:
    """The segments that fit the claim's part best (see the module): of those whose score
    is near the top, the plain ones (every word of their condition named by the claim, but
    for the words it shares with a narrower one: «в других подрайонах» beside «в подрайонах
    IА, IБ…»), else those of the top score; when the claim names nothing telling, the
    «other cases» ones. [] when there is none."""
    scores = _scores(claim, segments)
    top = max(scores)
    if top == 0:
        return [s for s in segments if s.other]
    near = [s for s, score in zip(segments, scores, strict=True) if score >= top - NEAR]
    said = claim.own | claim.context
    plain = [s for s in near if (s.own or s.other) and not _unnamed(s, said, _general(s, near))]
    if plain and len(plain) < len(near):
        return plain
    return [s for s, score in zip(segments, scores, strict=True) if score == top]


def _scores(claim: Segment, segments: list[Segment]) -> list[float]:
    """How well each segment fits the claim's part: the claim's telling words it holds
    (those the segments hold unequally; a word of its condition counts 1, of its subject or
    lead ½, as does a word of the claim's own subject, and a word of a one-value sentence
    that the clause says as a subject elsewhere), halved when the numbers of its condition
    are not the claim's."""
    said = claim.own | claim.context
    subjects = frozenset().union(*(s.context for s in segments))
    weights = {
        t: [_weight(t, s, subject=t not in claim.own, subjects=subjects) for s in segments]
        for t in said
    }
    for t in said:  # a number no part states may fall within a part's range («около сорока
        if t.startswith("#") and not any(weights[t]):  # метров»: «от 13 до 46 метров»)
            weights[t] = [_within(t, s) * (0.5 if t in claim.context else 1.0) for s in segments]
    telling = [w for w in weights.values() if max(w) != min(w)]
    numbers = {m for m in said if m.startswith("#")}
    return [
        sum(w[i] for w in telling) * (0.5 if _conflict(numbers, segment) else 1.0)
        + ITEM * _item_named(segment, said)
        for i, segment in enumerate(segments)
    ]


ITEM = 0.5  # a segment listing an item the claim names whole fits it better by this much
_ITEMS = re.compile(r"[,;()]")


def _item_named(segment: Segment, said: frozenset[str]) -> bool:
    """Whether the claim names whole an item of the segment's list of things, every word of
    it: «6,5 – инженер, экономист, бухгалтер» lists the «бухгалтер» a claim names, «9 –
    начальник отдела, главный бухгалтер» only a «главный» one. A list of things: three
    items or more, none with a preposition («с армированием» is a condition, which a
    claim's «без армирования» does not name)."""
    items = [item.split() for item in _ITEMS.split(segment.text)]
    if len(items) < LIST_ITEMS or any(PREPOSITIONS & {w.lower() for w in item} for item in items):
        return False
    return any((stems := stems_of(" ".join(item))) and stems <= said for item in items)


LIST_ITEMS = 3


def _conflict(numbers: set[str], segment: Segment) -> bool:
    """Whether the claim's numbers and the numbers of the segment's condition (not its
    values) have none in common: «четыре этажа» is not «два-три этажа»."""
    values = {f"#{v.number:g}" for v in segment.values}
    own = {m for m in segment.own if m.startswith("#") and m.rstrip("+-") not in values}
    if not (numbers and own) or any(_within(n, segment) for n in numbers):
        return False
    return not any(_related(n, m) for n in numbers for m in own)


_MARK = re.compile(r"#([^\d#]*)(\d+(?:\.\d+)?)([+-]?)")


def _within(said: str, segment: Segment) -> bool:
    """Whether the claim's number (or grade) falls within the range the segment's condition
    bounds («от 13 до 46 м», «В5 и ниже», «св. 400 до 1000»): above its lower bounds, below
    its upper ones."""
    mark = _MARK.fullmatch(said)
    if mark is None:
        return False
    values = {f"#{v.number:g}" for v in segment.values}
    lows: list[float] = []
    highs: list[float] = []
    for own in segment.own:
        bound = _MARK.fullmatch(own)
        if bound and bound[1] == mark[1] and bound[3] and own.rstrip("+-") not in values:
            (lows if bound[3] == "+" else highs).append(float(bound[2]))
    if not lows and not highs:
        return False
    number = float(mark[2])
    return (not lows or number >= max(lows)) and (not highs or number <= min(highs))


def _weight(said: str, segment: Segment, *, subject: bool, subjects: frozenset[str]) -> float:
    """What a claim's word weighs for a segment: 1 in its condition, ½ in its context (or
    when the claim's or the clause's subject word stands in a one-value sentence), 0."""
    if any(_related(said, w) for w in segment.own):
        alone = segment.alone and any(_related(said, w) for w in subjects)
        return 0.5 if subject or alone else 1.0
    return 0.5 if any(_related(said, w) for w in segment.context) else 0.0


def _general(segment: Segment, near: list[Segment]) -> frozenset[str]:
    """The words of `segment`'s condition that a narrower one says too (one whose condition
    holds all of its words and more): `segment` is the general case of that one."""
    words = frozenset(m for m in segment.own if not m.startswith("#"))
    return frozenset().union(
        *(words for o in near if o is not segment and words < {m for m in o.own if m[:1] != "#"})
    )


def _unnamed(segment: Segment, said: frozenset[str], shared: frozenset[str]) -> list[str]:
    """The words and numbers of a segment's condition the claim does not name (beyond
    `shared`): a row «1Б» is not plain for a claim that names no category."""
    return [m for m in segment.own if m not in shared and not any(_related(t, m) for t in said)]


_ROMAN_GRADE = re.compile(r"#[^\d#IVX]*([IVX]+)[+-]?")  # «#степеньIII»: «III степени»


def _related(said: str, word: str) -> bool:
    if said.startswith("#") != word.startswith("#"):  # «III степени» is a row's «III»
        grade, code = (said, word) if said.startswith("#") else (word, said)
        roman = _ROMAN_GRADE.fullmatch(grade)
        return roman is not None and roman.group(1).lower() == code
    if said.startswith("#"):  # «#50+» is «#50+» or «#50»
        number, side = said.rstrip("+-"), said[len(said.rstrip("+-")) :]
        other, its = word.rstrip("+-"), word[len(word.rstrip("+-")) :]
        return number == other and (side == its or not side or not its)
    return stems_related(said, word) or _misread(said, word)


def _misread(said: str, word: str) -> bool:
    """Whether two long stems differ by one letter read wrong («битумосодуржа» for
    «битумосодержа»): OCR's, not another word's."""
    if min(len(said), len(word)) < 8 or len(said) != len(word):
        return False
    return sum(a != b for a, b in zip(said, word, strict=True)) == 1


# a class's line in a table naming the classes: «3 (влажный)», «2 (нормальный)»
_CLASS_NAME = re.compile(r"^\s*(\d{1,2})[а-яa-z]?\s*\(([а-яё]{4,})\)\s*$", re.I | re.M)


def class_names(texts: Sequence[str]) -> dict[str, str]:
    """The classes a table names, their number by the stem of their name («3 (влажный)»:
    «влажн» → «3»), from `texts` (the tables a cited clause points to: СП 64.13330.2017's
    table Г.1 gives densities «для условий эксплуатации по таблице 1» in columns «1А, 1 и 2»
    and «3 и 4»; table 1 names class 3 «влажный», 4 «мокрый»). A name given to two numbers
    names none."""
    found: dict[str, set[str]] = {}
    for text in texts:
        for number, name in _CLASS_NAME.findall(text):
            for stem in stems_of(name):
                found.setdefault(stem, set()).add(number)
    return {stem: next(iter(numbers)) for stem, numbers in found.items() if len(numbers) == 1}
