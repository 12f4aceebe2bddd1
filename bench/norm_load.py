"""The benchmark corpus of norms in the database: built by `bench/norm_corpus.py`, stored and
indexed the way ingestion does. Shared by the search benchmark (`bench/normagpt.py`), the
editions benchmark (`bench/norm_editions.py`) and the cached calls (`bench/cached_calls.py`),
none of which imports another for it. Run inside a process whose Django is set up.
"""

from __future__ import annotations

import os
from typing import Any

SEED = 24


def norms_load(pages: int, fresh: bool) -> Any:
    """The corpus built (its facts for the questions) and in the database (loaded unless the
    database holds its documents already)."""
    from bench.norm_corpus import CorpusBuilder
    from normagpt.models import NormClause, NormDocument

    builder = CorpusBuilder(pages, seed=SEED)
    documents = list(builder.build())
    codes = {d.code for d in documents}
    held = set(NormDocument.objects.values_list("code", flat=True))
    if fresh or held != codes or not NormClause.objects.exists():
        rows_load((d.code, d.title, d.kind, d.status, d.replaced_by, d.pages) for d in documents)
    return builder


def rows_load(documents: Any) -> None:
    """Documents (code, title, kind, status, replaced by, page texts) stored and indexed the
    way ingestion does (`document_index`), the splitting into clauses done by a worker per
    CPU, the stem counts made once at the end. On PostgreSQL the clauses' GIN index is made
    after the rows, as a bulk load (pg_restore) does."""
    import multiprocessing

    from django.db import connection

    from normagpt.indexing import document_index, pages_indexed
    from normagpt.models import NormDocument, NormPage
    from normagpt.terms import terms_recount

    NormDocument.objects.all().delete()
    gin = connection.vendor == "postgresql"
    if gin:
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS normagpt_clause_fts_gin")
    successors = {}
    listed = list(documents)
    connection.close()  # the workers are forked: none inherits the connection
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 2) as pool:
        split = pool.imap(pages_indexed, (row[-1] for row in listed), chunksize=2)
        for (code, title, kind, status, replaced_by, texts), indexed in zip(
            listed, split, strict=True
        ):
            document = NormDocument.objects.create(
                code=code, title=title, kind=kind, status=status, page_count=len(texts),
                ingest_status=NormDocument.Ingest.DONE,
            )  # fmt: skip
            NormPage.objects.bulk_create(
                [NormPage(document=document, number=n, text=t) for n, t in enumerate(texts, 1)]
            )
            document_index(document_id=document.pk, count_terms=False, indexed=indexed)
            if replaced_by:
                successors[document.pk] = replaced_by
    for pk, code in successors.items():
        NormDocument.objects.filter(pk=pk).update(
            replaced_by=NormDocument.objects.filter(code=code).first()
        )
    terms_recount()
    with connection.cursor() as cursor:
        if gin:
            cursor.execute("SET maintenance_work_mem = '512MB'")
            cursor.execute(
                "CREATE INDEX normagpt_clause_fts_gin ON normagpt_normclause "
                "USING GIN (search_vector)"
            )
        # statistics for the planner (and on PostgreSQL what autovacuum does after a load)
        cursor.execute("VACUUM ANALYZE" if gin else "ANALYZE")
