"""The edits an amendment makes in a clause's text (pure): a paragraph or an enumeration
item found and replaced, text put before an item or before the clause's note, words
replaced where they stand as words.

A clause's text keeps the page's line breaks, so a paragraph is told by where a line
begins: with a capital, a digit, a dash or «, after a line that ends a sentence (one or
two letters alone on a line, a page number read as a letter, are passed over). An
enumeration item is a paragraph that begins with a dash or «а)», «1)». Words are compared
with any spacing and any dash (a line break where a space was, «—» for «-»), and only
whole: «2,5» is not in «12,5», «читают» not in «считают».
"""

from __future__ import annotations

import re

_NOTE = re.compile(r"^[ \t]*П\s?р\s?и\s?м\s?е\s?ч\s?а\s?н\s?и\s?[ея]", re.MULTILINE)
_ITEM = re.compile(r"[ \t]*(?:[-–—−]\s|[а-я]\)|\d{1,2}\))")
_STARTS = re.compile(r"[ \t]*[А-ЯЁA-Z\d«\"(–—−-]")
_ENDS = ".:;!?"
_AFTER = re.compile(r"после «(?P<x>.*)»")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """The spans of the text's paragraphs, in order (see the module's docstring)."""
    starts, offset, last = [0], 0, ""
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        ended = last.rstrip("»)\"' ")[-1:] in tuple(_ENDS)
        if offset and ended and _STARTS.match(line):
            starts.append(offset)
        if len(stripped) > 2:
            last = stripped
        offset += len(line)
    ends = [*starts[1:], len(text)]
    return [
        (a, len(text[a:b].rstrip()) + a)
        for a, b in zip(starts, ends, strict=True)
        if text[a:b].strip()
    ]


def part_span(text: str, part: str) -> tuple[int, int] | None:
    """Where `part` («абзац 2», «абзац -1», «перечисление 5», «примечание») is in `text`
    (paragraphs and items counted before the note); None when it is not there."""
    kind, _, which = part.partition(" ")
    if kind == "примечание":
        note = _NOTE.search(text)
        return (note.start(), len(text.rstrip())) if note else None
    note = _NOTE.search(text)  # a note is not one of the clause's paragraphs
    spans = [span for span in paragraphs(text) if note is None or span[0] < note.start()]
    if kind == "перечисление":
        spans = [span for span in spans if _ITEM.match(text, span[0])]
    elif kind != "абзац":
        return None
    try:
        index = int(which)
        return spans[index - 1 if index > 0 else index]
    except (ValueError, IndexError):
        return None


def part_replaced(text: str, part: str, new: str) -> str | None:
    """`text` with `part` made `new` ('' removes it); None when the part is not there."""
    span = part_span(text, part)
    if span is None:
        return None
    before, after = text[: span[0]], text[span[1] :]
    if not new:
        return (before.rstrip() + ("\n" + after.lstrip() if after.strip() else "")).strip()
    return before + new.strip() + after


def text_inserted(text: str, part: str, new: str) -> str | None:
    """`text` with `new` on its own line before `part`; None when the part is not there."""
    span = part_span(text, part)
    if span is None:
        return None
    return f"{text[: span[0]]}{new.strip()}\n{text[span[0] :]}"


def text_appended(text: str, new: str, part: str = "") -> str | None:
    """`text` with `new` on its own line after `part`, or else at its end but before its
    note (a paragraph, a row, an item added is not part of the note). None when the part
    is not there."""
    if part:
        span = part_span(text, part)
        if span is None:
            return None
        return f"{text[: span[1]]}\n{new.strip()}{text[span[1] :]}"
    note = _NOTE.search(text)
    if note and note.start() > 0:
        head, tail = text[: note.start()].rstrip(), text[note.start() :]
        return f"{head}\n{new.strip()}\n{tail}"
    return f"{text.rstrip()}\n{new.strip()}"


def words_replaced(
    text: str, old: str, new: str, *, part: str = "", every: bool = False
) -> tuple[str, int]:
    """`text` with the words `old` made `new` ('' removes them), and how many were: where
    they stand once in the `part` (or the whole text when the part is not found; «после
    «X»»: the first time after the words X, before the next line beginning as X does), or
    everywhere (`every`). Where the text reads as `new` already, it is left alone."""
    start, end, entry = _scope(text, part)
    found = [m for m in _words(old).finditer(text, start, end) if not _already(text, m, old, new)]
    if entry:
        found = found[:1]
    elif not every and len(found) != 1:
        return text, 0
    for match in reversed(found):
        text = _put(text, match.start(), match.end(), new)
    return text, len(found)


def entry_in(text: str, part: str) -> bool:
    """Whether the entry a part «после «X»» names is in `text`."""
    after = _AFTER.fullmatch(part)
    return bool(after and after["x"].strip() and _words(after["x"]).search(text))


def _scope(text: str, part: str) -> tuple[int, int, bool]:
    """Where words are looked for, and whether it is an entry's (the first time counts): the
    entry named, the part, or the whole text when they are not found (a table's row named
    «Многослойное — пулестойкое» whose cells stand each on its own line)."""
    after = _AFTER.fullmatch(part)
    anchor = _words(after["x"]).search(text) if after and after["x"].strip() else None
    if after and anchor:
        first = after["x"].split()[0]
        following = re.compile(rf"\n[ \t]*{re.escape(first)}").search(text, anchor.end())
        return anchor.end(), following.start() if following else len(text), True
    span = part_span(text, part) if part and not after else None
    return (*span, False) if span else (0, len(text), False)


def _words(words: str) -> re.Pattern[str]:
    """`words` as a pattern: any spacing, any dash, whole words and numbers only."""
    pieces = []
    for token in re.split(r"(\s+|\s*[-–—−]\s*)", words.strip()):
        if not token:
            continue
        if token.isspace():
            pieces.append(r"\s+")
        elif token.strip() in "-–—−" and token.strip():
            pieces.append(r"\s*[-–—−]\s*")
        else:
            pieces.append(re.escape(token))
    head = r"(?<![\w])" if words.strip()[:1].isalnum() else ""
    tail = r"(?![\w])" if words.strip()[-1:].isalnum() else ""
    return re.compile(head + "".join(pieces) + tail)


def _already(text: str, match: re.Match[str], old: str, new: str) -> bool:
    """Whether the words found stand inside the new wording already («толщины» within
    «номинальной толщины» when «толщины» becomes «номинальной толщины»)."""
    at = new.find(old)
    if at < 0 or new == old:
        return False
    before, after = new[:at].strip(), new[at + len(old) :].strip()
    if before and not re.search(_words(before).pattern + r"\s*$", text[: match.start()]):
        return False
    return not after or bool(re.match(r"\s*" + _words(after).pattern, text[match.end() :]))


def _put(text: str, start: int, end: int, new: str) -> str:
    """`new` in place of text[start:end]; words removed leave no doubled space and no space
    before a mark."""
    before, after = text[:start], text[end:]
    if not new and before.endswith((" ", "\n")) and (not after or after[0] in " \n,.;:)"):
        before = before.rstrip(" ")
    return before + new + after
