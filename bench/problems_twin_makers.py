"""The twins of `bench/problems_twins.py` and what makes them: a real problem with one
change at a known place, or several — another number, another point label, another word
of the data (синус/косинус, вписанной/описанной), another asked quantity (inflected with
pymorphy3, adjectives agreeing), another unit. The word lists here make twins; the search
itself has none (it compares lemmas)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from core.russian import morphology

# Asked quantities a twin may ask instead (lemmas; inflected into the question's case).
QUANTITIES = [
    "угол", "дуга", "высота", "сторона", "гипотенуза", "катет", "диагональ", "площадь",
    "периметр", "радиус", "синус", "косинус", "медиана", "хорда", "биссектриса",
]  # fmt: skip
# Words of the data and the word a twin puts in their place (stems with one inflection).
RIVAL_STEMS = [
    ("косинус", "синус"), ("синус", "косинус"), ("тангенс", "котангенс"),
    ("вписанн", "описанн"), ("описанн", "вписанн"), ("наибольш", "наименьш"),
    ("больш", "меньш"), ("меньш", "больш"), ("внутренн", "внешн"), ("внешн", "внутренн"),
    ("прямоугольн", "равнобедренн"), ("равнобедренн", "прямоугольн"), ("ромб", "квадрат"),
    ("высот", "медиан"), ("медиан", "высот"), ("биссектрис", "медиан"),
]  # fmt: skip
UNITS = {"градусах": ("радианах", "минутах")}  # the unit: its stored twin's, a variant's
_LEAD = re.compile(r"(Найдите|Вычислите|Чему (?:равен|равна|равно|равны))\s+")
_WORD = re.compile(r"[А-Яа-яЁё]+")


@dataclass(frozen=True)
class Change:
    """`text[start:end]` (of the real problem) becomes `new`; a difference of `kind`."""

    start: int
    end: int
    old: str
    new: str
    kind: str


@dataclass(frozen=True)
class Twin:
    real: str  # the real problem's id
    changes: tuple[Change, ...]

    def text(self, real: str) -> str:
        for change in sorted(self.changes, key=lambda c: -c.start):
            real = real[: change.start] + change.new + real[change.end :]
        return real


def number(text: str, rng: random.Random, step: int) -> Change | None:
    found = list(re.finditer(r"(?<![\d,.])\d+(?![\d,.])", text))
    if not found:
        return None
    m = rng.choice(found)
    return Change(m.start(), m.end(), m.group(), str(int(m.group()) + step), "number")


def label(text: str, rng: random.Random, step: int) -> Change | None:
    found = list(re.finditer(r"(?<![A-Za-z])[A-Z](?![A-Za-z0-9])", text))
    if not found:
        return None
    m = found[-1]  # the one asked about, usually
    other = "ABCDEHKMOP".replace(m.group(), "")[step - 1]
    return Change(m.start(), m.end(), m.group(), other, "label")


def word(text: str, rng: random.Random, step: int) -> Change | None:
    """A word of the data (before the question) replaced by its rival."""
    lead = _LEAD.search(text)
    data = text[: lead.start()] if lead else text
    found = []
    for stem, rival in RIVAL_STEMS:
        for m in re.finditer(rf"(?<![а-яё]){stem}[а-яё]*", data):
            new = rival + m.group()[len(stem) :]
            if morphology().word_is_known(new):  # not `равнобедренник`
                found.append((m.start(), m.group(), new))
    if not found:
        return None
    start, whole, new = min(found)
    return Change(start, start + len(whole), whole, new, "word")


def unit(text: str, rng: random.Random, step: int) -> Change | None:
    for old, news in UNITS.items():
        m = re.search(rf"\bв {old}\b", text)
        if m:
            return Change(m.start() + 2, m.end(), old, news[step - 1], "unit")
    return None


def asked(text: str, rng: random.Random, step: int) -> Change | None:
    """The asked noun (and its adjectives) replaced by another quantity, in the question's
    case; `step` 3: `косинус` of the asked angle (`Найдите косинус угла B`)."""
    phrase = _asked_phrase(text)
    if phrase is None:
        return None
    start, end, adjectives, noun, case = phrase
    lemma = noun.normal_form
    if step == 3:
        if lemma != "угол":
            return None
        inner = [_inflect(a, {"gent", "sing", "masc"}) for a in adjectives]
        new = " ".join(["косинус", *inner, _inflect(noun, {"gent", "sing"})])
        return Change(start, end, text[start:end], new, "asked")
    others = [q for q in QUANTITIES if q != lemma]
    target = others[(sum(map(ord, text)) + step) % len(others)]
    new_noun = morphology().parse(target)[0]
    gender = new_noun.tag.gender
    grammemes = {case, "sing"} | ({"inan"} if case == "accs" and gender == "masc" else set())
    words = [_inflect(a, grammemes | {gender}) for a in adjectives]
    new = " ".join([*words, _inflect(new_noun, {case, "sing"})])
    return Change(start, end, text[start:end], new, "asked")


def _asked_phrase(text: str) -> tuple[int, int, list, object, str] | None:  # type: ignore[type-arg]
    """The asked noun after the question's lead, with the adjectives before it."""
    lead = _LEAD.search(text)
    if lead is None:
        return None
    case = "nomn" if lead.group(1).startswith("Чему") else "accs"
    adjectives, start = [], lead.end()
    at = start
    for m in _WORD.finditer(text, start):
        if m.start() != at:
            return None  # punctuation, a label or a number between: not a plain phrase
        parsed = morphology().parse(m.group())[0]
        if parsed.tag.POS == "NOUN" and case in parsed.tag and "sing" in parsed.tag:
            return start, m.end(), adjectives, parsed, case
        if parsed.tag.POS != "ADJF":
            return None
        adjectives.append(parsed)
        at = m.end() + 1
    return None


def _inflect(parsed: object, grammemes: set[str]) -> str:
    done = parsed.inflect(grammemes)  # type: ignore[attr-defined]
    return done.word if done else parsed.word  # type: ignore[attr-defined]


Maker = Callable[[str, random.Random, int], Change | None]
STORED: dict[str, Maker] = {
    "number": number, "label": label, "word": word, "asked": asked, "unit": unit,
}  # fmt: skip
NOWHERE: dict[str, list[tuple[Maker, int]]] = {  # a variant: its changes (maker, step)
    "number": [(number, 2)],
    "label": [(label, 2)],
    "word + number": [(word, 1), (number, 2)],
    "asked": [(asked, 2)],
    "asked: косинус of the angle": [(asked, 3)],
    "unit": [(unit, 2)],
    "number + label + word": [(number, 3), (label, 3), (word, 1)],
    "number + label + asked": [(number, 3), (label, 3), (asked, 2)],
}


def changes_made(
    text: str, makers: list[tuple[Maker, int]], seed: str
) -> tuple[Change, ...] | None:
    changes = []
    for maker, step in makers:
        change = maker(text, random.Random(seed), step)
        if change is None or any(c.start < change.end and change.start < c.end for c in changes):
            return None
        changes.append(change)
    return tuple(changes)
