"""The search's own ranking, the same on every database: the candidates' rows loaded
(`rows_load`) and scored (`rows_ranked`): the weight of each query stem a clause (or its
document's title) holds, more when a phrase's stems are neighbours in it, less for what its
document is for that the query does not name (its title's scope); a stem every candidate
holds weighs less among them. (What a clause says beyond the query is not held against it:
a penalty for its statement's other stems, weighed on every question set, put as many
answering clauses below as it put above.)
`normagpt.search` asks; `normagpt.search_candidates` gives the candidates and the stems'
weights.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from normagpt.editions import document_in_force, holds_on
from normagpt.judging import windows
from normagpt.lexicon import lexicon
from normagpt.models import NormClause
from normagpt.parsing import NUMERALS, Query, search_stems
from normagpt.search_candidates import TERM_COUNTS, Vocabulary, sql_rows, sql_within
from normagpt.terms import PART, TABLE_MARK

PHRASE, NEAR = 1.0, 0.5  # the bonus for neighbours in a phrase, of their mean weight
LOCAL, LOCAL_MIN_ROWS = 0.5, 20  # a stem every candidate holds weighs LOCAL of one none holds
COVERAGE = 0.5  # a phrase half covered counts 0.7 of it: every concept of the query matters
# a whole question's words the clause holds are those of its best this many stems (and its
# headings'): a question's many words are held by a long text (a table, a list) here and
# there, by the clause answering together
SPAN = 40
# a document whose title names what it is for («Здания дошкольных образовательных
# организаций») and the query does not: its clauses' scores less SCOPE times the mean
# weight of the query's stems, times the share of its title's words of scope (by weight)
# the query does not name. A person who asks of a building's entrance lighting asks of the
# lighting norm's, not of the kindergartens' norm repeating it
SCOPE = 2.0


@dataclass(slots=True)
class _Row:
    """A candidate clause as the ranking sees it."""

    id: int
    document: int
    page: int
    replaced: bool
    positions: dict[str, list[int]]  # where each query stem (by its variants) stands
    heading: int  # how many of the positions are its heading's (they come first)
    titled: frozenset[str]  # the query stems its document's title holds
    scope: frozenset[str]  # its document's title's words of scope (`_title_scope`)
    unnamed: frozenset[str]  # those of them the query does not name
    answers: bool = True  # whether it holds what the query asks (`judging.Judge`)
    # text with no number before the document's first heading (its cover, preface, contents,
    # introduction) or under «Область применения», «Нормативные ссылки», or a clause saying
    # what the document or its part is for («Настоящий подраздел содержит требования к …»):
    # what the document is, what it cites, no value a norm sets (`normagpt.search`)
    front: bool = False
    # a text writing no number, in digits or words (`_NUMBER`; the numbers of the clauses
    # and most documents it cites are no search text), that cites another document or is a
    # term's definition: it sets no value a question asks, it points to where one is
    # («Высоту уровня планшета сцены … принимают в соответствии с требованиями подпункта
    # 6.2.1.9 СП 309.1325800.2017») or says what a word means («ограждение на перепаде
    # высоты: Строительные конструкции …»). Another text writing none may answer («Толщина
    # льда … принимается по расчету», «на высоте замка»)
    valueless: bool = False


def rows_load(ids: list[int], vocabulary: Vocabulary, day: str) -> dict[int, _Row]:
    """The candidates as the ranking reads them, on `day` (ISO): a clause version not
    holding then is left out, an edition not in force then marked replaced, an abbreviation
    placed as each of its words (`Vocabulary.standing`)."""
    where, params = sql_within("c.id", ids)
    sql = f"""
        SELECT c.id, c.document_id, c.page_id, c.search_text, c.valid_from, c.valid_to,
               d.status, d.in_force_from, d.in_force_to, d.title, c.kind
        FROM normagpt_normclause c JOIN normagpt_normdocument d ON d.id = c.document_id
        WHERE {where}
    """  # noqa: S608 (only placeholders are interpolated)
    out = {}
    replaced: dict[int, bool] = {}  # by document: its clauses come together
    titles: dict[int, tuple[frozenset[str], frozenset[str], frozenset[str]]] = {}  # `_title_read`
    term_of, standing = vocabulary.variants.get, vocabulary.standing
    # a heading's stems and their query stems (or None), split once: clauses share headings
    headings: dict[str, tuple[list[str], list[Any]]] = {}
    for pk, document, page, text, start, end, status, since, until, title, kind in sql_rows(
        sql, params
    ):
        if (start is not None or end is not None) and not holds_on(day, start, end):
            continue  # another day's text of the clause (an amendment's, or the one it changed)
        if document not in replaced:
            replaced[document] = not document_in_force(day, status, since, until)
            titles[document] = _title_read(title, term_of)
        # the heading's, the statement's and the rest's stems, each stem (never empty, no
        # space in it) after one space (`clause_search_text`): split at it, not at any
        # whitespace (a per-character test); an empty part holds none
        parts = text.split(PART, 2)
        if parts[0] not in headings:
            stems = parts[0].split(" ") if parts[0] else []
            headings[parts[0]] = (stems, list(map(term_of, stems)))
        heading, terms = headings[parts[0]]
        stated = parts[1].split(" ") if len(parts) > 1 and parts[1] else []
        rest = parts[2].split(" ") if len(parts) > 2 and parts[2] else []
        terms = [*terms, *map(term_of, stated), *map(term_of, rest)]  # query stems, or None
        positions = _placed(terms)
        if standing:
            _standing_placed(positions, [*heading, *stated, *rest], standing)
        out[pk] = _Row(
            pk,
            document,
            page,
            replaced[document],
            positions,
            len(heading) + (len(stated) + _table_head(rest) if heading[-1:] == _TABLE else 0),
            *titles[document],
            front=(kind == NormClause.Kind.TEXT and _front(parts[0])) or _scope_statement(stated),
            # a set's test over the stems (a regex over every candidate's text cost 2 ms)
            valueless=(
                _defining(parts[0]) or not (_CITING.isdisjoint(stated) and _CITING.isdisjoint(rest))
            )
            and not _NUMBER.search(text, len(parts[0])),
        )
    return out


def _placed(terms: list[Any]) -> dict[str, list[int]]:
    """Each query stem's places among a text's `terms` (its stems' query stems, or None)."""
    positions: dict[str, list[int]] = {}
    for index in itertools.compress(range(len(terms)), terms):  # few: no loop over all
        term = terms[index]
        if term in positions:
            positions[term].append(index)
        else:
            positions[term] = [index]
    return positions


def _standing_placed(
    positions: dict[str, list[int]], stems: list[str], standing: dict[str, tuple[str, ...]]
) -> None:
    """`positions` with the places of the stems `standing` for query stems (an
    abbreviation's: «ке» where «коэффициент», «естествен», «освещен» are asked)."""
    placed = set()
    for index, stem in enumerate(stems):
        for term in standing.get(stem, ()):
            positions.setdefault(term, []).append(index)
            placed.add(term)
    for term in placed:
        positions[term] = sorted(set(positions[term]))


_TABLE = [TABLE_MARK]
# the stems of the headings of a document's scope and its references (sections 1 and 2 of
# every СП and ГОСТ)
_ABOUT = (
    frozenset(search_stems("Область применения")),
    frozenset(search_stems("Нормативные ссылки")),
)


_THIS = search_stems("Настоящий")[0]
# a number in a clause's search text: its digits, or a numeral's stem («трех», «полтора»)
_NUMBER = re.compile(
    r"\d|(?<![^ ])(?:" + "|".join(dict.fromkeys(search_stems(NUMERALS))) + ")(?![^ ])"
)
# the stems of another document cited in a clause's search text (its number is mostly left
# out)
_CITING = frozenset(search_stems("СП ГОСТ СНиП СанПиН ПУЭ"))
_TERMS = search_stems("Термины")[0]


@functools.lru_cache(maxsize=4096)
def _defining(heading: str) -> bool:
    """Whether a clause under `heading` (its stems) defines a term: its section is the
    document's «Термины и определения»."""
    return _TERMS in heading.split(" ")


_OF_DOCUMENT = frozenset(search_stems("свод правил стандарт раздел подраздел документ приложение"))


def _scope_statement(stated: list[str]) -> bool:
    """Whether a clause's statement (its stems) opens saying what the document or its part
    is for («Настоящий свод правил распространяется на …», «Настоящий подраздел …»)."""
    return stated[:1] == [_THIS] and bool(_OF_DOCUMENT.intersection(stated[1:3]))


@functools.lru_cache(maxsize=4096)
def _front(heading: str) -> bool:
    """Whether an unnumbered text under `heading` (its stems, "" for none) is the document's
    front matter (`_Row.front`)."""
    stems = frozenset(heading.split(" ")) if heading else frozenset()
    return not stems or any(about <= stems for about in _ABOUT)


TABLE_HEAD = 16  # a table's head (its column headings) is at most this many stems


def _table_head(stems: list[str]) -> int:
    """How many of a table's first stems (after its title) are its column headings: those
    before its first two numbers in a row (the columns' numbering, a row's values), at most
    TABLE_HEAD. They say what every row's values are («кратность … вытяжка»), as a clause's
    heading says what it is about."""
    for at in range(min(len(stems) - 1, TABLE_HEAD)):
        if stems[at].isdigit() and stems[at + 1].isdigit():
            return at
    return min(len(stems), TABLE_HEAD)


def _title_read(
    title: str, term_of: Callable[[str], str | None]
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """A document's title as the ranking reads it: the query stems it holds, its words of
    scope (`_title_scope`), and those of them the query does not name."""
    scope = _title_scope(title)
    unnamed = frozenset(stem for stem in scope if term_of(stem) is None)
    return frozenset(filter(None, map(term_of, _title_stems(title)))), scope, unnamed


@functools.lru_cache(maxsize=4096)
def _title_scope(title: str) -> frozenset[str]:
    """The stems of a document's title that say what it is for: not those of its kind
    (the lexicon's `document_kind`: «Правила проектирования»), not the norms' boilerplate
    («здания», «конструкции»: `generic`), no number or letter alone."""
    words = lexicon()
    plain = words.document_kind | words.generic
    return frozenset(
        stem
        for stem in _title_stems(title)
        if stem not in plain and stem.isalpha() and len(stem) > 2
    )


@functools.lru_cache(maxsize=4096)
def _title_stems(title: str) -> tuple[str, ...]:
    """A document title's stems: every search reads those of its candidates' documents (a
    function of the text alone: nothing to go stale when a title changes)."""
    return tuple(search_stems(title))


def rows_ranked(
    rows: dict[int, _Row],
    query: Query,
    vocabulary: Vocabulary,
    named: set[int],
    expected: set[int],
    *,
    check: Callable[[list[_Row]], None] | None = None,
    limit: int = 0,
) -> list[tuple[float, _Row]]:
    """The clauses best first: named ones, then those of the expected documents, then those
    of documents in force, then those answering the query (`judging.Judge`), each by score.
    With `check`, the answering ones not named among the first `limit` (all with none) are
    checked by it (it marks those not answering), until the first `limit` are all checked:
    those below are left unchecked (a text read costs; a caller keeps the first `limit`)."""
    scopes = set().union(*(row.scope for row in rows.values()))
    titles = TERM_COUNTS.idfs(scopes, vocabulary.generation, vocabulary.total)
    local = _locally_weighted(rows, vocabulary)
    spanned = local.weights if query.sentence else None
    known = vocabulary.weights.values()
    unit = SCOPE * sum(known) / len(known) if known else 0.0  # a scope not named at all
    scoped = _scoped(rows, titles, vocabulary.never, unit)
    scoring = _Scoring(_phrases(query, local), spanned, scoped)
    scored = [(_score(row, scoring), row) for row in rows.values()]
    # a replaced edition named is not put below, unless an edition in force is named too
    # («СП 63.13330» names every edition: the one in force on the day comes first)
    named_in_force = any(not r.replaced for r in rows.values() if r.document in expected)

    def order(item: tuple[float, _Row]) -> tuple[bool, bool, bool, bool, float, int]:
        score, row = item
        outside = row.document not in expected
        replaced = row.replaced and (outside or named_in_force)
        return (row.id not in named, outside, replaced, not row.answers, -score, row.id)

    scored.sort(key=order)
    checked: set[int] = set()
    while check is not None and (
        unchecked := [
            row
            for _, row in scored[: limit or None]
            if row.answers and row.id not in named and row.id not in checked
        ]
    ):
        checked.update(row.id for row in unchecked)
        check(unchecked)
        scored.sort(key=order)
    return scored


def _scoped(
    rows: dict[int, _Row], weights: dict[str, float], never: float, unit: float
) -> dict[int, float]:
    """Each candidate document's penalty for what it is for that the query does not name:
    `unit` times the share of its title's words of scope the query does not name, each by
    its weight (`weights`; a word no clause holds weighs `never`)."""
    out: dict[int, float] = {}
    for row in rows.values():
        if row.unnamed and row.document not in out:
            # summed in one order: a set's differs from process to process (`_phrases`)
            unnamed = sum(weights.get(stem) or never for stem in sorted(row.unnamed))
            scope = sum(weights.get(s) or never for s in sorted(row.scope))
            out[row.document] = unit * unnamed / scope
    return out


def _locally_weighted(rows: dict[int, _Row], vocabulary: Vocabulary) -> Vocabulary:
    """The vocabulary with each stem weighed also by how few of the candidates hold it: the
    candidates share the words of what is asked, and the words that set one apart from the
    others (a condition: «в производственных помещениях») tell which it is."""
    if len(rows) < LOCAL_MIN_ROWS:
        return vocabulary
    held: dict[str, int] = {}
    for row in rows.values():
        for term in row.positions:
            held[term] = held.get(term, 0) + 1
    weights = {
        term: weight * (LOCAL + 1 - held.get(term, 0) / len(rows))
        for term, weight in vocabulary.weights.items()
    }
    return Vocabulary(weights, vocabulary.counts, vocabulary.variants, vocabulary.total)


class _Phrase(NamedTuple):  # a tuple: `_Scoring` unpacks it in its loop, no attribute reads
    weighted: tuple[tuple[str, float], ...]  # its stems the corpus knows, with their weight
    total: float  # their weight
    pairs: tuple[tuple[str, str, float], ...]  # neighbours and their mean weight


def _phrases(query: Query, vocabulary: Vocabulary) -> list[_Phrase]:
    """The query's phrases as `_score` weighs them (once per search, not per clause)."""
    weights = vocabulary.weights
    out = []
    for phrase in query.phrases:
        # in the phrase's order, not a set's: a sum's last digit would differ from process
        # to process (Python seeds its string hashes anew), and with it a tie's order
        weighted = tuple((t, weights[t]) for t in dict.fromkeys(phrase) if t in weights)
        pairs = tuple(
            (a, b, (weights[a] + weights[b]) / 2)
            for a, b in itertools.pairwise(phrase)
            if a != b and a in weights and b in weights
        )
        out.append(_Phrase(weighted, sum(w for _, w in weighted), pairs))
    return out


class _Scoring:
    """`_score`'s view of one search: the phrases, their neighbour pairs in one tuple, and
    the coverage of each set of query stems met so far (the
    candidates hold few distinct sets: most share the rarest stems they were found by)."""

    def __init__(
        self,
        phrases: list[_Phrase],
        spanned: dict[str, float] | None = None,
        scoped: dict[int, float] | None = None,
    ) -> None:
        self.phrases = phrases
        self.pairs = tuple(pair for phrase in phrases for pair in phrase.pairs)
        self.covered: dict[frozenset[str], float] = {}
        self.spanned = spanned  # a whole question's stems' weights: held within SPAN
        self.scoped = scoped or {}  # by document: its penalty for its scope (`_scoped`)

    def coverage(self, held: frozenset[str]) -> float:
        """Each phrase a concept: its weight times the share of it held, to the power
        COVERAGE (covering every concept counts most)."""
        score = 0.0
        for weighted, total, _ in self.phrases:
            if total:
                part = 0.0
                for term, weight in weighted:  # loops: a comprehension is a call
                    if term in held:
                        part += weight
                score += total * (part / total) ** COVERAGE
        return score


def _spanned(row: _Row, weights: dict[str, float]) -> frozenset[str]:
    """The query stems of the clause's headings and of its SPAN stems holding the most of
    their `weights`."""
    positions = row.positions
    first = min(at[0] for at in positions.values()) if positions else 0
    if first >= row.heading and max(at[-1] for at in positions.values()) - first < SPAN:
        return frozenset(positions)  # all within one stretch (most clauses: short ones)
    heading = {term for term, at in positions.items() if at[0] < row.heading}
    events = sorted(
        (at, term) for term, found in positions.items() for at in found if at >= row.heading
    )
    best: set[str] = set()
    most = -1.0
    for inside in windows(events, SPAN):
        if (weight := sum(weights.get(t, 0.0) for t in inside)) > most:
            best, most = set(inside), weight
    return frozenset(heading | best)


def _score(row: _Row, scoring: _Scoring) -> float:
    """The weight of the query's stems the clause holds (a whole question's: within SPAN
    stems) or its document's title does (a person names the kind of building a norm is
    for: «частный дом» is «Дома жилые одноквартирные», whose clauses do not say «дом»), plus
    the neighbour bonus, less its document's penalty for a scope the query does not name
    (`_scoped`)."""
    positions = row.positions
    spanned = scoring.spanned
    held = frozenset(positions) if spanned is None else _spanned(row, spanned)
    held |= row.titled  # a frozenset: `covered` is keyed by it
    score = scoring.covered.get(held)
    if score is None:
        score = scoring.covered[held] = scoring.coverage(held)
    for a, b, weight in scoring.pairs:
        at_a, at_b = positions.get(a), positions.get(b)
        if at_a is None or at_b is None:
            continue
        # neighbours: a word apart (the phrase), or two or three (a word or two between)
        gap = abs(at_a[0] - at_b[0])
        if len(at_a) > 1 or len(at_b) > 1:
            for i in at_a:
                for j in at_b:
                    if abs(i - j) < gap:
                        gap = abs(i - j)
        if gap == 1:
            score += PHRASE * weight
        elif gap <= 3:
            score += NEAR * weight
    return score - scoring.scoped.get(row.document, 0.0)
