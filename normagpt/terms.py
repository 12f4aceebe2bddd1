"""The search text of a clause and the counts of its stems: what search ranks by.

The ground under indexing and the editions: `indexing` writes a document's clauses with
their search text and changes the counts by the difference; the editions (`amendments_apply`)
change clause versions and the counts alike. Both stand on this module, so indexing a
document may apply its amendments (`indexing` → `editions` → `terms`) without a circle.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from django.db import connection, transaction

from normagpt.models import NormClause, NormTerm
from normagpt.parsing import search_stems

ALL_CLAUSES = ""  # the NormTerm row counting the clauses
# the NormTerm row counting the changes of the counts: a search process keeps the counts it
# read while this holds (`search_candidates._TermCounts`); no stem is spelt so
GENERATION = "#"
BATCH = 2000
_UPSERT = (
    "INSERT INTO normagpt_normterm (term, clauses) VALUES (%s, %s) "
    "ON CONFLICT (term) DO UPDATE SET clauses = normagpt_normterm.clauses + excluded.clauses"
)

PART = " | "  # between the heading's, the statement's and the rest's stems
TABLE_MARK = "0tbl"  # a token no text yields, after a table's heading stems: search finds tables
_SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[«(А-ЯЁA-Z])")


def clause_search_text(heading: str, text: str, *, table: bool = False) -> str:
    """What the clause's full-text index holds: the stems of its heading path, of its first
    sentence (what it states; a table's title) and of the rest, the parts apart (`PART`; no
    tokenizer sees the bar, so a phrase still runs across it). A table's heading part ends
    with TABLE_MARK."""
    if table:
        statement, _, rest = text.strip().partition("\n")
    else:
        statement, _, rest = _SENTENCE_END.sub("\n\n", text.strip(), count=1).partition("\n\n")
    parts = [search_stems(part) for part in (heading, statement, rest)]
    if table:
        parts[0].append(TABLE_MARK)
    return PART.join(" ".join(part) for part in parts)


def clause_terms(search_text: str) -> set[str]:
    return set(search_text.split()) - {PART.strip(), TABLE_MARK}


def stem_counts(search_texts: Iterable[str]) -> Counter[str]:
    """How many of the clauses hold each stem, and (under ALL_CLAUSES) how many there are."""
    counts: Counter[str] = Counter()
    total = 0
    for text in search_texts:
        counts.update(clause_terms(text))
        total += 1
    counts[ALL_CLAUSES] = total
    return counts


def terms_add(delta: Counter[str]) -> None:
    """Add `delta` to the stem counts (rows in term order: concurrent writers lock alike)."""
    rows = sorted((t, n) for t, n in delta.items() if n and len(t) <= 40)
    if rows:
        rows = sorted([*rows, (GENERATION, 1)])
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            cursor.executemany(_UPSERT, rows[start : start + BATCH])


@transaction.atomic
def terms_recount() -> int:
    """Count every stem of every clause anew (after a bulk load, or rows changed outside
    Django); the number of distinct stems."""
    counts = stem_counts(
        NormClause.objects.values_list("search_text", flat=True).iterator(chunk_size=5000)
    )
    was = NormTerm.objects.filter(term=GENERATION).values_list("clauses", flat=True).first()
    counts[GENERATION] = (was or 0) + 1
    NormTerm.objects.all().delete()
    NormTerm.objects.bulk_create(
        [NormTerm(term=t, clauses=n) for t, n in sorted(counts.items()) if len(t) <= 40],
        batch_size=5000,
    )
    return len(counts)
