"""Which of the quantities a question names it asks, and which it only tells: a rate's time
(«пешеходов в час»), a thing's property after a preposition («по длинной стороне»), a value
given in digits or words («ребёнка 4–5 лет», «от трех до семи лет»); the quantities another
is asked per («на площадь дома») and a distance's two ends. `normagpt.questions` reads a
question with them; `normagpt.judging` reads a distance's ends.
"""

from __future__ import annotations

import re

from core.russian import is_noun, may_be_adjective
from normagpt.lexicon import Lexicon, lexicon
from normagpt.parsing import FROM_TO, NUMERALS, search_stems

# «расстояние от A до B» (a word or three between: «расстояние по горизонтали от …»), its
# ends read as the claims' check reads a distance (`parsing.FROM_TO`)
DISTANCE = re.compile(r"расстояни[а-яё]*\s+(?:[а-яё]+\s+){0,3}?" + FROM_TO.pattern, re.I)


# a quantity per another («мощность котла на площадь дома»): what the second is a
# denominator of
_PER = re.compile(r"([а-яё]+)\s+(?:[а-яё]+\s+){0,3}?на\s+(?:[а-яё]+\s+)??([а-яё]+)", re.I)


def per_asked(text: str, words: Lexicon) -> list[str]:
    """The stems of the quantities `text` asks another quantity per («на площадь»)."""
    found = []
    for m in _PER.finditer(text):
        first, second = (search_stems(m.group(i))[:1] for i in (1, 2))
        if first and second and first[0] in words.quantities and second[0] in words.quantities:
            found.append(second[0])
    return found


def quantities_asked(
    keywords: tuple[str, ...], phrases: list[list[str]], words: Lexicon
) -> tuple[str, ...]:
    """The quantities `phrases` (the stems of `keywords`) name, in order, each once: not a
    rate's time, a thing's property nor a value given, told, not asked (`_rates`,
    `_attributes`, `_counted`)."""
    told = {
        s
        for keyword in keywords
        for s in (*_rates(keyword), *_attributes(keyword), *_counted(keyword))
    }
    named = (q for phrase in phrases for q in words.quantities_named(phrase))
    return tuple(dict.fromkeys(q for q in named if q not in told))


# a time a rate is counted per («Сколько пешеходов в час …», «литров в сутки»): what the
# quantity asked is divided by, not a time asked
_RATE = re.compile(
    r"(?<![а-яё])в\s+(час|сутки|день|год|месяц|неделю|смену|минуту|секунду)(?![а-яё])", re.I
)


def _rates(text: str) -> list[str]:
    """The stems of the times `text` counts a rate per (`_RATE`)."""
    return [stem for m in _RATE.finditer(text) for stem in search_stems(m.group(1))[:1]]


# a quantity after a number in words («от трех до семи лет», «через два года»): a value
# given, a condition, not a quantity asked (after digits: `Lexicon.quantities_named`)
_COUNTED = re.compile(r"(?<![а-яё])(?:" + "|".join(NUMERALS.split()) + r")\s+([а-яё]+)", re.I)


def _counted(text: str) -> list[str]:
    """The stems of the words `text` counts by a number in words (`_COUNTED`)."""
    return [stem for m in _COUNTED.finditer(text) for stem in search_stems(m.group(1))[:1]]


# an adjective after a preposition («по длинной стороне», «в высоком здании»): a thing's
# property told, a condition, not a quantity asked («Какой самый высокий порог …» asks it)
_AFTER_PREPOSITION = re.compile(
    r"(?<![а-яё])(?:по|на|в|во|с|со|у|для|из|от|до|при|под|над|за|к|о|об)\s+([а-яё]+)", re.I
)


def _attributes(text: str) -> list[str]:
    """The stems of the quantity words of `text` that are adjectives after a preposition
    (`_AFTER_PREPOSITION`)."""
    quantities = lexicon().quantities
    return [
        stem
        for m in _AFTER_PREPOSITION.finditer(text)
        for stem in search_stems(m.group(1))[:1]
        if stem in quantities and may_be_adjective(m.group(1)) and not is_noun(m.group(1))
    ]


def distance_ends(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The stems of the two ends of each distance «от A до B» `text` names; [] for none."""
    return [
        (frozenset(search_stems(m.group("near"))), frozenset(search_stems(m.group("far"))))
        for m in DISTANCE.finditer(text)
    ]
