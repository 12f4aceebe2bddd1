"""Searching the corpus (the seed's "search documents"): keywords → ranked pages.

PostgreSQL: full-text search with the `russian` configuration over a stored, generated
`search_vector` column with a GIN index (migration 0002). SQLite: an FTS5 table kept in step
by triggers, queried with light Russian stems as prefixes. Pages of the expected documents
come first; then pages of documents in force, then of replaced ones (a replaced document
named among the expected ones is not put below); within each group, the better match first.

Top-k without ranking the whole corpus: in a large corpus (COMMON_MIN_PAGES) a word most
pages hold (COMMON_SHARE) tells nothing — bm25 gives it no weight — yet it makes every page
a match to rank. Such words are left out of the matching (still counted by the ranking on
PostgreSQL) while rarer ones remain, and the pages of the expected documents are matched
with every word; only when the rarer words find fewer pages than asked is every word used.
The candidates come in tiers, the next only when the last gave fewer pages than asked: the
pages holding every word, those holding every telling word, those holding two of them,
those holding any (PostgreSQL's ts_rank reads each candidate's vector out of row; FTS5's
bm25 reads each candidate's statistics). How
many pages hold a word is counted once per word and corpus size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Max, Min

from core.exceptions import InvalidInput
from normagpt.models import NormDocument, NormPage
from normagpt.parsing import code_matches, search_normalize, search_terms, snippet

MAX_LIMIT = 50
MAX_TERMS = 32
COMMON_MIN_PAGES = 1000
COMMON_SHARE = 0.5
PAIRS_MAX = 28  # the tier of pages holding two telling words: pairs of up to 8 words
_document_frequency: dict[tuple[str, str, int], int] = {}  # (vendor, word, pages) → pages


@dataclass(frozen=True)
class SearchHit:
    page: NormPage
    rank: float
    expected: bool
    snippet: str

    @property
    def replaced(self) -> bool:
        return self.page.document.status == NormDocument.Status.REPLACED


def expected_document_ids(expected_documents: list[str]) -> list[int]:
    """Ids of the documents the named codes denote («СП 63.13330» matches «СП 63.13330.2018»)."""
    named = [name for name in expected_documents if name.strip()]
    if not named:
        return []
    return [
        pk
        for pk, code in NormDocument.objects.values_list("pk", "code")
        if any(code_matches(name, code) for name in named)
    ]


def pages_search(
    *, keywords: list[str], expected_documents: list[str] | None = None, limit: int | None = None
) -> list[SearchHit]:
    """Pages matching any of `keywords`, expected documents first, best match first.

    InvalidInput when no keyword holds a searchable word or `limit` is out of 1–50.
    """
    limit = limit or settings.NORMAGPT_PAGES_PER_STEP
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be 1–{MAX_LIMIT}, got {limit}", field="limit")
    terms = search_terms(keywords)[:MAX_TERMS]
    if not terms:
        raise InvalidInput("keywords hold no searchable word", field="keywords")
    expected = expected_document_ids(expected_documents or [])
    if connection.vendor == "postgresql":
        ranked = _postgres(keywords, expected, limit)
    else:
        ranked = _sqlite(terms, expected, limit)
    pages = NormPage.objects.select_related("document", "document__replaced_by").in_bulk(
        [pk for pk, _ in ranked]
    )
    return [
        SearchHit(
            page=pages[pk],
            rank=round(rank, 6),
            expected=pages[pk].document_id in expected,
            snippet=snippet(pages[pk].text, terms),
        )
        for pk, rank in ranked
        if pk in pages
    ]


def _corpus_pages() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM normagpt_normpage")
        return int(cursor.fetchone()[0])


def _frequency(word: str, sql: str, pages: int) -> int:
    """How many pages hold `word` (cached per process for this corpus size)."""
    key = (connection.vendor, word, pages)
    if key not in _document_frequency:
        if len(_document_frequency) > 50_000:
            _document_frequency.clear()
        with connection.cursor() as cursor:
            cursor.execute(sql, [word])
            _document_frequency[key] = int(cursor.fetchone()[0])
    return _document_frequency[key]


def _telling(words: list[str], sql: str) -> list[str] | None:
    """The words that are not common in a large corpus, or None (a small corpus, or every
    word common): match with every word."""
    pages = _corpus_pages()
    if pages < COMMON_MIN_PAGES:
        return None
    rare = [w for w in words if _frequency(w, sql, pages) <= COMMON_SHARE * pages]
    return rare or None


def _postgres(keywords: list[str], expected: list[int], limit: int) -> list[tuple[int, float]]:
    words = list(dict.fromkeys(w for k in keywords for w in search_normalize(k).split()))
    words = words[:MAX_TERMS]
    count_sql = (
        "SELECT count(*) FROM normagpt_normpage "
        "WHERE search_vector @@ plainto_tsquery('russian', %s)"
    )
    rare = _telling(words, count_sql)
    if rare is not None:  # pages with every word, every telling word, then any telling word
        pairs = [f"{a} {b}" for i, a in enumerate(rare) for b in rare[i + 1 :]][:PAIRS_MAX]
        tiers = [[" ".join(words)], [" ".join(rare)], pairs or rare, rare]
        for matching in [t for n, t in enumerate(tiers) if t not in tiers[:n]]:
            found = _postgres_ranked(words, matching, expected, limit)
            if len(found) >= limit:
                return found
    return _postgres_ranked(words, words, expected, limit)


def _postgres_ranked(
    words: list[str], matching: list[str], expected: list[int], limit: int
) -> list[tuple[int, float]]:
    """Pages matching any of `matching` (or, in an expected document, any of `words`),
    ranked by all of `words`. The queries are written out (not a CTE) so that the planner
    sees constants and finds the candidates with the GIN index."""
    query = " || ".join(["plainto_tsquery('russian', %s)"] * len(words))
    match = " || ".join(["plainto_tsquery('russian', %s)"] * len(matching))
    sql = f"""
        SELECT p.id, ts_rank(p.search_vector, {query}) AS rank
        FROM normagpt_normpage p
        JOIN normagpt_normdocument d ON d.id = p.document_id
        WHERE p.id IN (
            SELECT id FROM normagpt_normpage WHERE search_vector @@ ({match})
            UNION
            SELECT id FROM normagpt_normpage
            WHERE document_id = ANY(%s) AND search_vector @@ ({query})
        )
        ORDER BY (p.document_id = ANY(%s)) DESC, (d.status = %s) ASC, rank DESC, p.id
        LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    replaced = NormDocument.Status.REPLACED.value
    params: list[Any] = [*words, *matching, expected, *words, expected, replaced, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(pk), float(rank)) for pk, rank in cursor.fetchall()]


def _sqlite(terms: list[str], expected: list[int], limit: int) -> list[tuple[int, float]]:
    count_sql = "SELECT count(*) FROM normagpt_page_fts WHERE normagpt_page_fts MATCH %s"
    words = [f'"{term}"*' for term in terms]
    every = " OR ".join(words)
    rare = _telling(words, count_sql)
    if rare is not None:
        chosen = None
        for matching in _tiers(words, rare, all_of=" AND ".join, any_of=" OR ".join):
            found = _sqlite_ranked(matching, [], limit)
            if len(found) >= limit:
                chosen = found
                break
        if chosen is not None:
            if expected:  # the expected documents' pages come first, matched with every word
                chosen = _merged(_sqlite_expected(every, expected, limit), chosen)
            return chosen[:limit]
    return _sqlite_ranked(every, expected, limit)


def _tiers(
    words: list[str],
    rare: list[str],
    *,
    all_of: Callable[[list[str]], str],
    any_of: Callable[[list[str]], str],
) -> list[str]:
    """The candidate tiers, narrowest first: every word, every telling word, two telling
    words, any telling word (repeats left out)."""
    pairs = [all_of([a, b]) for i, a in enumerate(rare) for b in rare[i + 1 :]][:PAIRS_MAX]
    tiers = [
        all_of(words),
        all_of(rare),
        any_of([f"({p})" for p in pairs]) if pairs else "",
        any_of(rare),
    ]
    return [t for n, t in enumerate(tiers) if t and t not in tiers[:n]]


def _merged(
    first: list[tuple[int, float]], then: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    seen = {pk for pk, _ in first}
    return first + [hit for hit in then if hit[0] not in seen]


def _sqlite_expected(match: str, expected: list[int], limit: int) -> list[tuple[int, float]]:
    """The best pages of the expected documents: FTS5 reads only each document's span of
    page ids (a rowid range it seeks to), not every match of the corpus."""
    spans = (
        NormPage.objects.filter(document_id__in=expected)
        .values("document_id")
        .annotate(low=Min("id"), high=Max("id"))
        .values_list("document_id", "low", "high")
    )
    sql = """
        SELECT p.id, -bm25(normagpt_page_fts) AS rank
        FROM normagpt_page_fts JOIN normagpt_normpage p ON p.id = normagpt_page_fts.rowid
        WHERE normagpt_page_fts MATCH %s AND normagpt_page_fts.rowid BETWEEN %s AND %s
          AND p.document_id = %s
        ORDER BY rank DESC, p.id
        LIMIT %s
    """
    found: list[tuple[int, float]] = []
    with connection.cursor() as cursor:
        for document_id, low, high in spans:
            cursor.execute(sql, [match, low, high, document_id, limit])
            found += [(int(pk), float(rank)) for pk, rank in cursor.fetchall()]
    found.sort(key=lambda hit: (-hit[1], hit[0]))
    return found[:limit]


def _sqlite_ranked(match: str, expected: list[int], limit: int) -> list[tuple[int, float]]:
    marks = ",".join("%s" for _ in expected) or "NULL"
    sql = f"""
        SELECT p.id, -bm25(normagpt_page_fts) AS rank
        FROM normagpt_page_fts JOIN normagpt_normpage p ON p.id = normagpt_page_fts.rowid
        JOIN normagpt_normdocument d ON d.id = p.document_id
        WHERE normagpt_page_fts MATCH %s
        ORDER BY (p.document_id IN ({marks})) DESC, (d.status = %s) ASC, rank DESC, p.id
        LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    params: list[Any] = [match, *expected, NormDocument.Status.REPLACED.value, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(pk), float(rank)) for pk, rank in cursor.fetchall()]
