"""What one act of an amendment changes (pure): «изложить» gives a new text (of a clause,
a range of clauses, a paragraph, a section's title, a whole appendix), «исключить» deletes
one or removes words, «заменить» replaces words pair by pair (quoted or not), «дополнить»
adds clauses, paragraphs, rows or words. An act whose words are not all understood is not
guessed at: it is named with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from normagpt.editions.entities import (
    ADD,
    APPEND,
    CLAUSE,
    INSERT,
    ORDER_KEPT,
    PART,
    REPLACE,
    SECTION,
    SUBSTITUTE,
    TABLE,
    TITLE,
    Change,
    Order,
    number_form,
    shortened,
)
from normagpt.editions.reading import LETTERS, NUMBER, NUMBERS, Act, Target, numbers_read

_WORDS = (
    r"(?:слов[оа]?|значени[ея]|ссылк[уи]|ссылок|обозначени[ея]|цифр[уы]|числ[оа]|текст"
    r"|единиц[уы]|знаки?|наименовани[ея]|термины?|марк[уи]|аббревиатур[уы])"
)
_QUOTED = r"«(?P<x>(?:[^«»]|«[^«»]*»)*)»"
_ORDINAL = (
    r"(?P<o>перв|втор|трет|четв[её]рт|пят|шест|седьм|восьм|девят|десят|предпоследн|последн)"
    r"(?:ый|ой|ий|ое|ье|ее|ом|ем|ьем)"
)
_ORDINALS = {"перв": 1, "втор": 2, "трет": 3, "четв": 4, "пят": 5, "шест": 6, "седьм": 7,
             "восьм": 8, "девят": 9, "десят": 10, "предпоследн": -2, "последн": -1}  # fmt: skip
# what may stand between what an order names and its verb, each: what it tells
_PLACES = [
    (rf"(?:в\s+)?{_ORDINAL}\s+(?P<n>абзац|перечислени)[а-я]*", "ordinal"),
    (rf"(?P<n>абзац|перечислени)[а-я]*\s+{_ORDINAL}", "ordinal"),
    (r"(?:в\s+)?примечани[еи]", "note"),
    (r"наименование(?:\s+(?:раздела|подраздела|приложения|таблицы))?", "title"),
    (rf"(?:в\s+)?граф[аеуы]\s*{_QUOTED}", "skip"),
    (rf"(?:для|в)\s+строк[иеу]\s*{_QUOTED}", "row"),
    (r"для\s+(?P<x>(?:ГОСТ(?:\s+Р)?|СП|СНиП|СанПиН|ISO|EN)\s+[\d.]+(?:\s*[—–-]\s*\d+)?)", "row"),
    (rf"после\s+слова?\s*{_QUOTED}", "after"),
    (rf"перед\s+слов(?:ом|ами)\s*{_QUOTED}", "before"),
    (rf"{_WORDS}\s*{_QUOTED}", "words"),
    (r"\([^()]*\)", "skip"),  # a remark: «(со ссылкой на пункт 5.3)»
]
_PLACE_PATTERNS = [(re.compile(p, re.IGNORECASE), what) for p, what in _PLACES]
_WORDING = re.compile(r"\s*(?:в\s+(?:(?:новой|следующей)\s+)?редакции)?\s*[:;.,]?", re.I)
_PUNCTUATION = re.compile(r"[\s.;:,]*")
_ON = re.compile(r"\s*на\s*")
_AND = re.compile(rf"\s*[,;]?\s*(?:и\s+|а\s+также\s+)?(?:{_WORDS}\s*:?\s*)?", re.I)
_WORDS_NAMED = re.compile(rf"\s*(?:{_WORDS})?\s*:?\s*", re.I)
_WORDS_GIVEN = re.compile(r"\s*(?:слов(?:ом|ами|о|а)|значением|обозначением)\s*:?\s*", re.I)
_ADDED = re.compile(
    r"\s*(?:нов(?:ым|ыми)\s+)?(?P<what>(?:под)?пункт[а-я]*|таблиц[а-я]*|приложени[а-я]*"
    rf"|(?:под)?раздел[а-я]*)\s+(?P<numbers>{NUMBERS}|{LETTERS})\s*(?:\([^()]*\))?\s*"
    r"(?:следующего\s+содержания|в\s+(?:следующей|новой)\s+редакции)?\s*[:;.]?\s*",
    re.I,
)
_APPENDED = re.compile(
    r"\s*(?:(?:нов|следующ)(?:им|ым|ими|ыми)\s+)?(?P<what>абзац[а-я]*|строк[а-я]*"
    r"|примечани[а-я]*|перечислени[а-я]*|позици[а-я]*|ссылк[а-я]*|граф[а-я]*|термин[а-я]*"
    r"|элемент[а-я]*|вид(?:ом|ами)(?:\s+[^\s:(«]+){0,3})\s*(?:\((?P<where>[^()]*)\))?\s*"
    r"(?:следующего\s+содержания)?\s*[:;.]?\s*",
    re.I,
)
_NUMBERED_LINE = re.compile(rf"^[ \t]*(?P<n>{NUMBER})(?=[.\s])", re.MULTILINE)


class _Unread(Exception):
    """An act not read: its reason."""


@dataclass(frozen=True)
class _Place:
    """What the words before a verb say: a part of the clause, a title, words it names."""

    part: str = ""
    title: bool = False
    after: str | None = None
    before: str | None = None
    words: str | None = None


def act_read(act: Act) -> Order:
    """The order `act` is: the changes it makes, or the reason it is not read."""
    targets = _named(act)
    try:
        changes = _READERS[act.verb.split()[0]](act, _place(act.place))
    except _Unread as exc:
        return Order(act.text, targets, (), str(exc))
    kept = shortened(act.text, ORDER_KEPT)
    targets += tuple((c.kind, c.number) for c in changes if c.mode == ADD)
    read = tuple(replace(c, order=kept, targets=targets) for c in changes)
    return Order(act.text, targets, read)


def _named(act: Act) -> tuple[tuple[str, str], ...]:
    """What a mark of the order goes on: what it names last, and the clauses named before
    (a clause holds the table it names: «Пункт 4.4. Таблица 1»)."""
    if not act.targets:
        return ()
    *before, last = act.targets
    named = [t for t in before if t.kind == CLAUSE] + [last]
    return tuple((t.kind, n) for t in named for n in t.numbers or ())


def _place(words: str) -> _Place:
    """The place words name (see `_PLACES`). _Unread when some are not understood."""
    place, rest = _Place(), words
    while rest := rest.lstrip(" \t\n.,;:"):
        for pattern, what in _PLACE_PATTERNS:
            match = pattern.match(rest)
            if match:
                place = _placed(place, what, match)
                rest = rest[match.end() :]
                break
        else:
            raise _Unread(f"a part of the clause the reader cannot find: «{shortened(rest, 80)}»")
    return place


def _placed(place: _Place, what: str, match: re.Match[str]) -> _Place:
    if what == "ordinal":
        noun = "абзац" if match["n"].lower().startswith("абзац") else "перечисление"
        stem = next(s for s in _ORDINALS if match["o"].lower().replace("ё", "е").startswith(s))
        return replace(place, part=place.part or f"{noun} {_ORDINALS[stem]}")
    if what == "note":
        return replace(place, part=place.part or "примечание")
    if what == "title":
        return replace(place, title=True)
    if what == "row":
        return replace(place, part=f"после «{_flat(match['x'])}»")
    words = _flat(match["x"]) if what in ("after", "before", "words") else None
    if what == "after":
        return replace(place, after=words)
    if what == "before":
        return replace(place, before=words)
    return replace(place, words=words) if what == "words" else place


def _target(act: Act) -> Target:
    """What the act changes: the last thing its order names. _Unread when none is named or
    a range cannot be told."""
    if not act.targets:
        raise _Unread("it names no clause, table or section")
    target = act.targets[-1]
    if target.numbers is None:
        raise _Unread(f"a range the reader cannot expand: «{target.written}»")
    return target


def _worded(act: Act, place: _Place) -> list[Change]:
    """«изложить (в новой редакции)», «читать»: a new text of what is named."""
    target = _target(act)
    wording = _WORDING.match(act.tokens[0].text)
    body = _body(act, target, wording.end() if wording else 0)
    if place.words or place.after or place.before:
        raise _Unread("new words for words inside the clause: not a wording the reader knows")
    if place.title:
        if target.kind != PART:
            raise _Unread("a title of what is not a section")
        return [Change(PART, n, body, TITLE) for n in target.numbers or ()]
    if place.part:
        return [
            Change(target.kind, n, body, REPLACE, part=place.part) for n in target.numbers or ()
        ]
    if target.kind == PART:
        return [Change(PART, n, body, SECTION) for n in target.numbers or ()]
    if target.kind == CLAUSE:
        return _clauses(target.numbers or (), body, REPLACE)
    return [Change(target.kind, n, body) for n in target.numbers or ()]


def _deleted(act: Act, place: _Place) -> list[Change]:
    """«исключить», «признать утратившим силу»: what is named deleted, or the quoted words
    removed from it («Исключить слова: «…»»)."""
    target = _target(act)
    if len(act.tokens) > 1:
        if not _WORDS_NAMED.fullmatch(act.tokens[0].text):
            raise _Unread(f"not understood: «{shortened(act.tokens[0].text, 80)}»")
        pairs = _pairs(act, removed=True)
        return [
            _substituted(target, n, old, new, place)
            for old, new in pairs
            for n in target.numbers or ()
        ]
    if not _PUNCTUATION.fullmatch(act.tokens[0].text) or place.words or place.after or place.before:
        raise _Unread(f"not understood: «{shortened(act.tokens[0].text, 80)}»")
    mode = SECTION if target.kind == PART and not place.part else REPLACE
    return [Change(target.kind, n, "", mode, part=place.part) for n in target.numbers or ()]


def _replaced(act: Act, place: _Place) -> list[Change]:
    """«заменить»: words replaced pair by pair, «А» на «Б», «В» на «Г» (or unquoted: ГОСТ
    12.0.004—90 на ГОСТ 12.0.004—2015), in what is named; «слова «А» заменить словами
    «Б»»."""
    target = _target(act)
    first = act.tokens[0].text
    if place.words is not None and _WORDS_GIVEN.fullmatch(first) and len(act.tokens) == 3:
        _tail(act.tokens[2].text)
        pairs = [(place.words, _flat(act.tokens[1].text))]
    elif len(act.tokens) > 1:
        if not _WORDS_NAMED.fullmatch(first):
            raise _Unread(f"not understood: «{shortened(first, 80)}»")
        pairs = _pairs(act, removed=False)
    else:
        pairs = _unquoted_pairs(first)
    return [
        _substituted(target, n, old, new, place) for old, new in pairs for n in target.numbers or ()
    ]


def _added(act: Act, place: _Place) -> list[Change]:
    """«дополнить», «вставить»: clauses, tables or an appendix added («… пунктом 2.7а
    (после пункта 2.7): «…»»), paragraphs, rows or items added to what is named («…
    перечислением (перед первым): «…»»), words added before or after words."""
    first = act.tokens[0].text
    if added := _ADDED.fullmatch(first):
        return _new_clauses(act, added)
    if appended := _APPENDED.fullmatch(first):
        return _appended(act, place, appended)
    if _WORDS_GIVEN.fullmatch(first) and len(act.tokens) == 3:
        _tail(act.tokens[2].text)
        return _words_added(act, place, _flat(act.tokens[1].text))
    if len(act.tokens) == 1 and _APPENDED.match(first):
        raise _Unread(f"nothing quoted to add, nor a place for it: «{shortened(first, 80)}»")
    raise _Unread(f"not understood: «{shortened(first, 80)}»")


def _new_clauses(act: Act, match: re.Match[str]) -> list[Change]:
    what = match["what"].lower()
    numbers = numbers_read(match["numbers"], plural=not what.endswith(("ом", "ей")))
    if numbers is None:
        raise _Unread(f"a range the reader cannot expand: «{match['numbers']}»")
    body = _body(act, None, match.end())
    if "приложени" in what or "раздел" in what:
        return [Change(PART, n, body, SECTION) for n in numbers]
    if "таблиц" in what:
        return [Change(TABLE, n, body, ADD) for n in numbers]
    return _clauses(numbers, body, ADD)


def _appended(act: Act, place: _Place, match: re.Match[str]) -> list[Change]:
    target = _target(act)
    body = _body(act, None, match.end())
    where = " ".join((match["where"] or "").lower().split())
    noun = "абзац" if match["what"].lower().startswith("абзац") else "перечисление"
    if where in ("перед первым", "перед первой"):
        mode, part = INSERT, f"{noun} 1"
    elif where in ("", "после последнего", "после последней"):
        mode, part = APPEND, place.part
    else:
        raise _Unread(f"a place the reader cannot find: «({where})»")
    return [Change(target.kind, n, body, mode, part=part) for n in target.numbers or ()]


def _words_added(act: Act, place: _Place, words: str) -> list[Change]:
    target = _target(act)
    if place.after is not None:
        old, new = place.after, f"{place.after} {words}"
    elif place.before is not None:
        old, new = place.before, f"{words} {place.before}"
    else:
        raise _Unread("words added with no words named to put them by")
    return [_substituted(target, n, old, new, place) for n in target.numbers or ()]


def _substituted(target: Target, number: str, old: str, new: str, place: _Place) -> Change:
    if not old:
        raise _Unread("no words named to replace")
    return Change(target.kind, number, new, SUBSTITUTE, old, place.part)


def _body(act: Act, target: Target | None, start: int) -> str:
    """The new text an act quotes: its quoted texts one after another (a line apart), with
    nothing but punctuation between and after them (its own words are understood up to
    `start`). Unquoted, a clause's new text is taken when it begins with the clause's
    number («Пункт 5.2.5 изложить …:\\n5.2.5 Для …»»)."""
    tokens = act.tokens
    rest = tokens[0].text[start:]
    if len(tokens) == 1:
        return _unquoted(rest, target)
    if rest.strip():
        raise _Unread(f"not understood: «{shortened(tokens[0].text, 80)}»")
    for between in tokens[2:-1:2]:
        if not _PUNCTUATION.fullmatch(between.text):
            raise _Unread(f"words between the quoted texts: «{shortened(between.text, 80)}»")
    _tail(tokens[-1].text)
    body = "\n".join(_lines(t.text) for t in tokens[1::2] if t.text.strip())
    if not body:
        raise _Unread("the quoted text is empty")
    return body


def _unquoted(rest: str, target: Target | None) -> str:
    body = re.sub(r"»?[\s.;:,]*$", "", rest.strip())
    numbers = target.numbers if target is not None and target.kind == CLAUSE else None
    first = _NUMBERED_LINE.match(body)
    if numbers and len(numbers) == 1 and first and number_form(first["n"]) == numbers[0]:
        return re.sub(r"^(\S+)[ \t]*\n", r"\1 ", body)  # «5.2.5 \nДля …»: one line
    raise _Unread("no quoted text to take")


def _tail(words: str) -> None:
    if not _PUNCTUATION.fullmatch(words):
        raise _Unread(f"words after the quoted text: «{shortened(words, 80)}»")


def _pairs(act: Act, *, removed: bool) -> list[tuple[str, str]]:
    """The quoted words an act replaces and those in their place, pair by pair («А» на «Б»,
    слова «В» на «Г», а также «Д» на «Е»; removed: «А», «Б», each by nothing)."""
    tokens, pairs, at = act.tokens, [], 1
    while at < len(tokens):
        old = _flat(tokens[at].text)
        if removed:
            new, at = "", at + 1
        elif at + 2 < len(tokens) and _ON.fullmatch(tokens[at + 1].text):
            new, at = _flat(tokens[at + 2].text), at + 3
        else:
            raise _Unread(f"«{shortened(old, 60)}» with no «на «…»»")
        pairs.append((old, new))
        if at == len(tokens) - 1:
            _tail(tokens[at].text)
            return pairs
        if not _AND.fullmatch(tokens[at].text):
            raise _Unread(f"not understood between the pairs: «{shortened(tokens[at].text, 60)}»")
        at += 1
    return pairs


def _unquoted_pairs(words: str) -> list[tuple[str, str]]:
    """Unquoted pairs «ГОСТ 12.0.004— 90 на ГОСТ 12.0.004—2015, ГОСТ … на ГОСТ …»."""
    named = _WORDS_NAMED.match(words)
    rest = words[named.end() if named else 0 :].strip().rstrip(".;,")
    pairs = []
    for item in re.split(r"[,;]\s+", rest) if rest else []:
        old, on, new = item.partition(" на ")
        if not on or not old.strip() or not new.strip() or " на " in new:
            raise _Unread(f"a pair the reader cannot tell: «{shortened(item, 60)}»")
        pairs.append((_flat(old), _flat(new)))
    if not pairs:
        raise _Unread("no words named to replace")
    return pairs


def _clauses(numbers: tuple[str, ...], body: str, mode: str) -> list[Change]:
    """The texts of clauses `numbers` in `body`, each from its number at a line's start to
    the next one's (one clause: the whole body, its number put first if it lacks it).
    _Unread when a number is not there in that order: not guessed at."""
    if len(numbers) == 1:
        first = _NUMBERED_LINE.match(body)
        has_number = first is not None and number_form(first["n"]) == numbers[0]
        return [Change(CLAUSE, numbers[0], body if has_number else f"{numbers[0]} {body}", mode)]
    starts, at = [], 0
    for number in numbers:
        found = next(
            (m for m in _NUMBERED_LINE.finditer(body, at) if number_form(m["n"]) == number), None
        )
        if found is None:
            raise _Unread(f"the quoted text holds no clause {number} where expected")
        starts.append(found.start())
        at = found.end()
    ends = [*starts[1:], len(body)]
    return [
        Change(CLAUSE, n, body[a:b].strip(), mode)
        for n, a, b in zip(numbers, starts, ends, strict=True)
    ]


def _lines(text: str) -> str:
    """A quoted text as kept: no spaces at its lines' ends, nor blank lines around it."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _flat(words: str) -> str:
    return " ".join(words.split())


_READERS = {
    "изложить": _worded,
    "читать": _worded,
    "исключить": _deleted,
    "признать": _deleted,
    "заменить": _replaced,
    "дополнить": _added,
    "вставить": _added,
}
