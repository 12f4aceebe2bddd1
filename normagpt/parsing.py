"""Pure functions: document codes, clause numbers, search terms, tolerant JSON (no I/O)."""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

_SPACES = re.compile(r"\s+")
# «5.1.3 Толщину…», «8.3.2. Для…», «п. 10.3.2»: clause numbers with two to five parts that
# open a line (a heading or a numbered paragraph) and are followed by a word.
_CLAUSE = re.compile(r"^\s*(?:п\.\s*)?(\d{1,2}(?:\.\d{1,3}){1,4})\.?\s+(?=[А-ЯЁA-Zа-яё(«])", re.M)
_WORD = re.compile(r"[0-9a-zа-яё]+(?:[.\-][0-9a-zа-яё]+)*", re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
# Russian inflection endings, longest first: a light stemmer for the SQLite search path
# and for snippets (PostgreSQL stems with its own `russian` dictionary).
_ENDINGS = sorted(
    """
    ыми ими ого его ому ему ыми ами ями иях ях ах ях ой ей ий ый ая яя ое ее ые ие ую юю
    ом ем ам ям ов ев ей ия ие ья ье ью ия а я о е ы и у ю ь й
    """.split(),
    key=len,
    reverse=True,
)
_STOP = set("и в во на по для с со к ко о об от до из у за при не что как или а но".split())


def code_key(code: str) -> str:
    """How a document code is compared: casefolded, ё→е, no spaces: «СП 63» → «сп63»."""
    return _SPACES.sub("", code).casefold().replace("ё", "е")


def code_matches(named: str, code: str) -> bool:
    """Whether a code a person or model named («СП 63.13330») denotes `code` (prefix either way)."""
    a, b = code_key(named), code_key(code)
    return bool(a) and (a == b or b.startswith(a) or a.startswith(b))


def kind_from_code(code: str) -> str:
    """The document kind its code names: gost, sp, snip or other."""
    head = code_key(code)
    for prefix, kind in (("снип", "snip"), ("гост", "gost"), ("сп", "sp")):
        if head.startswith(prefix):
            return kind
    return "other"


def clauses_find(text: str) -> list[str]:
    """Clause numbers that open a line of the page, in order, each once."""
    return list(dict.fromkeys(match.group(1) for match in _CLAUSE.finditer(text)))


def search_normalize(text: str) -> str:
    """Lower case, ё→е, one space: the form search indexes and queries share."""
    return _SPACES.sub(" ", text).strip().lower().replace("ё", "е")


def stem(word: str) -> str:
    """A light Russian stem: the word without its inflection ending, at least 3 letters kept."""
    word = search_normalize(word)
    if not word.isalpha():
        return word
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def search_terms(keywords: list[str]) -> list[str]:
    """The distinct stems of the words of `keywords`, stop words left out."""
    terms: list[str] = []
    for keyword in keywords:
        for word in _WORD.findall(search_normalize(keyword)):
            if word in _STOP or len(word) < 2:
                continue
            terms.append(stem(word))
    return list(dict.fromkeys(terms))


def snippet(text: str, terms: list[str], width: int = 240) -> str:
    """About `width` characters of `text` around the first place where a term occurs."""
    flat = _SPACES.sub(" ", text).strip()
    low = flat.lower().replace("ё", "е")
    positions = sorted(
        m.start() for term in terms if term for m in re.finditer(re.escape(term), low)
    )
    start = 0
    if positions:
        # the window holding the most distinct terms, the earliest such
        best = max(
            positions, key=lambda p: (len({t for t in terms if t in low[p : p + width]}), -p)
        )
        start = max(0, best - width // 4)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class JsonParseError(ValueError):
    """The model's reply holds no JSON object."""


def parse_json(reply: str) -> dict[str, Any]:
    """The JSON object in a model's reply: fenced or bare, repaired (trailing commas, quotes).

    Raises JsonParseError when nothing resembling an object can be read.
    """
    text = reply.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    elif "{" in text:
        text = text[text.index("{") : text.rindex("}") + 1 if "}" in text else len(text)]
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = json_repair.loads(text) if "{" in text else None
    if not isinstance(value, dict) or not value:
        raise JsonParseError("the reply holds no JSON object")
    return value
