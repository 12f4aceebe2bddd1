"""Words a PDF's text layer split by a space joined again: a font whose glyphs are wider
than their advance makes the text layer read a gap after them («освещ енность», «ж илы х»,
«М инистерство»: СП 52.13330.2016, СП 121.13330.2019, СП 12.13130.2009, СП 52-105-2009 and a
dozen more documents of the public dataset). `normagpt.parsing.text_clean` joins them as it
reads a page; whether a part is a word is pymorphy3's dictionary's say (`core.russian`).
Words set letter-spaced (captions, table heads) are joined for search only
(`letter_spaced_joined`): the page keeps them as it sets them."""

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


# pieces one space apart on a line (lower case): where a word set letter-spaced may be
_PIECES = re.compile(r"(?<![0-9a-zа-яё])[а-яё]+(?: [а-яё]+)+(?![0-9a-zа-яё])")
_PROSE_LETTERS = frozenset("вксоуиая")  # a letter alone that is a word of running text
_ODD_LONE = re.compile(r"(?<![а-яё])[бгдежзйлмнпртфхцчшщъыьэюё](?![а-яё])")  # another one
_LONE_THREE = re.compile(r"(?<![а-яё])[а-яё] [а-яё] [а-яё](?![а-яё])")
SPACED_MIN = 4  # a word joined from letter-spaced pieces is this long at least
PIECE_MAX = 3  # and each of its pieces this long at most («пр и м е ч ан и е»)
_PIECES_MAX = 60  # a longer run is left as it is
_WORD_PIECES = 20  # a word is joined from this many pieces at most


def letter_spaced_joined(text: str) -> str:
    """`text` (lower case) with the words set letter-spaced joined, whole or in pieces, as
    table heads and captions are («с о д е р ж а н и е  п ы л е в и д н ы х» → «содержание
    пылевидных», «и гл и н и сты х ч а сти ц» → «и глинистых частиц», «кр уп н о сть ю»:
    ГОСТ 8736-2014's table 4), where a run of pieces holds three letters alone one after
    another or two that are no word of running text (not «в», «и», «с»…). The run is split
    into the fewest words (`_spaced_word`), a piece left alone where no word holds it, the
    longer words first where two splits are as few («и глинистых», not «игл инистых»).
    Search reads this (`normagpt.parsing.search_stems`); the text is left as the page
    sets it."""
    if " " not in text or (len(_ODD_LONE.findall(text)) < 2 and not _LONE_THREE.search(text)):
        return text  # (most texts: no run can hold a word set so)
    return _PIECES.sub(_pieces_joined, text)


def _pieces_joined(match: re.Match[str]) -> str:
    pieces = match.group(0).split(" ")
    odd = sum(1 for piece in pieces if len(piece) == 1 and piece not in _PROSE_LETTERS)
    if (odd < 2 and not _LONE_THREE.search(match.group(0))) or len(pieces) > _PIECES_MAX:
        return match.group(0)
    # best[i]: the fewest words pieces[:i] make, then the most of their squared lengths
    # (negated); start[i]: where the last of them starts
    best, start = [(0, 0)], [0]
    for end in range(1, len(pieces) + 1):
        score, first = min(
            ((best[first][0] + 1, best[first][1] - len(word) ** 2), first)
            for first in range(max(0, end - _WORD_PIECES), end)
            for word in ("".join(pieces[first:end]),)
            if end - first == 1 or _spaced_word(pieces[first:end], word)
        )
        best.append(score)
        start.append(first)
    words = []
    end = len(pieces)
    while end:
        words.append("".join(pieces[start[end] : end]))
        end = start[end]
    return " ".join(reversed(words))


def _spaced_word(pieces: list[str], word: str) -> bool:
    """Whether `pieces` set letter-spaced make `word`: a word the dictionary knows, of
    pieces no longer than PIECE_MAX (running text's «по данным» is no «поданным», «в
    водных» no «вводных»)."""
    if len(word) < SPACED_MIN or any(len(piece) > PIECE_MAX for piece in pieces):
        return False
    return _known(word)


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
