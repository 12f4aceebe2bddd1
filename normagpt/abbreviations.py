"""Abbreviations the corpus defines, read as the words they stand for.

Norms write their long names short: «КЕО» for «коэффициент естественной освещенности»,
«МГН» for «маломобильные группы населения», «ВЛ» for «воздушная линия». Each document lists
its own under a heading of abbreviations or symbols («4 Сокращения», «Обозначения и
сокращения»: a line «КЕО — коэффициент естественного освещения»); indexing keeps them
(`NormAbbreviation`), and a search whose question says every word of one also finds the
clauses writing it, the abbreviation standing where each of its words would
(`abbreviations_standing`). Defined in one document, an abbreviation is read in every one:
СП 267.1325800 defines «КЕО», СП 252.1325800 writes it («Значения КЕО для помещений ДОО …»).
A question saying the abbreviation itself is searched as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from normagpt.models import NormAbbreviation
from normagpt.parsing import Query, search_stems
from normagpt.search_candidates import sql_rows, sql_within

# a heading over a document's list of abbreviations (its first letter in either case), or
# the list's own lead in its text («4 Сокращения» on a line, «… следующие сокращения:»: a
# page read alone, or a section the splitter did not head)
_LISTED = re.compile(r"[сС]окращени|[оО]бозначени")
_LEAD = re.compile(rf"(?:{_LISTED.pattern})[а-яё]*[ \t]*(?::|\n)")
# a line of the list: the abbreviation, a dash, its words (to a «;», «,» or the line's end)
_DEFINED = re.compile(
    r"(?m)^[ \t]*(?P<short>[А-ЯЁ]{2,7})[ \t]*[—–-][ \t]*(?P<words>[а-яё][а-яё \t()-]{4,150})"
)
FEWEST = 2  # an abbreviation of one word is too loose to stand for it («ИП», one word of several)


def abbreviations_read(heading: str, text: str) -> list[tuple[str, str]]:
    """The abbreviations a clause under `heading` defines, each with its words: [] unless
    the heading, or the text's own lead, is one of a list of abbreviations or symbols."""
    if not (_LISTED.search(heading) or _LEAD.search(text)):
        return []
    found = []
    for match in _DEFINED.finditer(text):
        words = " ".join(match["words"].split()).strip(" -()")
        if len(search_stems(words)) >= FEWEST:
            found.append((match["short"], words))
    return found


def abbreviations_found(clauses: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """The fields of each abbreviation the clauses' (heading, text) define, once each."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for heading, text in clauses:
        for short, words in abbreviations_read(heading, text):
            stems = search_stems(words)
            found.setdefault(
                (short, " ".join(stems)),
                {
                    "short": short,
                    "expansion": words[:200],
                    "stem": (search_stems(short) or [short.lower()])[0][:40],
                    "stems": " ".join(stems)[:300],
                    "head": stems[0][:40],
                },
            )
    return list(found.values())


def abbreviations_refresh(document_id: int, clauses: Iterable[tuple[str, str]]) -> None:
    """The document's abbreviations anew, from its clauses' (heading, text)."""
    NormAbbreviation.objects.filter(document_id=document_id).delete()
    NormAbbreviation.objects.bulk_create(
        NormAbbreviation(document_id=document_id, **fields)
        for fields in abbreviations_found(clauses)
    )


def abbreviations_standing(query: Query, known: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The abbreviations whose every word the query says (a stem of it, or a word norms
    use for it), each with the query stems it stands for (those of `known`: the stems the
    corpus holds): «ке» (КЕО) for «коэффициент», «естествен», «освещен». One query."""
    held = set(known)
    said = {t: {t, *query.said_as.get(t, ())} for t in query.terms if t in held}
    stems = {s for forms in said.values() for s in forms}
    if not stems:
        return {}
    where, params = sql_within("head", sorted(stems))
    sql = f"SELECT stem, stems FROM normagpt_normabbreviation WHERE {where}"  # noqa: S608
    found: dict[str, tuple[str, ...]] = {}
    for short, words in sql_rows(sql, params):
        expansion = set(words.split())
        if short in stems or not expansion <= stems:
            continue  # the query says the abbreviation itself, or not every word of it
        terms = tuple(t for t, forms in said.items() if forms & expansion)
        found[short] = tuple(dict.fromkeys([*found.get(short, ()), *terms]))
    return found
