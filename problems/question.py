"""What a condition asks, apart from what it gives.

A problem's text is its data (numbers, labels, the objects and what is given of them) and
its question: the sentence that asks (`Найдите …`, `Чему равен …`, `Вычислите …`) — the
asked quantity and its object, up to an `если` that gives more data — and the sentence
that fixes the answer's unit or form (`Ответ дайте в градусах`, `В ответе укажите r√10`).
Two texts whose data agree but that ask another quantity, of another object, or in another
unit are two problems: `parts` tells each word's part, `problems.differences` compares
them (`problems.words.phrases_differ`). An OCR-damaged query is read the same way: an
asking word glued to the next (`Найдитеугол`) or one typo away (`Найдтие`), a damaged
`если` (`еали`, `сели`), a damaged verb after `Ответ`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from problems.words import cyrillic, one_edit

Part = Literal["data", "asked", "unit", "lead"]  # lead: `Найдите`, `Ответ дайте`: not compared

# The words that open a question (a word's beginning), and those found glued to the next
# (`Найдитеугол`, `Чемуравнасторона`) …
_ASKING = ("найд", "найт", "вычисл", "определ", "чему", "каков", "какую", "каким", "сколько")
_ASKING_WHOLE = ("найдите", "вычислите", "определите", *(f"чемуравн{e}" for e in "еаоы"))
# … and those that go on with data after the asked phrase.
_MORE_DATA = ("если", "когда")
_LINKS = frozenset({"равен", "равна", "равно", "равны", "была", "будет"})  # `Чему равен`
_ANSWER = frozenset({"ответ", "ответе", "результат"})  # open the answer's unit or form
_BEFORE_UNIT = frozenset({"в", "во", "до", "с", "на"})  # `Ответ в градусах`: no verb


def parts(words: Sequence[tuple[str, bool]]) -> list[Part]:
    """What each word of a text is, from `(word as written, opens a sentence)` pairs.

    A sentence opened by an asking word is the question (that word, and `равен` after
    `Чему`, are its lead); after `если` it is data again. A sentence opened by `Ответ`,
    `В ответе` or `Результат` is the answer's unit or form (lead: up to its verb). The rest
    is data."""
    found: list[Part] = []
    role: Part = "data"
    for i, (word, opens) in enumerate(words):
        lower = cyrillic(word)
        if opens or (word[:1].isupper() and _asking(lower)):  # a question with no stop
            role = _opening(lower, cyrillic(words[i + 1][0]) if i + 1 < len(words) else "")
            found.append("lead" if role != "data" else "data")
            continue
        if role == "asked" and _more_data(lower):
            role = "data"
        elif found and found[-1] == "lead" and _still_lead(lower, role, words[i - 1][0]):
            found.append("lead")
            continue
        found.append(role)
    return found


def lead_split(written: str) -> list[str]:
    """A word as written, or an asking word and the word glued to it (`Найдитеугол`; a
    damaged one too: `Найдтесреднюю`; `Чемуравнасторона`)."""
    lower = cyrillic(written)
    for lead in _ASKING_WHOLE:
        if lower.startswith(lead) and len(lower) >= len(lead) + 3:
            return [written[: len(lead)], written[len(lead) :]]
        for cut in (len(lead), len(lead) - 1, len(lead) + 1):
            if one_edit(lower[:cut], lead) and len(lower) >= cut + 3:
                return [written[:cut], written[cut:]]
    return [written]


def _more_data(word: str) -> bool:
    """`если` (damaged too: `еали`, `сели`; glued: `еслиего`, `егслиего`) or `когда`: data
    follow."""
    if word.startswith(_MORE_DATA):
        return True
    near = any(one_edit(word[:n], "если") for n in (4, 5))
    return near and (word[:1] == "е" or word[:2] == "се")  # `десли` is `делит`


def _opening(first: str, second: str) -> Part:
    if _asking(first):
        return "asked"
    if _answering(first) or (first == "в" and _answering(second)):
        return "unit"
    return "data"


def _asking(word: str) -> bool:
    return word.startswith(_ASKING) or one_edit(word, "найдите")


def _answering(word: str) -> bool:
    return word in _ANSWER or any(one_edit(word, answer) for answer in _ANSWER)


def _still_lead(word: str, role: Part, before: str) -> bool:
    """Whether a word after the lead goes on with it: `Чему равен`, `Ответ дайте`, `В
    ответе укажите` (the word after `ответ`, whatever the damage made of it, unless a
    preposition)."""
    if role == "asked":
        return any(one_edit(word, link) for link in _LINKS)
    return _answering(word) or (_answering(cyrillic(before)) and word not in _BEFORE_UNIT)
