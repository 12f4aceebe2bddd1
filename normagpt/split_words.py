"""Words a PDF's text layer split by a space joined again: a font whose glyphs are wider
than their advance makes the text layer read a gap after them («освещ енность», «ж илы х»,
«М инистерство»: СП 52.13330.2016, СП 121.13330.2019, СП 12.13130.2009, СП 52-105-2009 and a
dozen more documents of the public dataset). `normagpt.parsing.text_clean` joins them as it
reads a page; whether a part is a word is pymorphy3's dictionary's say (`core.russian`)."""

from __future__ import annotations

import functools
import re

# letters one space apart on a line: where a text layer splits a word (a font whose glyphs
# are wider than their advance: «освещ енность», «ж илы х», «М инистерство»)
_SPACED_RUN = re.compile(r"(?<![0-9A-Za-zА-ЯЁа-яё])[А-ЯЁа-яё]+(?: [а-яё]+)+")
_ONE_LETTER_WORDS = frozenset("вксоуи")  # a preposition or a conjunction: never a part
JOINED_MIN = 4  # a word joined is this long at least («бы ть» → «быть»)
_LETTER_WORDS = frozenset("вксоуиаямтчгл")  # a letter alone that is a word in a norm


def words_rejoined(text: str) -> str:
    """`text` with the words its text layer split by a space joined again (СП 52.13330.2016,
    СП 121.13330.2019 and a few others of the public dataset: «Средняя горизонтальная
    освещ енность этих подъездов»): two parts one space apart whose whole is a word the
    dictionary knows while a part is not («освещ енность» → «освещенность»), three whose
    last is not («лю бы х» → «любых»), and the next part of a word so joined whose whole
    is a word («деф ормационны х» → «деформационных»). Two words are never joined, nor a
    word with the first part of the next («на следующ ие»), nor a one-letter preposition
    («к лест ничной»: «клест» is a word), nor a word set letter-spaced («Т а б л и ц а»).
    The dictionary is pymorphy3's (`core.russian`)."""
    if " " not in text:
        return text
    return _SPACED_RUN.sub(_run_rejoined, text)


def _run_rejoined(match: re.Match[str]) -> str:
    words = match.group(0).split(" ")
    out = [words[0]]
    glued = False  # whether out[-1] was joined: a word's next part may be a word too
    at = 1
    while at < len(words):
        after = words[at + 1] if at + 1 < len(words) else ""
        joined = _part_joined(out[-1], words[at], after, glued=glued)
        if joined is None:
            out.append(words[at])
            at, glued = at + 1, False
        else:
            out[-1] = joined[0]
            at, glued = at + joined[1], True
    return " ".join(out)


def _part_joined(part: str, word: str, after: str, *, glued: bool) -> tuple[str, int] | None:
    """The word `part` makes with the next `word` (or with it and `after`), and how many
    of them it takes; None when they are apart."""
    if part in _ONE_LETTER_WORDS or word in _ONE_LETTER_WORDS or _spaced(part, word, after):
        return None
    if not glued and after and _known(part) and not _known(word) and _known(word + after):
        return None  # a word, then a word's first part («на следующ ие»: not «наследующ»)
    two = part + word
    if not glued and _known(part) and _known(word):
        return None  # two words
    if len(two) >= JOINED_MIN and _known(two):
        return two, 1
    three = two + after
    fragment = not _known(word) or not _known(after)  # «прилегаю щ их», «лю бы х»
    if after and fragment and len(three) >= JOINED_MIN and _known(three):
        return three, 2
    return None


def _spaced(part: str, word: str, after: str) -> bool:
    """Whether `word` is a letter of a word set letter-spaced («Т а б л и ц а», «П р и м е
    ч а н и я»: a caption, read as such by `normagpt.clauses`): a letter alone between
    letters alone."""
    return len(word) == 1 and (len(part) == 1 or len(after) == 1)


@functools.lru_cache(maxsize=100_000)
def _known(word: str) -> bool:
    """Whether the dictionary knows `word` (any case; «е» for «ё»); a letter alone is a word
    only as a preposition, a conjunction or a unit («в», «и», «м», «т»: not «ж», «щ», «х»,
    which the dictionary knows as abbreviations and a split word leaves alone)."""
    from core.russian import morphology

    if len(word) == 1:
        return word.lower() in _LETTER_WORDS
    return bool(morphology().word_is_known(word.lower()))
