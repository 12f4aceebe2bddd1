"""Searching the corpus (the seed's "search documents"): keywords → ranked pages.

PostgreSQL: full-text search with the `russian` configuration over a stored, generated
`search_vector` column with a GIN index (migration 0002). SQLite: an FTS5 table kept in step
by triggers, queried with light Russian stems as prefixes. Pages of the expected documents
come first; then pages of documents in force, then of replaced ones (a replaced document
named among the expected ones is not put below); within each group, the better match first.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from core.exceptions import InvalidInput
from normagpt.models import NormDocument, NormPage
from normagpt.parsing import code_matches, search_normalize, search_terms, snippet

MAX_LIMIT = 50
MAX_TERMS = 32


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


def _postgres(keywords: list[str], expected: list[int], limit: int) -> list[tuple[int, float]]:
    words = list(dict.fromkeys(w for k in keywords for w in search_normalize(k).split()))
    words = words[:MAX_TERMS]
    query = " || ".join(["plainto_tsquery('russian', %s)"] * len(words))
    sql = f"""
        SELECT p.id, ts_rank(p.search_vector, q.query) AS rank
        FROM normagpt_normpage p
        JOIN normagpt_normdocument d ON d.id = p.document_id,
        (SELECT {query} AS query) q
        WHERE p.search_vector @@ q.query
        ORDER BY (p.document_id = ANY(%s)) DESC, (d.status = %s) ASC, rank DESC, p.id
        LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*words, expected, NormDocument.Status.REPLACED.value, limit])
        return [(int(pk), float(rank)) for pk, rank in cursor.fetchall()]


def _sqlite(terms: list[str], expected: list[int], limit: int) -> list[tuple[int, float]]:
    match = " OR ".join(f'"{term}"*' for term in terms)
    marks = ",".join("%s" for _ in expected) or "NULL"
    sql = f"""
        SELECT p.id, -bm25(normagpt_page_fts) AS rank
        FROM normagpt_page_fts JOIN normagpt_normpage p ON p.id = normagpt_page_fts.rowid
        JOIN normagpt_normdocument d ON d.id = p.document_id
        WHERE normagpt_page_fts MATCH %s
        ORDER BY (p.document_id IN ({marks})) DESC, (d.status = %s) ASC, rank DESC, p.id
        LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    with connection.cursor() as cursor:
        cursor.execute(sql, [match, *expected, NormDocument.Status.REPLACED.value, limit])
        return [(int(pk), float(rank)) for pk, rank in cursor.fetchall()]
