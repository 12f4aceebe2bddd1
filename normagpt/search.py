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
query stem the clause (or its document's title) holds, more when neighbouring stems of a
phrase are neighbours in the clause (the phrase, or the phrase with a word between), less
for a scope its document's title names and the query does not. Clauses of documents in
force come before those of replaced ones, unless the search names the replaced one. How
many clauses hold a stem is read from `NormTerm`, kept by indexing: no search counts the
corpus.

This module answers (the hits, their tables, marks and pages); the candidates and the
stems' weights come from `normagpt.search_candidates`, the ranking from
`normagpt.search_ranking`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from core.exceptions import InvalidInput
from core.rows import JoinedLoader
from normagpt.abbreviations import abbreviations_standing
from normagpt.editions import clause_marks, holds_on
from normagpt.everyday import everyday_weighed
from normagpt.judging import CONTEXT, Judge
from normagpt.models import (
    NormClause,
    NormDocument,
    NormDocumentAlias,
    NormPage,
)
from normagpt.parsing import (
    Query,
    alias_key,
    code_key,
    search_terms,
    snippet,
    table_refs,
)
from normagpt.questions import question_read
from normagpt.search_candidates import (
    Vocabulary,
    candidates_find,
    clauses_named,
    sql_rows,
    sql_within,
    vocabulary_read,
)
from normagpt.search_ranking import rows_load, rows_ranked

MAX_LIMIT = 50
# a clause that only points to a table: «5.3 X принимают по таблице 5.3.»
_POINTER = re.compile(r"^\S+ [^.]*(?:по|в) таблиц[еаы] [\w.]+\.?$")
MAX_TERMS = 32


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
    vocabulary, judged = _vocabulary_weighed(query)
    named = clauses_named(query, expected)
    ids = list(dict.fromkeys([*named, *candidates_find(vocabulary, expected, query.context)]))
    rows = rows_load(ids, vocabulary, day)
    judge = Judge(query, judged, vocabulary.variants, never=vocabulary.never)
    for row in rows.values():  # front matter, a text setting no value: no quantity asked
        row.answers = judge.answers(row, named=row.id in named) and (
            row.id in named or not ((row.front or row.valueless) and judge.quantities)
        )
    stated = judge.units or judge.written or judge.ends  # what a text must state besides
    check = functools.partial(_texts_judged, judge=judge) if stated else None
    ranked = rows_ranked(
        rows, query, vocabulary, set(named), set(expected), check=check, limit=limit
    )
    best = ranked[:limit]
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
            # ranked as answering or not, said to only where it names what is asked
            answers=row.answers and judge.names_asked(row, _headed(clauses[row.id])),
            lacks=judge.lacks(row),
        )
        for score, row in best
        if row.id in clauses
    ]
    return _with_marks(_with_tables(hits, day)[:limit], day)


def _headed(clause: NormClause) -> str:
    """A clause's heading and text: what it names, as a reader sees it."""
    return f"{clause.heading}\n{clause.text}" if clause.heading else clause.text


def _vocabulary_weighed(query: Query) -> tuple[Vocabulary, dict[str, float]]:
    """The query's vocabulary (with the abbreviations standing for its words:
    `normagpt.abbreviations`), its stems weighed for the ranking (a question's story less:
    CONTEXT; a whole question's everyday words less: `normagpt.everyday`), and their weights
    for the judge: the story's less, but the everyday words as the corpus weighs them (a
    clause lacking a common word, «дом», still holds less of a question it does not
    answer: a trap is told so)."""
    vocabulary = vocabulary_read(query.terms, query.said_as, query.apart)
    # «коэффициент естественной освещенности» is found as «КЕО» too
    vocabulary.standing = abbreviations_standing(query, vocabulary.counts)
    for term in query.context & vocabulary.weights.keys():  # the story around a question
        vocabulary.weights[term] *= CONTEXT
    judged = dict(vocabulary.weights)
    if query.sentence:
        everyday_weighed(vocabulary.weights, query.words)
    return vocabulary, judged


def _texts_judged(rows: list[Any], *, judge: Judge) -> None:
    """Those of `rows` (judged answering by their words) whose text does not state what is
    asked (`Judge.states`: no unit of the dimension asked, the quantity only as a
    difference, a distance from both ends asked to a third thing) judged not to: their
    texts read in one query."""
    by_id = {row.id: row for row in rows}
    where, params = sql_within("id", list(by_id))
    for pk, text in sql_rows(f"SELECT id, text FROM normagpt_normclause WHERE {where}", params):  # noqa: S608
        if not judge.states(text):
            by_id[pk].answers = False


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
    where, params = sql_within("document_id", sorted(documents))
    on = connection.ops.adapt_datefield_value(date.fromisoformat(day))  # text on SQLite
    sql = f"""
        SELECT DISTINCT document_id FROM normagpt_normamendment
        WHERE {where} AND in_force_from <= %s
    """  # noqa: S608 (only placeholders are interpolated)
    return {document for (document,) in sql_rows(sql, [*params, on])}


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
    found = sql_rows(sql, [NormClause.Kind.TABLE.value, *params])
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
