"""Indexing a document for search: its pages split into clauses, each with the stems search
matches (`normagpt.terms`, which keeps how many clauses hold each stem); the short names its
code is known by; its amendments applied again to the new clauses (`normagpt.editions`).

Run after a document's pages are stored (ingestion) and by `manage.py normagpt_reindex`
for pages stored before clauses existed. The counts of stems change by the difference
between the document's old clauses and its new ones, in one transaction with them, rows
locked in one order (two ingestions at once do not deadlock). After a load, the full-text
indexes' new entries are merged into their main structure (`search_index_merge`).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connection, transaction

from normagpt.abbreviations import abbreviations_refresh
from normagpt.clauses import clauses_split
from normagpt.editions import amendments_apply
from normagpt.models import (
    NormAbbreviation,
    NormClause,
    NormDocument,
    NormDocumentAlias,
    NormPage,
)
from normagpt.parsing import (
    TABLE_MENTION,
    alias_key,
    clauses_find,
    code_aliases,
    number_normal,
    text_clean,
    title_aliases,
)
from normagpt.terms import clause_search_text, stem_counts, terms_add

BATCH = 2000
# what `search_index_merge` runs (migration 0021 ran it once, for corpora loaded before)
INDEX_MERGE = {
    "postgresql": [
        "SELECT gin_clean_pending_list('normagpt_clause_fts_gin'::regclass)",
        "SELECT gin_clean_pending_list('normagpt_table_fts_gin'::regclass)",
    ],
    "sqlite": ["INSERT INTO normagpt_clause_fts(normagpt_clause_fts) VALUES ('optimize')"],
}
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Indexed:
    """A document's pages split for search (`pages_indexed`): its clauses as rows, each
    (page index, kind, number, heading, text, position, start, end, span, search text), and
    each page's clause numbers."""

    clauses: list[tuple[Any, ...]]
    page_clauses: list[list[str]]


def pages_indexed(texts: list[str]) -> Indexed:
    """Split a document's page texts into clauses with their search text (pure: a bulk load
    runs it in worker processes). The texts are read as `text_clean` gives them."""
    units = clauses_split([text_clean(text) for text in texts])
    pointers = tables_pointed(units)
    rows = [
        (
            unit.page_index,
            unit.kind,
            unit.number,
            unit.heading[:500],
            unit.text,
            unit.position,
            unit.start,
            unit.end,
            unit.span,
            clause_search_text(
                " ".join([unit.heading, *pointers.get(unit.number, [])])
                if unit.kind == "table"
                else unit.heading,
                unit.text,
                table=unit.kind == "table",
            ),
        )
        for unit in units
    ]
    by_page: list[list[Any]] = [[] for _ in texts]
    continued: list[list[str]] = [[] for _ in texts]  # clauses running on to the page
    for unit in units:
        by_page[unit.page_index].append(unit)
        for index in range(unit.page_index + 1, unit.page_index + unit.span + 1):
            if unit.kind == "clause":
                continued[index].append(unit.number)
    return Indexed(
        rows,
        [
            list(dict.fromkeys([*continued[i], *page_numbers(text, by_page[i])]))
            for i, text in enumerate(texts)
        ],
    )


_SENTENCE = re.compile(r"(?<=[.;:])\s+(?=[А-ЯЁA-Z«])")
POINTER_WORDS = 40  # a longer sentence says more than what the table holds


def tables_pointed(units: list[Any]) -> dict[str, list[str]]:
    """The sentences of a document's clauses that point to each of its tables («Для
    определения собственного веса конструкций плотность древесины различных пород следует
    принимать по таблице Г.1»), by table number: what a reader reads the table by, so its
    search text holds them with its heading (the table itself says «Порода древесины /
    Плотность …» and no more)."""
    tables = {unit.number for unit in units if unit.kind == "table" and unit.number}
    pointed: dict[str, list[str]] = {}
    for unit in units:
        if unit.kind != "clause" or "табл" not in unit.text.lower():
            continue
        for sentence in _SENTENCE.split(unit.text):
            if len(sentence.split()) > POINTER_WORDS:
                continue
            for match in TABLE_MENTION.finditer(sentence):
                number = number_normal(re.sub(r"\s", "", match["number"]))
                if number in tables and sentence not in pointed.setdefault(number, []):
                    pointed[number].append(sentence)
    return pointed


@transaction.atomic
def document_index(
    *, document_id: int, count_terms: bool = True, indexed: Indexed | None = None
) -> int:
    """Split the document's stored pages into clauses and store them with their search text,
    replacing earlier ones (`indexed`: the split made already, of these pages); update the
    stem counts (unless `count_terms` is false: a bulk load counts once at the end with
    `terms_recount`) and the code's aliases. The number of clauses."""
    document = NormDocument.objects.select_for_update().get(pk=document_id)
    pages = _pages_cleaned(document)
    old = NormClause.objects.filter(document=document)
    removed = stem_counts(old.values_list("search_text", flat=True)) if count_terms else None
    old.delete()
    if indexed is None:
        indexed = pages_indexed([page.text for page in pages])
    _clauses_insert(document.pk, [page.pk for page in pages], indexed.clauses)
    for page, numbers in zip(pages, indexed.page_clauses, strict=True):
        if numbers != page.clauses:
            NormPage.objects.filter(pk=page.pk).update(clauses=numbers)
    if removed is not None:
        added = stem_counts(row[-1] for row in indexed.clauses)
        added.subtract(removed)
        terms_add(added)
    aliases_refresh(document)
    abbreviations_refresh(document.pk, ((row[3], row[4]) for row in indexed.clauses))
    if document.amendments.exists():  # its amendments' clause versions, on the new clauses
        amendments_apply(document_id=document.pk)
    return len(indexed.clauses)


def _pages_cleaned(document: NormDocument) -> list[NormPage]:
    """The document's pages, their texts as a reader sees them (`text_clean`: pages stored
    before it still hold pdfium's hyphen marks), stored so where they were not."""
    pages = list(NormPage.objects.filter(document=document).order_by("number"))
    for page in pages:
        cleaned = text_clean(page.text)
        if cleaned != page.text:
            page.text = cleaned
            NormPage.objects.filter(pk=page.pk).update(text=cleaned)
    return pages


_CLAUSE_COLUMNS = (
    "document_id", "page_id", "kind", "number", "heading", "text", "position", "start", "end",
    "span", "search_text",
)  # fmt: skip


def _clauses_insert(document_id: int, page_ids: list[int], rows: list[tuple[Any, ...]]) -> None:
    """The rows written out (thousands per document: no model instance is built for each)."""
    quote = connection.ops.quote_name
    sql = "INSERT INTO {} ({}) VALUES ({})".format(  # noqa: S608 (names from the model)
        quote(NormClause._meta.db_table),
        ", ".join(quote(c) for c in _CLAUSE_COLUMNS),
        ", ".join(["%s"] * len(_CLAUSE_COLUMNS)),
    )
    values = [(document_id, page_ids[row[0]], *row[1:]) for row in rows]
    with connection.cursor() as cursor:
        for start in range(0, len(values), BATCH):
            cursor.executemany(sql, values[start : start + BATCH])


def page_numbers(text: str, units: list[Any]) -> list[str]:
    """The clause numbers a page holds, in order: its clauses' and the headings over them
    («5.1 Общие требования» above «5.1.2»), not a number wrapped to a line's start."""
    clauses = [u.number for u in units if u.kind == "clause"]
    found = clauses_find(text)
    headings = [n for n in found if any(x.startswith(f"{n}.") for x in clauses)]
    kept = set(clauses) | set(headings)
    ordered = [n for n in found if n in kept]
    return list(dict.fromkeys([*ordered, *clauses]))


@transaction.atomic
def document_unindex(*, document_id: int) -> None:
    """Remove the document's clauses and their stems from the counts (before its pages or
    the document itself are deleted)."""
    clauses = NormClause.objects.filter(document_id=document_id)
    removed = stem_counts(clauses.values_list("search_text", flat=True))
    clauses.delete()
    NormAbbreviation.objects.filter(document_id=document_id).delete()  # read from them
    terms_add(Counter({term: -n for term, n in removed.items()}))


def search_index_merge() -> bool:
    """Merge what the clauses' full-text indexes hold apart into their main structure, as a
    load leaves it: SQLite's FTS5 index in segments (a write makes one; a search reads the
    postings of each), PostgreSQL's GIN indexes with a pending list (`fastupdate`: a search
    reads all of it, and only autovacuum or a full list empties it). On the mixed benchmark
    corpus (60,000 clauses) the search's full-text queries took 8.3 ms of CPU before and
    3.1 ms after on SQLite, 11.6 and 5.0 ms on PostgreSQL. Nothing found changes. Whether it
    ran: on PostgreSQL only the indexes' owner may (another role is told in the log; the
    search works, only slower)."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for sql in INDEX_MERGE.get(connection.vendor, []):
                cursor.execute(sql)
    except DatabaseError:
        logger.warning("the full-text indexes could not be merged", exc_info=True)
        return False
    return True


def aliases_refresh(document: NormDocument) -> None:
    """The automatic aliases of the document: the short forms of its code, and the names a
    code of law is known by, read from its title («ЖК РФ»; those a person added stay)."""
    NormDocumentAlias.objects.filter(document=document, automatic=True).delete()
    kept = set(NormDocumentAlias.objects.filter(document=document).values_list("key", flat=True))
    names = [*title_aliases(document.title), *code_aliases(document.code)]
    NormDocumentAlias.objects.bulk_create(
        [
            NormDocumentAlias(document=document, alias=name, key=key, automatic=True)
            for key, name in {alias_key(name): name for name in names}.items()
            if key not in kept
        ]
    )
