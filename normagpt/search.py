"""Searching the corpus (the seed's "search documents"): keywords → ranked clauses and pages.

The unit is the clause (`normagpt.indexing` splits every document into clauses at
ingestion): the clause that holds the asked phrase is one short text, not lost on a page
among clauses that repeat its words. Three ways in, best first:

1. A clause or table named by its number («п. 10.3.2», «таблица 5.1») is looked up
   directly, in the named documents when there are any.
2. A document named by its code or a short name («СП 63», «сп63», «63.13330») resolves
   through the alias table; its clauses come before others.
3. Full-text candidates: the clauses holding the query's rarer stems, best by the
   database's own ranking — SQLite's FTS5 `bm25`; on PostgreSQL (a stored tsvector with a
   GIN index) in tiers of which rare stems they hold, since `ts_rank` knows no word's
   rarity — at most CANDIDATES of them, and the tables holding them besides.

The candidates are then ranked here, the same on every database: the weight (idf) of each
query stem the clause holds, more when neighbouring stems of a phrase are neighbours in the
clause (the phrase, or the phrase with a word between), less for what the clause's first
sentence says beyond the query (another subject or condition: a clause about something
else). Clauses of documents in force come before those of replaced ones, unless the search
names the replaced one. How many clauses hold a stem is read from `NormTerm`, kept by
indexing: no search counts the corpus.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection
from django.db.models import Max, Min, Q
from django.utils import timezone

from core.exceptions import InvalidInput
from core.rows import JoinedLoader, rows_fetch
from normagpt.editions import clause_marks, document_in_force, holds_on
from normagpt.indexing import ALL_CLAUSES, GENERATION, PART, TABLE_MARK
from normagpt.judging import CONTEXT, Judge
from normagpt.models import (
    NormClause,
    NormDocument,
    NormDocumentAlias,
    NormPage,
)
from normagpt.parsing import (
    VARIANT_MIN,
    Query,
    alias_key,
    code_key,
    search_stems,
    search_terms,
    snippet,
    stems_related,
    table_refs,
)
from normagpt.questions import question_read

MAX_LIMIT = 50
# a clause that only points to a table: «5.3 X принимают по таблице 5.3.»
_POINTER = re.compile(r"^\S+ [^.]*(?:по|в) таблиц[еаы] [\w.]+\.?$")
MAX_TERMS = 32
CANDIDATES = 120  # clauses the database ranks for the final ranking here
TABLES = 20  # tables besides, on SQLite, when the candidates are that many
LONG, LONG_PAIRS = 6, 4  # a query this long pairs this many of its rarest stems instead
PAIR_TERMS = 3  # a candidate holds two of the query's this many rarest stems…
PAIRS_FEW = 20  # …or, when fewer clauses hold two, the rarest alone
RANK_MAX, CORRELATED = 3000, 3  # pairs likely to match more: all of the rarest at once…
AND_TERMS = 5  # …up to this many
NAMED_MAX = 200  # clauses looked up by number (every document's «4.1»)
PHRASE, NEAR = 1.0, 0.5  # the bonus for neighbours in a phrase, of their mean weight
LOCAL, LOCAL_MIN_ROWS = 0.5, 20  # a stem every candidate holds weighs LOCAL of one none holds
COVERAGE = 0.5  # a phrase half covered counts 0.7 of it: every concept of the query matters
BEYOND = 1.0  # the penalty for the statement's other stems (their mean weight)
_ZEROS = itertools.repeat(0.0)  # the weight of a stem the corpus does not count


@dataclass(frozen=True)
class ClauseHit:
    clause: NormClause  # the version holding on the search's day (`clause.amendment`)
    score: float
    expected: bool  # in a document the search named
    named: bool  # looked up by its number
    in_force: bool = True  # its edition, on the search's day
    # an amendment in force then names it, but its change is not made: the text here is
    # the one it changes (`editions.clause_marks`); '' when none
    mark: str = ""
    # whether it holds what the query asks (`_judged`), and the query's words it lacks
    answers: bool = True
    lacks: tuple[str, ...] = ()

    @property
    def page(self) -> NormPage:
        return self.clause.page

    @property
    def replaced(self) -> bool:
        return not self.in_force


@dataclass(frozen=True)
class SearchHit:
    """A page, for reading: the clauses found on it, best first."""

    page: NormPage
    rank: float
    expected: bool
    snippet: str
    clauses: list[ClauseHit] = field(default_factory=list)
    in_force: bool = True  # its edition, on the search's day
    as_of: date | None = None  # the search's day
    # the pages its clauses found run on to (a clause or table continued overleaf), in order
    pages_after: list[NormPage] = field(default_factory=list)

    @property
    def replaced(self) -> bool:
        return not self.in_force

    @property
    def answers(self) -> bool:
        """Whether a clause found on it holds what the query asks (`ClauseHit.answers`)."""
        return any(hit.answers for hit in self.clauses)


def documents_named(names: Iterable[str]) -> list[int]:
    """Ids of the documents `names` denote: an alias («СП 63», «63.13330»), or a code or the
    start of one («СП 63.13330» for «СП 63.13330.2018»)."""
    keys = [alias_key(name) for name in names if alias_key(name)]
    if not keys:
        return []
    by_code = Q()
    for key in keys:
        by_code |= Q(code_key__startswith=code_key(key))
    ids = set(NormDocumentAlias.objects.filter(key__in=keys).values_list("document_id", flat=True))
    ids |= set(NormDocument.objects.filter(by_code).values_list("pk", flat=True))
    return sorted(ids)


def expected_document_ids(expected_documents: list[str]) -> list[int]:
    """Ids of the documents the named codes denote (kept for callers of the page search)."""
    return documents_named(expected_documents)


def clauses_search(
    *,
    keywords: list[str],
    expected_documents: list[str] | None = None,
    limit: int = 10,
    pages: int = 0,
    as_of: date | None = None,
) -> list[ClauseHit]:
    """Clauses matching `keywords`, best first (see the module's docstring); with `pages`,
    only those of the first `pages` pages they are on (the others are not loaded). On the
    day `as_of` (default today): each clause in the text holding then (an amendment's, from
    its day), editions in force then before the others.

    InvalidInput when the keywords hold nothing to search or `limit` is out of 1–50.
    """
    day = (as_of or timezone.localdate()).isoformat()
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be 1–{MAX_LIMIT}, got {limit}", field="limit")
    query = question_read(keywords)
    query.phrases = [phrase[:MAX_TERMS] for phrase in query.phrases]
    if not (query.terms or query.clauses or query.documents):
        raise InvalidInput("keywords hold no searchable word", field="keywords")
    expected = documents_named([*(expected_documents or []), *query.documents])
    if query.documents and not expected and not query.terms and not query.clauses:
        return []  # only a document the corpus does not hold
    vocabulary = _vocabulary(query.terms, query.said_as)
    for term in query.context & vocabulary.weights.keys():  # the story around a question
        vocabulary.weights[term] *= CONTEXT
    named = _named(query, expected)
    ids = list(dict.fromkeys([*named, *_candidates(vocabulary, expected, query.context)]))
    rows = _rows(ids, vocabulary.variants, day)
    judge = Judge(query, vocabulary.weights)
    for row in rows.values():
        row.answers = judge.answers(row, named=row.id in named)
    best = _ranked_rows(rows, query, vocabulary, set(named), set(expected))[:limit]
    if pages:
        first = list(dict.fromkeys(row.page for _, row in best))[:pages]
        best = [(score, row) for score, row in best if row.page in first]
    clauses = _clauses_loaded([row.id for _, row in best])
    hits = [
        ClauseHit(
            clause=clauses[row.id],
            score=round(score, 4),
            expected=row.document in expected,
            named=row.id in named,
            in_force=not row.replaced,
            answers=row.answers,
            lacks=judge.lacks(row),
        )
        for score, row in best
        if row.id in clauses
    ]
    return _with_marks(_with_tables(hits, day)[:limit], day)


def _with_marks(hits: list[ClauseHit], day: str) -> list[ClauseHit]:
    """Each hit with the mark of an amendment in force on `day` that names its clause but
    could not change it (one query when no such amendment exists)."""
    amended = _amended({hit.clause.document_id for hit in hits}, day)
    if not amended:
        return hits
    marks: dict[tuple[int, str, str], str] = {}
    for document in amended:
        for kind in (NormClause.Kind.CLAUSE, NormClause.Kind.TABLE):
            numbers = [h.clause.number for h in hits if h.clause.document_id == document]
            found = clause_marks(
                document_id=document, numbers=numbers, day=date.fromisoformat(day), kind=kind
            )
            marks.update({(document, kind, n): mark for n, mark in found.items()})
    return [
        dataclasses.replace(hit, mark=mark)
        if (mark := marks.get((hit.clause.document_id, hit.clause.kind, hit.clause.number)))
        else hit
        for hit in hits
    ]


def _amended(documents: set[int], day: str) -> set[int]:
    """Those of `documents` with an amendment in force on `day` (ISO), in one query written
    out (most corpora have none: compiling the ORM's query cost more than the search's rest)."""
    if not documents:
        return set()
    where, params = _within("document_id", sorted(documents))
    on = connection.ops.adapt_datefield_value(date.fromisoformat(day))  # text on SQLite
    sql = f"""
        SELECT DISTINCT document_id FROM normagpt_normamendment
        WHERE {where} AND in_force_from <= %s
    """  # noqa: S608 (only placeholders are interpolated)
    return {document for (document,) in _fetch(sql, [*params, on])}


# a hit's page text and its clause's search text are long and no result reads them (the
# agent reads the text of a page it shows: loaded then, `core.rows`'s deferred fields)
_LOADER = JoinedLoader(
    NormClause, page=NormPage, document=NormDocument, defer=["search_text", "page__text"]
)
_PAGES = JoinedLoader(NormPage, document=NormDocument, defer=["text"])
_DOCUMENTS = JoinedLoader(NormDocument)
_PAGE_DOCUMENT = NormPage._meta.get_field("document")
_CLAUSE_PAGE = NormClause._meta.get_field("page")
_CLAUSE_DOCUMENT = NormClause._meta.get_field("document")
_REPLACED_BY = NormDocument._meta.get_field("replaced_by")


def _clauses_loaded(ids: list[int]) -> dict[int, NormClause]:
    """The clauses with their page, document and its successor, in two queries written out
    (the ORM's compiling of the joins cost more than running them)."""
    return _clauses_attached(_LOADER.by_ids(ids))


def _clauses_attached(clauses: dict[int, Any]) -> dict[int, NormClause]:
    """`clauses` (loaded with their page and document) with each page's document and each
    document's successor attached, as `select_related` would (no descriptor's checks)."""
    page_of, document_of = _CLAUSE_PAGE.get_cached_value, _CLAUSE_DOCUMENT.get_cached_value
    pairs: list[tuple[Any, Any]] = [(page_of(c), document_of(c)) for c in clauses.values()]
    successors = {document.replaced_by_id for _, document in pairs} - {None}
    by_pk = _DOCUMENTS.by_ids(successors) if successors else {}
    for page, document in pairs:
        _PAGE_DOCUMENT.set_cached_value(page, document)
        if document.replaced_by_id in by_pk:
            _REPLACED_BY.set_cached_value(document, by_pk[document.replaced_by_id])
    return clauses


def _pairs_where(
    pairs: Iterable[tuple[int, Any]], first: str, second: str
) -> tuple[str, list[Any]]:
    """SQL for (`first`, `second`) being one of `pairs` (a few: each an indexed lookup)."""
    ordered = sorted(pairs)
    where = " OR ".join([f"({first} = %s AND {second} = %s)"] * len(ordered))
    return f"({where})", [x for pair in ordered for x in pair]


def _with_tables(hits: list[ClauseHit], day: str) -> list[ClauseHit]:
    """Each clause that points to a table of its document («… принимают по таблице 5.3») is
    joined by that table (its version holding on `day`): before it when the clause only
    points (the values are in the table), after it otherwise."""
    refs = {hit.clause.pk: table_refs(hit.clause.text) for hit in hits}
    pointed = {(h.clause.document_id, n) for h in hits for n in refs[h.clause.pk]}
    if not pointed:
        return hits
    tables = {
        (t.document_id, t.number): t
        for t in _tables_pointed(pointed)
        if holds_on(day, t.valid_from, t.valid_to)
    }
    seen = {hit.clause.pk for hit in hits}
    out: list[ClauseHit] = []
    for hit in hits:
        joined = []
        for number in refs[hit.clause.pk]:
            table = tables.get((hit.clause.document_id, number))
            if table is not None and table.pk not in seen:
                seen.add(table.pk)
                # the table answers as the clause pointing to it does
                joined.append(dataclasses.replace(hit, clause=table, named=False, mark=""))
        only_points = bool(joined) and _POINTER.search(hit.clause.text.strip()) is not None
        out += [*joined, hit] if only_points else [hit, *joined]
    return out


def _tables_pointed(pointed: set[tuple[int, str]]) -> list[NormClause]:
    """The tables (document, number) `pointed` names, every version, loaded as the hits are
    (of two of one number, the one the load gives last is kept), in two queries written out."""
    which, params = _pairs_where(pointed, "document_id", "number")
    sql = f"SELECT id FROM normagpt_normclause WHERE kind = %s AND {which}"  # noqa: S608
    found = _fetch(sql, [NormClause.Kind.TABLE.value, *params])
    return list(_clauses_loaded([pk for (pk,) in found]).values())


def pages_search(
    *,
    keywords: list[str],
    expected_documents: list[str] | None = None,
    limit: int | None = None,
    as_of: date | None = None,
) -> list[SearchHit]:
    """The pages of the best clauses, in the order of their best clause, each with the
    clauses found on it, on the day `as_of` (see `clauses_search`). InvalidInput as
    `clauses_search`."""
    limit = limit or settings.NORMAGPT_PAGES_PER_STEP
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be 1–{MAX_LIMIT}, got {limit}", field="limit")
    hits = clauses_search(
        keywords=keywords,
        expected_documents=expected_documents,
        limit=min(MAX_LIMIT, limit * 4),
        pages=limit,
        as_of=as_of,
    )
    pages: dict[int, list[ClauseHit]] = {}
    for hit in hits:
        if hit.clause.page_id in pages or len(pages) < limit:
            pages.setdefault(hit.clause.page_id, []).append(hit)
    terms, day = search_terms(keywords), as_of or timezone.localdate()
    after = _pages_after([hit for found in pages.values() for hit in found])
    return [
        SearchHit(
            page=found[0].page,
            rank=found[0].score,
            expected=found[0].expected,
            snippet=snippet(found[0].clause.text, terms),
            clauses=found,
            in_force=found[0].in_force,
            as_of=day,
            pages_after=[after[key] for key in sorted(_spanned(found)) if key in after],
        )
        for found in pages.values()
    ]


def _spanned(hits: list[ClauseHit]) -> set[tuple[int, int]]:
    """(document, page number) of the pages after their first that `hits`' clauses run on to."""
    return {
        (hit.clause.document_id, number)
        for hit in hits
        for number in range(hit.page.number + 1, hit.page.number + hit.clause.span + 1)
    }


def _pages_after(hits: list[ClauseHit]) -> dict[tuple[int, int], NormPage]:
    """The pages `hits`' clauses run on to, by (document, number), with their document, in
    one query written out (their text deferred, as the hits' pages')."""
    wanted = _spanned(hits)
    if not wanted:
        return {}
    which, params = _pairs_where(wanted, "t0.document_id", "t0.number")
    pages: dict[int, Any] = _PAGES.where(which, params)
    return {(page.document_id, page.number): page for page in pages.values()}


@dataclass
class _Vocabulary:
    """The query's stems as the corpus knows them: each one's weight (idf) and clause count,
    and the corpus stems that are its variants («подва» of «подвал» and «подвальн» of
    «подвальных»: a stem and another a few letters longer)."""

    weights: dict[str, float]
    counts: dict[str, int]
    variants: dict[str, str]  # a corpus stem → the query stem it stands for
    total: int
    generation: int = 0  # of the counts (`indexing.GENERATION`)

    def forms(self, terms: Iterable[str]) -> list[str]:
        wanted = set(terms)
        return sorted(stem for stem, term in self.variants.items() if term in wanted)


def _vocabulary(terms: list[str], said_as: dict[str, tuple[str, ...]] | None = None) -> _Vocabulary:
    """The query's stems as the corpus knows them, each with the stems norms use for it
    (`said_as`: a lay word's, a quantity's) standing for it too; variants are found by their
    first letters (ranges of the stems' primary key: no stem table is scanned)."""
    said_as = said_as or {}
    words = list(dict.fromkeys([*terms, *(s for said in said_as.values() for s in said)]))
    prefixes = sorted({word[:VARIANT_MIN] for word in words if len(word) >= 3})
    where = " OR ".join(["term IN ({})".format(",".join(["%s"] * (len(words) + 2)))] + [
        "(term >= %s AND term < %s)"
    ] * len(prefixes))  # fmt: skip
    params: list[Any] = [*words, ALL_CLAUSES, GENERATION]
    for prefix in prefixes:
        params += [prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
    sql = f"SELECT term, clauses FROM normagpt_normterm WHERE {where}"  # noqa: S608
    known = dict(_fetch(sql, params))
    total = max(1, known.pop(ALL_CLAUSES, 0))
    generation = known.pop(GENERATION, 0)
    # related stems other than equal ones share their first three letters (`stems_related`):
    # each word is tried against those only, in the order the database gave them
    by_start: dict[str, list[tuple[str, int]]] = {}
    for stem, n in known.items():
        if n > 0:
            by_start.setdefault(stem[:3], []).append((stem, n))
    variants: dict[str, str] = {}
    counts: dict[str, int] = {}
    # each term's own forms first, then those of the words it is said as
    pairs = [(t, t) for t in terms] + [(t, w) for t in terms for w in said_as.get(t, ())]
    for term, word in pairs:
        for stem, n in by_start.get(word[:3], ()):
            if stem not in variants and stems_related(word, stem):
                variants[stem] = term
                counts[term] = counts.get(term, 0) + n
    weights = {term: _idf(n, total) for term, n in counts.items()}
    return _Vocabulary(weights, counts, variants, total, generation)


class _TermCounts:
    """How many clauses hold each stem, as this process read them, while the counts'
    generation (`indexing.GENERATION`, read with every search's vocabulary) is the one they
    were read in: the stems a candidate's statement says beyond the query are hundreds per
    search, mostly the same words (reading them cost a search 2.6 ms of 16 on the mixed
    benchmark corpus). Another generation, or more than LIMIT stems, starts anew; a stem
    the corpus does not count is left out, as the table leaves it."""

    LIMIT = 300_000

    def __init__(self) -> None:
        self.generation: int | None = None
        self.counts: dict[str, int | None] = {}

    def of(self, terms: Iterable[str], generation: int) -> dict[str, int]:
        counts = self.counts  # another thread may start anew: this search keeps its own
        if generation != self.generation or len(counts) > self.LIMIT:
            counts = {}
            self.counts, self.generation = counts, generation
        wanted = list(terms)
        missing = [term for term in wanted if term not in counts]
        if missing:
            where, params = _within("term", missing)
            sql = f"SELECT term, clauses FROM normagpt_normterm WHERE {where}"  # noqa: S608
            found = dict(_fetch(sql, params))
            counts.update({term: found.get(term) for term in missing})
        return {term: n for term in wanted if (n := counts.get(term)) is not None}


_TERM_COUNTS = _TermCounts()


def _fetch(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of a query written out here (no ORM query to build: this is the hot path)."""
    return rows_fetch(sql, params)


def _within(column: str, values: list[Any]) -> tuple[str, list[Any]]:
    """`column` among `values`: one array parameter on PostgreSQL (its driver parses a query
    once per text; a list of placeholders makes a new text for every length), a list of
    placeholders elsewhere. Words (stems: no space in one) go as one text the server splits:
    the driver quotes an array's texts one by one, a regex each (1 ms for a search's 800)."""
    if connection.vendor != "postgresql":
        return f"{column} IN ({','.join(['%s'] * len(values)) or 'NULL'})", list(values)
    if values and all(type(v) is str and v and " " not in v for v in values):
        return f"{column} = ANY(string_to_array(%s, ' '))", [" ".join(values)]
    return f"{column} = ANY(%s)", [list(values)]


def _idf(count: int, total: int) -> float:
    return math.log(1 + (total - count + 0.5) / (count + 0.5))


def _named(query: Query, expected: list[int]) -> list[int]:
    """Clauses named by their number: in the expected documents, else in any."""
    if not query.clauses:
        return []
    wanted = Q()
    for ref in query.clauses:
        wanted |= Q(kind=ref.kind, number__iexact=ref.number)
    qs = NormClause.objects.filter(wanted)
    if expected:
        qs = qs.filter(document_id__in=expected)
    return list(qs.order_by("document_id", "position").values_list("pk", flat=True)[:NAMED_MAX])


def _match_terms(vocabulary: _Vocabulary, context: frozenset[str] = frozenset()) -> list[str]:
    """The query's stems, rarest first; those of a question's story after the others."""
    counts = vocabulary.counts
    return sorted(counts, key=lambda t: (t in context, counts[t], t))


def _candidates(
    vocabulary: _Vocabulary, expected: list[int], context: frozenset[str] = frozenset()
) -> list[int]:
    """The best CANDIDATES clauses by the database's ranking: in the expected documents
    (with any stem), then in the corpus with two of the PAIR_TERMS rarest stems (the index
    intersects their postings: the database ranks hundreds of clauses, not every one that
    holds a common word). When even those pairs are common (their expected matches over
    RANK_MAX), with all of the rarest stems at once; when few clauses hold two, with the
    rarest alone. Each stem with its variants."""
    if not vocabulary.counts:
        return []
    found: list[int] = []
    if expected:
        found = _ranked([[vocabulary.forms(vocabulary.counts)]], expected)
    terms = _match_terms(vocabulary, context)
    # a question in a sentence: its rarest words may be its story's, not what it asks
    paired = LONG_PAIRS if len(terms) >= LONG else PAIR_TERMS
    groups = [vocabulary.forms([term]) for term in terms[:paired]]
    pairs = [[a, b] for a, b in itertools.combinations(groups, 2)] or [groups]
    common = len(groups) > 2 and _pairs_matched(vocabulary, terms[:paired]) > RANK_MAX
    every = [[vocabulary.forms([t]) for t in terms[:AND_TERMS]]]
    corpus = _ranked(every, []) if common else []
    asked = every
    if (not common or len(corpus) < PAIRS_FEW) and _tiered(groups):
        few = _pairs_matched(vocabulary, terms[:paired]) <= CANDIDATES
        corpus += _tiers(groups, CANDIDATES - len(corpus), few=few)
        asked = pairs
    elif not common or len(corpus) < PAIRS_FEW:
        corpus += _ranked(pairs, [])
        asked = pairs
    if len(corpus) < PAIRS_FEW and len(groups) > 1:
        corpus += _ranked([[groups[0]]], [])
    if len(corpus) >= CANDIDATES:  # a table (its rows: a long text) is asked for apart
        corpus += _tables(asked)
    return found + list(dict.fromkeys(corpus))


def _tables(alternatives: list[list[list[str]]]) -> list[int]:
    """The best TABLES tables holding one of the `alternatives`: on PostgreSQL through the
    tables' own index (migration 0010), on SQLite by the mark in their search text."""
    if connection.vendor != "postgresql":
        return _ranked([[*groups, [TABLE_MARK]] for groups in alternatives], [], TABLES)
    query = " | ".join(
        "(" + " & ".join("(" + " | ".join(g) + ")" for g in groups) + ")" for groups in alternatives
    )
    return _postgres(query, [], TABLES, tables=True)


def _tiered(groups: list[list[str]]) -> bool:
    return connection.vendor == "postgresql" and len(groups) == 3


def _tiers(groups: list[list[str]], limit: int, *, few: bool) -> list[int]:
    """PostgreSQL's candidates holding two of the three rarest stems (`groups`), in the
    tiers bm25 would make of them (`ts_rank` knows no word's rarity): all three first, then
    the rarest pair, and so on; each tier fills what is left of `limit`. Within a tier the
    database does not rank (`ts_rank` puts first the clauses that repeat the words, most
    often long ones on another subject, as the benchmark shows): the ranking here does.
    When `few` clauses are likely to hold two, one query takes them all."""
    a, b, c = ["(" + " | ".join(g) + ")" for g in groups]
    if few:
        return _postgres(f"({a} & {b}) | ({a} & {c}) | ({b} & {c})", [], limit, ranked=False)
    tiers = [f"{a} & {b} & {c}", f"{a} & {b} & !{c}", f"{a} & {c} & !{b}", f"{b} & {c} & !{a}"]
    # one statement: PostgreSQL runs the branches in turn and stops once `limit` rows came
    branch = (
        "(SELECT id, %s AS tier FROM normagpt_normclause "
        "WHERE search_vector @@ to_tsquery('simple', %s) ORDER BY id LIMIT %s)"
    )
    sql = " UNION ALL ".join([branch] * len(tiers)) + " LIMIT %s"
    params = [x for tier, query in enumerate(tiers) for x in (tier, query, limit)]
    rows = _fetch(sql, [*params, limit])
    return [int(pk) for pk, _ in sorted(rows, key=lambda row: row[1])]  # tier order, stable


def _pairs_matched(vocabulary: _Vocabulary, terms: list[str]) -> float:
    """About how many clauses hold two of `terms` (stems of one text go together more often
    than by chance: CORRELATED times)."""
    counts, total = vocabulary.counts, vocabulary.total
    pairs = itertools.combinations(terms, 2)
    return CORRELATED * sum(counts[a] * counts[b] / total for a, b in pairs)


def _ranked(alternatives: list[list[list[str]]], documents: list[int], limit: int = 0) -> list[int]:
    """Clauses holding every group of one of the `alternatives` (a group: a stem's forms,
    any of them), best first: at most `limit` (CANDIDATES)."""
    limit = limit or CANDIDATES
    if connection.vendor == "postgresql":
        query = " | ".join(
            "(" + " & ".join("(" + " | ".join(g) + ")" for g in groups) + ")"
            for groups in alternatives
        )  # stems are [0-9a-zа-я]+: nothing to escape
        return _postgres(query, documents, limit)
    match = " OR ".join(
        "(" + " AND ".join("(" + " OR ".join(f'"{t}"' for t in g) + ")" for g in groups) + ")"
        for groups in alternatives
    )
    return _sqlite(match, documents, limit)


def _postgres(
    query: str, documents: list[int], limit: int, *, ranked: bool = True, tables: bool = False
) -> list[int]:
    within = "AND document_id = ANY(%s)" if documents else ""
    within += " AND kind = 'table'" if tables else ""
    order = "ts_rank(search_vector, to_tsquery('simple', %s)) DESC, id" if ranked else "id"
    sql = f"""
        SELECT id FROM normagpt_normclause
        WHERE search_vector @@ to_tsquery('simple', %s) {within}
        ORDER BY {order} LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    params: list[Any] = [query, *([documents] if documents else []), *([query] if ranked else [])]
    return [int(pk) for (pk,) in _fetch(sql, [*params, limit])]


def _sqlite(match: str, documents: list[int], limit: int) -> list[int]:
    if not documents:
        return [pk for _, pk in _sqlite_match_ranked(match, None, limit)]
    # FTS5 seeks to a document's span of clause ids (they are stored together); the clause
    # versions of its amendments, made later, are asked apart by their ids
    clauses = NormClause.objects.filter(document_id__in=documents)
    spans = (
        clauses.filter(amendment=None)
        .values("document_id")
        .annotate(low=Min("id"), high=Max("id"))
        .values_list("low", "high")
    )
    found: list[tuple[float, int]] = []
    for span in spans:
        found += _sqlite_match_ranked(match, span, limit)
    versions = list(clauses.exclude(amendment=None).values_list("id", flat=True))
    if versions:
        found += _sqlite_match_ranked(match, None, limit, ids=versions)
    return [pk for _, pk in sorted(found)[:limit]]


def _sqlite_match_ranked(
    match: str, span: tuple[int, int] | None, limit: int, *, ids: list[int] | None = None
) -> list[tuple[float, int]]:
    within = "AND rowid BETWEEN %s AND %s" if span else ""
    if ids:
        within += f" AND rowid IN ({','.join(['%s'] * len(ids))})"
    sql = f"""
        SELECT bm25(normagpt_clause_fts) AS rank, rowid FROM normagpt_clause_fts
        WHERE normagpt_clause_fts MATCH %s {within}
        ORDER BY rank, rowid LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    rows = _fetch(sql, [match, *(span or ()), *(ids or ()), limit])
    return [(float(rank), int(pk)) for rank, pk in rows]


@dataclass(slots=True)
class _Row:
    """A candidate clause as the ranking sees it."""

    id: int
    document: int
    page: int
    replaced: bool
    beyond: set[str]  # its statement's stems its heading does not hold
    said: int  # how many stems its statement holds
    positions: dict[str, list[int]]  # where each query stem (by its variants) stands
    heading: int  # how many of the positions are its heading's (they come first)
    titled: frozenset[str]  # the query stems its document's title holds
    answers: bool = True  # whether it holds what the query asks (`judging.Judge`)


def _rows(ids: list[int], variants: dict[str, str], day: str) -> dict[int, _Row]:
    """The candidates as the ranking reads them, on `day` (ISO): a clause version not
    holding then is left out; an edition not in force then is marked replaced."""
    where, params = _within("c.id", ids)
    sql = f"""
        SELECT c.id, c.document_id, c.page_id, c.search_text, c.valid_from, c.valid_to,
               d.status, d.in_force_from, d.in_force_to, d.title
        FROM normagpt_normclause c JOIN normagpt_normdocument d ON d.id = c.document_id
        WHERE {where}
    """  # noqa: S608 (only placeholders are interpolated)
    out = {}
    replaced: dict[int, bool] = {}  # by document: its clauses come together
    titled: dict[int, frozenset[str]] = {}  # by document: the query stems its title holds
    term_of = variants.get
    # a heading's stems and their query stems (or None), split once: clauses share headings
    headings: dict[str, tuple[list[str], list[Any]]] = {}
    for pk, document, page, text, start, end, status, since, until, title in _fetch(sql, params):
        if (start is not None or end is not None) and not holds_on(day, start, end):
            continue  # another day's text of the clause (an amendment's, or the one it changed)
        if document not in replaced:
            replaced[document] = not document_in_force(day, status, since, until)
            titled[document] = frozenset(filter(None, map(term_of, _title_stems(title))))
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
        positions: dict[str, list[int]] = {}  # each query stem's, by its variants
        for index in itertools.compress(range(len(terms)), terms):  # few: no loop over all
            term = terms[index]
            if term in positions:
                positions[term].append(index)
            else:
                positions[term] = [index]
        said = set(stated)
        out[pk] = _Row(
            pk,
            document,
            page,
            replaced[document],
            said.difference(heading),
            len(said),
            positions,
            len(heading) + (len(stated) + _table_head(rest) if heading[-1:] == _TABLE else 0),
            titled[document],
        )
    return out


_TABLE = [TABLE_MARK]
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


@functools.lru_cache(maxsize=4096)
def _title_stems(title: str) -> tuple[str, ...]:
    """A document title's stems: every search reads those of its candidates' documents (a
    function of the text alone: nothing to go stale when a title changes)."""
    return tuple(search_stems(title))


def _ranked_rows(
    rows: dict[int, _Row],
    query: Query,
    vocabulary: _Vocabulary,
    named: set[int],
    expected: set[int],
) -> list[tuple[float, _Row]]:
    """The clauses best first: named ones, then those of the expected documents, then those
    of documents in force, then those answering the query (`judging.Judge`), each by score."""
    beyond = set().union(*(row.beyond for row in rows.values())) - vocabulary.variants.keys()
    counts = _TERM_COUNTS.of(beyond, vocabulary.generation)
    total = vocabulary.total
    other = {term: _idf(n, total) for term, n in counts.items()}
    local = _locally_weighted(rows, vocabulary)
    scoring = _Scoring(_phrases(query, local), other)
    scored = [(_score(row, scoring), row) for row in rows.values()]
    # a replaced edition named is not put below, unless an edition in force is named too
    # («СП 63.13330» names every edition: the one in force on the day comes first)
    named_in_force = any(not r.replaced for r in rows.values() if r.document in expected)

    def order(item: tuple[float, _Row]) -> tuple[bool, bool, bool, bool, float, int]:
        score, row = item
        outside = row.document not in expected
        replaced = row.replaced and (outside or named_in_force)
        return (row.id not in named, outside, replaced, not row.answers, -score, row.id)

    return sorted(scored, key=order)


def _locally_weighted(rows: dict[int, _Row], vocabulary: _Vocabulary) -> _Vocabulary:
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
    return _Vocabulary(weights, vocabulary.counts, vocabulary.variants, vocabulary.total)


class _Phrase(NamedTuple):  # a tuple: `_Scoring` unpacks it in its loop, no attribute reads
    weighted: tuple[tuple[str, float], ...]  # its stems the corpus knows, with their weight
    total: float  # their weight
    pairs: tuple[tuple[str, str, float], ...]  # neighbours and their mean weight


def _phrases(query: Query, vocabulary: _Vocabulary) -> list[_Phrase]:
    """The query's phrases as `_score` weighs them (once per search, not per clause)."""
    weights = vocabulary.weights
    out = []
    for phrase in query.phrases:
        weighted = tuple((t, weights[t]) for t in frozenset(phrase) & weights.keys())
        pairs = tuple(
            (a, b, (weights[a] + weights[b]) / 2)
            for a, b in itertools.pairwise(phrase)
            if a != b and a in weights and b in weights
        )
        out.append(_Phrase(weighted, sum(w for _, w in weighted), pairs))
    return out


class _Scoring:
    """`_score`'s view of one search: the phrases, their neighbour pairs in one tuple, the
    statement stems' weights, and the coverage of each set of query stems met so far (the
    candidates hold few distinct sets: most share the rarest stems they were found by)."""

    def __init__(self, phrases: list[_Phrase], other: dict[str, float]) -> None:
        self.phrases = phrases
        self.pairs = tuple(pair for phrase in phrases for pair in phrase.pairs)
        self.other = other
        self.covered: dict[frozenset[str], float] = {}

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


def _score(row: _Row, scoring: _Scoring) -> float:
    """The weight of the query's stems the clause holds, plus the neighbour bonus, less the
    weight of what its statement says beyond the query (another subject, another
    condition: the clause is about something else)."""
    positions = row.positions
    held = frozenset(positions)
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
    if row.said:  # `other` weighs no query stem
        score -= BEYOND * sum(map(scoring.other.get, row.beyond, _ZEROS)) / row.said
    return score
