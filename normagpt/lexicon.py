"""The lexicon (`lexicon.yaml`, data), read: the words that say nothing of what is asked
(left out), the norms' boilerplate (searched, but no sign of an answer), the quantity a
question asks for (its first quantity word: «высота», «уклон», «расстояние»…) with the words
norms use for it, lay words with theirs, the words of a document's title that tell its kind
(«Правила проектирования»), not its scope, the kinds norms name things by and the words they
name actions by. All are compared as stems, as the search compares words
(`normagpt.questions` reads a question with it).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.russian import morphology
from normagpt.parsing import search_stems

LEXICON = Path(__file__).with_name("lexicon.yaml")


@dataclass(frozen=True)
class Lexicon:
    filler: frozenset[str]  # stems left out of a search
    # stems of the norms' nouns the morphology reads first as talk («марш»: an interjection)
    named: frozenset[str]
    generic: frozenset[str]  # stems searched that do not tell whether a clause answers
    quantities: dict[str, tuple[str, ...]]  # a quantity's stem → the stems norms use for it
    synonyms: dict[str, tuple[str, ...]]  # a lay stem → the stems norms use for it
    # stems of a document's title that tell what kind of document it is, not what it is for
    document_kind: frozenset[str] = frozenset()
    # a quantity's stem → the dimension its answer is in («time», «area», «temperature»)
    dimensions: dict[str, str] = field(default_factory=dict)
    # a lay stem → the norms' stems that hold a claim's word but do not find a clause
    claims_only: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # a thing's stem → the stems of the kind norms name it by («баня»: «хозяйственная
    # постройка»), all of them held where a clause names it so
    kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # a verb's dictionary form → the stems of the words norms name its action by, any form
    # («менять»: «замена», «замены», «заменять»)
    actions: dict[str, frozenset[str]] = field(default_factory=dict)
    # «сколько квадратных метров», «при каком морозе» → the words of the quantity asked
    asked_as: tuple[tuple[re.Pattern[str], str], ...] = ()

    def asking_read(self, text: str) -> str:
        """`text` with each way of asking a quantity of `asked_as` as its words (capitalized
        where the way was: a sentence still starts as one)."""
        for pattern, words in self.asked_as:
            text = pattern.sub(functools.partial(_as_written, words), text)
        return text

    def quantities_named(self, stems: list[str]) -> tuple[str, ...]:
        """The quantities `stems` (a phrase's, in order) ask for: every quantity stem, in
        order, each once (the first is the quantity asked); not one after a number, a value
        given («ребёнка 4–5 лет», «через 3 дня»), not asked."""
        return tuple(
            dict.fromkeys(
                s
                for before, s in zip(["", *stems], stems, strict=False)
                if s in self.quantities and not before.isdigit()
            )
        )

    def said_as(self, stem: str, *, claims: bool = False) -> tuple[str, ...]:
        """The stems norms use for what `stem` says, besides itself (a quantity's and a lay
        word's); with `claims`, those too broad to find a clause by (`claims_only`)."""
        found = [*self.quantities.get(stem, ()), *self.synonyms.get(stem, ())]
        found += self.claims_only.get(stem, ()) if claims else ()
        return tuple(dict.fromkeys(s for s in found if s != stem))


def _as_written(words: str, match: re.Match[str]) -> str:
    """`words` in place of `match`, capitalized where it was."""
    return words.capitalize() if match[0][:1].isupper() else words


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (no object tags; libyaml's parser where PyYAML has it) that
    refuses a key written twice in one mapping: YAML keeps the last silently, and a word
    entered twice in the lexicon would lose its first norm words unseen."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                line = key_node.start_mark.line + 1
                raise ValueError(f"lexicon.yaml line {line}: «{key}» is already a key here")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def lexicon_data(text: str) -> dict[str, Any]:
    """The lexicon's YAML `text` read; ValueError naming the line of a key written twice in
    one section."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 (a safe loader)


@functools.cache
def lexicon() -> Lexicon:
    """The lexicon, read and stemmed once per process (its first search: libyaml's parser,
    where PyYAML has it, reads it in 5 ms, the pure-Python one in 37)."""
    data = lexicon_data(LEXICON.read_text(encoding="utf-8"))
    return Lexicon(
        filler=frozenset(search_stems(data["filler"])),
        named=frozenset(search_stems(data["named"])),
        generic=frozenset(search_stems(data["generic"])),
        quantities=_stemmed(data["quantities"]),
        synonyms=_stemmed(data["synonyms"]),
        claims_only=_stemmed(data["claims_only"]),
        kinds=_stemmed(data["kinds"]),
        actions={
            verb.replace("ё", "е"): frozenset(
                stem for word in [verb, *said] for stem in _forms_stemmed(word)
            )
            for verb, said in data["actions"].items()
        },
        document_kind=frozenset(search_stems(data["document_kind"])),
        asked_as=tuple(
            (re.compile(rf"(?<![а-яё]){_spaced(asked)}(?![а-яё])", re.I), quantity)
            for asked, quantity in data["asked_as"].items()
        ),
        dimensions={
            stem: dimension
            for dimension, said in data["dimensions"].items()
            for stem in search_stems(" ".join(said))
        },
    )


def _spaced(words: str) -> str:
    """A pattern of `words` as written: any spaces between them, a dot optional («кв. м»,
    «кв.м», «кв м»)."""
    return r"\s*".join(re.escape(part) for part in words.split()).replace(r"\.", r"\.?")


def _stemmed(entries: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """Each entry keyed by the stems of its word's forms (`_forms_stemmed`), the stems of
    its norm words for each."""
    out: dict[str, tuple[str, ...]] = {}
    for word, said in entries.items():
        stems = [stem for phrase in said for stem in search_stems(phrase)]
        for key in _forms_stemmed(word):
            out[key] = tuple(dict.fromkeys([*out.get(key, ()), *stems]))
    return out


# the forms of a noun's or an adjective's that say the same (no comparative, superlative)
_SAME = {"NOUN": frozenset(), "ADJF": frozenset({"Supr", "COMP", "Cmp2"})}


def _forms_stemmed(word: str) -> list[str]:
    """The stems of `word` and, a noun's or an adjective's written in its dictionary form,
    of its other forms the stemmer cuts otherwise («объём», «объёма»: «объ», «объем»;
    «котёл», «котла»): a question's «Какого объёма» is asked in the lexicon's word."""
    stems = search_stems(word)[:1]
    parsed = morphology().parse(word)[0]
    unlike = _SAME.get(parsed.tag.POS)
    if (
        not stems
        or unlike is None
        or parsed.normal_form.replace("ё", "е") != word.replace("ё", "е")
    ):
        return stems
    forms = (
        f.word
        for f in parsed.lexeme
        if f.tag.POS == parsed.tag.POS and not unlike & f.tag.grammemes
    )
    return list(dict.fromkeys([*stems, *(s for form in forms for s in search_stems(form)[:1])]))
