"""Whether the clauses a claim cites say what it is about: its telling words (those the corpus
seldom uses) found in what a reader of the clause reads with it (issue 49).

A reader of a clause reads with it its headings and its document's title; a table, with the
clause that points to it («… принимается … по данным таблицы 10.1»: what the table's values
are of); any clause, with its document's scope (section 1 «Область применения»: «… при
воздействии агрессивных сред»), its sentences that exclude left out. A claim's word is held
there as written, in another form, split by OCR, by its adjective that puts a vowel in its
stem («окно» by «оконных блоков»: `kin.stems_kin`), or by the norms' word for a lay one
(the lexicon); and besides:

- by the abbreviation of the words it opens («ОСП» for «ориентированно-стружечных плит»);
- a vague word of size («небольшой», «крупный») by a bound of an area, a volume or a number of
  people («площадью не более 20 м2», «более 50 человек»);
- a thickness in bricks («в полкирпича») by that thickness in millimetres («120 мм»);
- a span of time in words («за сутки», «в течение недели») by that span in its units («в
  течение 24 ч», «7 сут»);
- a long word by one the clause holds that differs from it in a letter inside (OCR's
  misreading of one letter), never at its start («непроходных» is not «проходных»)
  nor in its ending;
- a structure's element («плиты») by a clause on structures in general («монолитных
  конструкций»);
- a word the claim names as a kind of a group the clause names («твердых лиственных пород, в
  том числе березы») by a table of the clause's own section listing it in a row of that group
  («Твердые лиственные: дуб, береза, …»).

A word naming a building as a whole («дом», «здание», «сооружение») is held by any of them:
«жилого дома» of a table on «жилые здания».
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from rapidfuzz.distance import Levenshtein

from core.russian import morphology
from normagpt import claims as c
from normagpt.conditions import generic, table_segments
from normagpt.conditions.words import BRICK_THICKNESS, abbreviated, bricks_thickness
from normagpt.kin import stems_kin, stems_related
from normagpt.lexicon import lexicon
from normagpt.models import NormClause
from normagpt.parsing import FROM_TO, TABLE_MENTION, number_normal, search_stems
from normagpt.questions import word_of_talk

RARE_SHARE = 0.05  # a claim's word held by fewer clauses than this share tells what it is about
BUILDING_WORDS = "дом дома доме домов домам здание здания зданий сооружение сооружения"  # one
# a structure's elements: held by a clause on structures («конструкции») in general
ELEMENT_WORDS = """плита плиты перекрытие перекрытия покрытие балка балки ригель колонна колонны
    стена стены перегородка фундамент ферма фермы"""
# vague words of size: held by a size bounded from above («небольшой»), or from below
SMALL_WORDS = frozenset({"небольшой", "маленький", "малый", "мелкий", "некрупный"})
LARGE_WORDS = frozenset({"большой", "крупный", "значительный"})
SIZES = frozenset({"area", "volume", "people"})  # a thing small or large by its size
_EXCLUDING = re.compile(r"не\s+распространя|не\s+применя|не\s+устанавлива|не\s+учитыва", re.I)


def words_absent(
    sentence: str,
    clauses: list[NormClause],
    shares: Callable[[set[str]], dict[str, float]],
    *,
    tables: Iterable[str] = (),
) -> list[str]:
    """The claim's telling words (as written in it) that none of what a reader reads with the
    cited `clauses` holds (see the module); `tables`: the texts of the tables they point to
    (`pointed`); `shares` gives the share of clauses a stem is in.
    Words of talk («рассчитывают», «шести», «миллиметров»: `questions.word_of_talk`) tell
    nothing."""
    stems = claim_words(sentence)
    own = "\n".join(f"{x.heading} {x.text} {x.document.title}" for x in clauses)
    held = set(search_stems(own))
    near = set(search_stems(beside(clauses, tables)))  # the same word only: a scope is long
    # a lay word is held by the norms' words for it
    said_as = functools.partial(lexicon().said_as, claims=True)
    absent = {
        word: stem
        for word, stem in stems.items()
        if not any(stems_kin(s, h) for s in (stem, *said_as(stem)) for h in held)
        and not {stem, *said_as(stem)} & near
    }
    if (held | near) & _building():  # «дом» of a clause on «здания»
        absent = {w: stem for w, stem in absent.items() if stem not in _building()}
    # the clause's own text only: OCR's splits, other forms, what it says in other words
    absent = {w: stem for w, stem in absent.items() if not _read_otherwise(w, stem, own)}
    for held_otherwise in (_abbreviated, _sized, _in_bricks, _in_time, _structural, _misread):
        absent = {w: s for w, s in absent.items() if w not in held_otherwise(sentence, own)}
    if absent:
        absent = {w: s for w, s in absent.items() if not _listed(s, stems, clauses, held)}
    if not absent:
        return []
    share = shares(set(absent.values()))
    return [word for word, stem in absent.items() if share.get(stem, 0.0) <= RARE_SHARE]


def claim_words(sentence: str) -> dict[str, str]:
    """The words of a claim that could tell what it is about (as written → stem): its
    references, codes and grades left out, and the norms' boilerplate and words of talk."""
    words = re.findall(r"[а-яёa-z]{4,}", c.masked_text(sentence).lower())
    plain = generic()
    return {
        w: s[0]
        for w in words
        if (s := search_stems(w)) and s[0] not in plain and not word_of_talk(w)
    }


def says_something(sentence: str) -> bool:
    """Whether a claim names anything (`claim_words`): «Это требование установлено п. 5.7»,
    «Подробнее см. п. 5.7» name nothing; all they say is that the clause exists."""
    return bool(claim_words(sentence))


def far_end(claim: str, text: str, value: c.Value) -> str:
    """The far end of the distance «от … до …» the cited `text` gives `value` for, when the
    `claim` names its near end and nothing of its far one («Натяжной потолок монтируют с
    отступом от перекрытия не более 900 мм» of «Минимальное расстояние от уровня перекрытия
    (уровня … натяжного потолка) до воздухозаборного отверстия … не регламентируется.
    Максимальное расстояние должно быть не более 900 мм»: a distance to something else); ''
    otherwise. The distance is the one of the value's sentence, or of the sentence before
    when the value's measures none of its own; the only one there, and the only value of
    its kind there."""
    sentences = _SENTENCES.split(text)
    at = [i for i, part in enumerate(sentences) if c.value_held(value, c.values_find(part))]
    if len(at) != 1:
        return ""
    measured = sentences[at[0]]
    if not _FROM_OR_TO.search(measured) and at[0] > 0:
        measured = sentences[at[0] - 1]
    pairs = list(FROM_TO.finditer(measured))
    others = [v for v in c.values_find(measured) if c.value_held(value, [v]) is None]
    if len(pairs) != 1 or any(v.dimension == value.dimension for v in others):
        return ""  # several distances, or values for several: which is which is not read here
    near, far = (set(search_stems(pairs[0][side])) - generic() for side in ("near", "far"))
    said = set(search_stems(claim))
    named = lambda stems: any(stems_related(s, t) for s in stems for t in said)  # noqa: E731
    if not far or not near or not named(near) or named(far):
        return ""
    return " ".join(pairs[0]["far"].split())


_SENTENCES = re.compile(r"(?<=[.;])\s+(?=[А-ЯЁ-])")
_FROM_OR_TO = re.compile(r"(?<![а-яё])(?:от|до)\s", re.I)


# --- what a reader reads with a clause ---------------------------------------------------------


def beside(clauses: list[NormClause], pointed_to: Iterable[str] = ()) -> str:
    """What a reader reads beside the cited `clauses` (their headings and documents' titles
    besides): for a table the clauses pointing to it, the tables they point to (their
    texts `pointed_to`), and the documents' scope."""
    tables = [clause for clause in clauses if clause.kind == NormClause.Kind.TABLE]
    parts = [text for table in tables for text in pointing(table)]
    parts += pointed_to
    for document_id in dict.fromkeys(x.document_id for x in clauses):
        parts += scope(document_id)
    return "\n".join(parts)


def pointing(table: NormClause) -> list[str]:
    """The texts of the clauses of the table's document that point to it («по таблице 5.11»,
    «приведены в таблице 5.11», «см. табл. Г.1»)."""
    cited = re.compile(
        r"табл(?:\.|иц[аеуы]\w*)\s*"
        + r"\.\s?".join(map(re.escape, table.number.split(".")))
        + r"(?![\dа-яёa-z]|[.,]\d)",
        re.I,
    )
    found = NormClause.objects.filter(
        document_id=table.document_id, amendment=None, text__icontains=table.number.split(".")[-1]
    ).exclude(kind=NormClause.Kind.TABLE)
    return [text for text in found.values_list("text", flat=True) if cited.search(text)]


def pointed(clauses: list[NormClause]) -> list[str]:
    """The texts of the tables of their documents the `clauses` point to: what a reader
    turns to for the words they use («Плотность древесины … для условий эксплуатации по
    таблице 1 … 3 и 4»: table 1 says which are «влажный», «мокрый»)."""
    wanted = {
        (clause.document_id, number_normal(re.sub(r"\s", "", match["number"])))
        for clause in clauses
        for match in TABLE_MENTION.finditer(clause.text)
    } - {(clause.document_id, clause.number) for clause in clauses}
    if not wanted:
        return []
    found = NormClause.objects.filter(
        document_id__in={document for document, _ in wanted},
        number__in={number for _, number in wanted},
        kind=NormClause.Kind.TABLE,
        amendment=None,
    ).values_list("document_id", "number", "text")
    return [text for document, number, text in found if (document, number) in wanted]


def scope(document_id: int) -> list[str]:
    """The sentences of a document's scope (section 1 «Область применения») that say what it
    applies to, not what it leaves out («не распространяется на …»)."""
    texts = NormClause.objects.filter(
        document_id=document_id, amendment=None, heading__iregex=r"^\s*1\.?\s+Область\s+применения"
    ).values_list("text", flat=True)
    sentences = [s for text in texts for s in re.split(r"(?<=[.;])\s+", text)]
    return [s for s in sentences if not _EXCLUDING.search(s)]


# --- words held in other words -----------------------------------------------------------------


@functools.cache
def _building() -> frozenset[str]:
    return frozenset(search_stems(BUILDING_WORDS))


def _read_otherwise(word: str, stem: str, source: str) -> bool:
    """Whether the clause holds `word` in a form its stems miss: split by OCR or written
    apart («площ адке», «не защищенной» for «площадке», «незащищенной»), another form
    of the same word («окон» and «Окна»: one lemma, two stems), or a noun by its adjective
    whose stem drops the noun's fleeting vowel («угол»: «угловых соединений»; «потолок»:
    «потолочных панелей», its «к» said «ч»)."""
    if stem in _joined(source):
        return True
    parsed = morphology().parse(word)[0]
    if parsed.normal_form in _lemmas(source):
        return True
    bases = _oblique_bases(parsed)
    return bool(bases) and any(
        adjective.startswith(base) and len(adjective) - len(base) <= ADJECTIVE_ENDING
        for adjective in _adjectives(source)
        for base in bases
    )


ADJECTIVE_ENDING = 5  # «угл» + «овой», «потолоч» + «ный»: a noun's adjective adds at most this


def _oblique_bases(parsed: Any) -> tuple[str, ...]:
    """The bases an adjective of a noun whose stem drops a vowel is made from: the genitive's
    without its ending («угла»: «угл»), with its last consonant as adjectives say it («песка»:
    «песч»), or the noun itself so said («потолок»: «потолоч»); () for another word (the
    lemma check finds the rest)."""
    if parsed.tag.POS != "NOUN" or (genitive := parsed.inflect({"gent", "sing"})) is None:
        return ()
    base, noun = genitive.word.rstrip("аяыи"), parsed.normal_form
    if len(base) < 3 or noun.startswith(base):
        return ()  # no vowel dropped: the stem's own forms are found by it
    said = [base[:-1] + _ALTERNATING[base[-1]]] if base[-1] in _ALTERNATING else []
    said += [noun[:-1] + _ALTERNATING[noun[-1]]] if noun[-1] in _ALTERNATING else []
    return tuple(dict.fromkeys((base, *said)))


_ALTERNATING = {"к": "ч", "г": "ж", "х": "ш", "ц": "ч"}


def _adjectives(source: str) -> frozenset[str]:
    """The lemmas of the adjectives of `source` (their likeliest reading)."""
    return frozenset(lemma for lemma, part in _readings(source) if part == "ADJF")


@functools.lru_cache(maxsize=64)
def _joined(source: str) -> str:
    return "".join(c.flat(source).split())


def _lemmas(source: str) -> frozenset[str]:
    """The lemmas of the words of `source` (pymorphy3)."""
    return frozenset(lemma for lemma, _ in _readings(source))


@functools.lru_cache(maxsize=64)
def _readings(source: str) -> frozenset[tuple[str, str]]:
    """Each word of `source` read (its likeliest reading): its lemma and part of speech;
    asked only when a claim's word is not found by its stem (rare), once per text."""
    parse = morphology().parse
    words = set(re.findall(r"[а-яё]{3,}", source.lower()))
    return frozenset((p.normal_form, str(p.tag.POS)) for w in words if (p := parse(w)[0]))


def _abbreviated(sentence: str, source: str) -> set[str]:
    """The claim's words the source says by their abbreviation («ОСП»: «ориентированно-
    стружечных плит»: `conditions.words.abbreviated`)."""
    return {word for words in abbreviated(sentence, source).values() for word in words}


def _sized(sentence: str, source: str) -> set[str]:
    """The claim's vague words of size that the source bounds a size for: «небольшой» by «не
    более 20 м2» or «до 20 м2», «крупный» by «более 50 человек»."""
    parse = morphology().parse
    vague = {w: parse(w)[0].normal_form for w in re.findall(r"[а-яё]+", sentence.lower())}
    vague = {w: lemma for w, lemma in vague.items() if lemma in SMALL_WORDS | LARGE_WORDS}
    if not vague:
        return set()
    sizes = [v for v in c.values_find(source) if v.dimension in SIZES]
    upper = any(v.bound == "max" for v in sizes)
    lower = any(v.bound == "min" for v in sizes)
    return {w for w, lemma in vague.items() if (upper if lemma in SMALL_WORDS else lower)}


def _in_bricks(sentence: str, source: str) -> set[str]:
    """The words of a thickness in bricks («в полкирпича») the source states in millimetres
    («толщиной 120 мм»)."""
    held = c.values_find(source)
    out: set[str] = set()
    for match in BRICK_THICKNESS.finditer(sentence):
        said = bricks_thickness(match.group("bricks"))
        if c.value_held(c.values_find(f"{said} мм")[0], held) is not None:
            out |= set(re.findall(r"[а-яё]+", match.group("bricks").lower()))
    return out


# a span of time said in words, and the same span as a clause states it
TIME_WORDS = {"сутки": "24 ч", "суток": "24 ч", "неделя": "7 сут", "недели": "7 сут",
              "неделю": "7 сут", "полчаса": "30 мин", "полсуток": "12 ч"}  # fmt: skip


def _in_time(sentence: str, source: str) -> set[str]:
    """The claim's words of a span of time («сутки») the source states in its units («в
    течение 24 ч»)."""
    spans = {w for w in re.findall(r"[а-яё]+", sentence.lower()) if w in TIME_WORDS}
    if not spans:
        return set()
    held = c.values_find(source)
    return {w for w in spans if c.value_held(c.values_find(TIME_WORDS[w])[0], held) is not None}


MISREAD_LONG = 10  # a word this long differing by MISREAD_LETTERS inside is the same word
MISREAD_LETTERS = 1  # «водонапорной» (two) is not «водозаборной»


def _misread(sentence: str, source: str) -> set[str]:
    """The claim's long words the source holds with a letter changed inside: the same first
    four letters and last two, at most MISREAD_LETTERS edits between (not a prefix more or
    less: «непроходных», «неотапливаемых»)."""
    lowered = sentence.lower().replace("ё", "е")
    words = {w for w in re.findall(r"[а-я]+", lowered) if len(w) >= MISREAD_LONG}
    if not words:
        return set()
    own = _long_words(source)
    return {
        w
        for w in words
        if any(
            o[:4] == w[:4] and o[-2:] == w[-2:]
            and Levenshtein.distance(w, o, score_cutoff=MISREAD_LETTERS) <= MISREAD_LETTERS
            for o in own
        )
    }  # fmt: skip


@functools.lru_cache(maxsize=64)
def _long_words(source: str) -> frozenset[str]:
    text = c.flat(source).lower().replace("ё", "е")
    return frozenset(w for w in re.findall(r"[а-я]+", text) if len(w) >= MISREAD_LONG - 2)


def _structural(sentence: str, source: str) -> set[str]:
    """The claim's words for a structure's element («плиты», «балки») when the source speaks
    of structures in general («монолитных конструкций»), which the element is one of."""
    if not any(s.startswith("конструкц") for s in search_stems(source)):
        return set()
    elements = _elements()
    return {w for w in re.findall(r"[а-яё]+", sentence.lower()) if set(search_stems(w)) & elements}


@functools.cache
def _elements() -> frozenset[str]:
    return frozenset(search_stems(ELEMENT_WORDS))


def _listed(
    stem: str, stems: dict[str, str], clauses: Iterable[NormClause], held: set[str]
) -> bool:
    """Whether a table of a cited clause's own section (its heading) lists `stem` in a row
    that names a word the claim and the clause share (the group the claim names it a kind of:
    «Твердые лиственные: дуб, береза, …» for «твердых лиственных пород, в том числе
    березы»)."""
    shared = {s for s in stems.values() if s != stem and any(stems_related(s, h) for h in held)}
    for clause in clauses:
        if clause.kind == NormClause.Kind.TABLE or not clause.heading:
            continue
        tables = NormClause.objects.filter(
            document_id=clause.document_id, heading=clause.heading, kind=NormClause.Kind.TABLE,
            amendment=None,
        ).values_list("text", flat=True)  # fmt: skip
        for text in tables:
            if any(_row_names(row, stem, shared) for row in _rows(text)):
                return True
    return False


@functools.lru_cache(maxsize=64)
def _rows(text: str) -> list[frozenset[str]]:
    """A table's rows as the stems of their labels and their groups' (not the heading's, which
    every row has)."""
    rows = [segment.own | segment.context for segment in table_segments(text, "")]
    common = frozenset.intersection(*rows) if rows else frozenset()
    return [row - common for row in rows]


def _row_names(row: frozenset[str], stem: str, shared: set[str]) -> bool:
    """Whether a row holds `stem` and, besides it, a word of `shared` (not «лиственн» of
    «лиственница» for «лиственницы»)."""
    if not any(stems_related(stem, w) for w in row):
        return False
    others = [w for w in row if not stems_related(stem, w)]
    return any(stems_related(s, w) for s in shared for w in others)
