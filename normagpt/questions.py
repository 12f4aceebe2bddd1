"""How a question is read before it is searched: people ask in whole sentences and in their
own words («через сколько можно распалубить перекрытие зимой?»), norms word it otherwise
(«снятие опалубки … в зимних условиях»).

The lexicon (`lexicon.yaml`, data) gives the words that say nothing of what is asked (left
out), the quantity a question asks for (its first quantity word: «высота», «уклон»,
«расстояние»…) with the words norms use for it, and lay words with theirs. All are compared
as stems, as the search compares words.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from normagpt.parsing import Query, query_parse, search_stems

LEXICON = Path(__file__).with_name("lexicon.yaml")


@dataclass(frozen=True)
class Lexicon:
    filler: frozenset[str]  # stems left out of a search
    quantities: dict[str, tuple[str, ...]]  # a quantity's stem → the stems norms use for it
    synonyms: dict[str, tuple[str, ...]]  # a lay stem → the stems norms use for it

    def quantity(self, stems: list[str]) -> str:
        """The quantity `stems` (a question's, in order) ask for: the first quantity stem;
        '' when none."""
        return next((s for s in stems if s in self.quantities), "")

    def said_as(self, stem: str) -> tuple[str, ...]:
        """The stems norms use for what `stem` says, besides itself (a quantity's and a lay
        word's)."""
        found = [*self.quantities.get(stem, ()), *self.synonyms.get(stem, ())]
        return tuple(dict.fromkeys(s for s in found if s != stem))


def question_read(keywords: list[str]) -> Query:
    """`keywords` (a list of phrases, or a whole question) read as a search
    (`parsing.query_parse`): the lexicon's filler left out, the quantity asked found, and
    each stem's norm wordings attached. A phrase of filler alone is kept as it is (the
    search would hold nothing else)."""
    query = query_parse(keywords)
    words = lexicon()
    phrases = [[s for s in phrase if s not in words.filler] or phrase for phrase in query.phrases]
    query.phrases = phrases
    query.quantity = words.quantity([stem for phrase in phrases for stem in phrase])
    query.said_as = {stem: said for stem in query.terms if (said := words.said_as(stem))}
    return query


@functools.cache
def lexicon() -> Lexicon:
    """The lexicon, read and stemmed once per process."""
    data = yaml.safe_load(LEXICON.read_text(encoding="utf-8"))
    return Lexicon(
        filler=frozenset(search_stems(data["filler"])),
        quantities=_stemmed(data["quantities"]),
        synonyms=_stemmed(data["synonyms"]),
    )


def _stemmed(entries: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for word, said in entries.items():
        for key in search_stems(word)[:1]:
            stems = [stem for phrase in said for stem in search_stems(phrase)]
            out[key] = tuple(dict.fromkeys([*out.get(key, ()), *stems]))
    return out
