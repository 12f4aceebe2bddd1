"""The fuzzy search's candidates, found by the database's own full-text index: every
process and host reads the same one, nothing is built in memory, and the database keeps it
in step with the rows (a row deleted, even outside Django, is gone from it).

`Problem.search_terms` holds a stored problem's keywords, their stems and its numbers
(`matching.index_terms`, written with the row). PostgreSQL indexes them as a tsvector
column generated from it, with a GIN index; SQLite as an FTS5 table that triggers keep in
step (migration 0004).

A search keeps the query's rarer terms — how common each is comes from the planner's
statistics of that column (PostgreSQL: the most common elements and their frequencies,
kept by ANALYZE; a term not listed is rarer than every listed one) or the FTS5 vocabulary
(SQLite: exact) — and asks for the NARROW_TO problems holding the most of them (PostgreSQL:
`ts_rank`, which counts them; SQLite: the terms' row lists, counted). The rarest vote first,
until their holders reach HOLDERS: the database's work stays bounded at any size. Only
those candidates get the exact score (`matching.rank`). A site of no more than NARROW_TO
stored problems is compared whole: in a small store every term is "common", and the rarest
alone would drop a twin that lacks it.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection, transaction

from problems.matching import Candidate, Query, index_terms, rank, terms
from problems.models import Problem
from problems.subjects import Site

NARROW_TO = 400  # candidates the database returns
SCORED = 100  # of those, the best by token-set ratio get the exact score
TERMS_USED = 32  # the query's rarest terms that vote (a damaged word is held by none)
COMMON_SHARE = 0.4  # a term held by more than this share of the problems does not vote …
HOLDERS = 15_000  # … nor one that would take the voting terms' holders past this many
SIZE_TTL = 60  # seconds a site's count of stored problems is reused

TABLE = Problem._meta.db_table
FTS_TABLE = f"{TABLE}_fts"  # SQLite
VOCABULARY = f"{TABLE}_vocab"  # SQLite: FTS5's terms with how many rows hold each


def problem_saving(sender: object, instance: Problem, **kwargs: object) -> None:
    """A row saved one by one (the admin, a shell) is found by its search text."""
    instance.search_terms = index_terms(instance.search_text)


def search(
    site: Site, query: Query, *, threshold: float, limit: int
) -> list[tuple[Candidate, float]]:
    """The best stored problems of `site` for `query` (Candidate.key is Problem.pk)."""
    pool = candidates(site, query)
    return rank(query, pool, threshold=threshold, limit=limit, prefilter=SCORED)


def candidates(site: Site, query: Query) -> list[Candidate]:
    """The stored problems of `site` holding the most of the query's rarer terms (every
    one, when no more than NARROW_TO are stored; none, when no stored problem holds any
    of its terms)."""
    stored = Problem.objects.filter(subject=site.subject, exam=site.exam).exclude(search_text="")
    if not stored[NARROW_TO:].exists():
        return [
            Candidate.from_normalized(pk, text)
            for pk, text in stored.values_list("pk", "search_text")
        ]
    asked = sorted(terms(query.words, query.nums))
    if not asked:
        return []
    if connection.vendor == "postgresql":
        rows = _postgres_candidates(site, asked)
    else:
        rows = _sqlite_candidates(site, asked)
    return [Candidate.from_normalized(pk, text) for pk, text in rows]


def holding(site: Site, normalized: str, *, limit: int) -> list[Candidate]:
    """Up to `limit` stored problems of `site` whose matching form holds `normalized`
    whole: the holders of a generic query (`Найдите угол B. Ответ дайте в градусах.`),
    which no rare term finds. The site's rows are scanned: for short queries only."""
    stored = Problem.objects.filter(
        subject=site.subject, exam=site.exam, search_text__contains=normalized
    )
    rows = stored.order_by("pk").values_list("pk", "search_text")[:limit]
    return [Candidate.from_normalized(pk, text) for pk, text in rows]


def size(site: Site) -> int:
    """How many problems of `site` are stored: counted at most once a minute (the shared
    cache keeps it; a count reads the site's whole index — 50 ms at 200,000 problems)."""
    key = f"problems:stored:{site.label}"
    count = cache.get(key)
    if count is None:
        count = Problem.objects.filter(subject=site.subject, exam=site.exam).count()
        cache.set(key, count, SIZE_TTL)
    return int(count)


def voting(asked: list[str], holders: dict[str, float], total: float) -> list[str]:
    """The terms that vote: the rarest first, while they are not common (COMMON_SHARE) and
    their holders together stay within HOLDERS — but at least the rarest one. `holders`:
    how many problems hold each term (an estimate; a term left out counts as rare)."""
    ordered = sorted(asked, key=lambda term: (holders.get(term, 0.0), -len(term), term))
    chosen: list[str] = []
    held = 0.0
    for term in ordered:
        count = holders.get(term, 0.0)
        full = len(chosen) == TERMS_USED or held + count > HOLDERS
        if chosen and (full or count > COMMON_SHARE * total):
            break
        chosen.append(term)
        held += count
    return chosen


# The statistics PostgreSQL's ANALYZE (autovacuum) keeps of the generated column: its
# most common lexemes with the share of rows holding each, and the table's row estimate.
_POSTGRES_STATISTICS = f"""
    SELECT u.term, u.share * greatest(c.reltuples, 0), greatest(c.reltuples, 0)
    FROM pg_class c
    LEFT JOIN pg_stats s
      ON s.schemaname = current_schema() AND s.tablename = '{TABLE}'
     AND s.attname = 'search_vector'
    LEFT JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
      AS u(term, share) ON u.term = ANY(%s)
    WHERE c.oid = '{TABLE}'::regclass
"""  # noqa: S608 (our table)

# The terms' rows come from the GIN index only (inside the CTE no other index serves): the
# planner, which takes terms of one family for independent and expects most of the table,
# would filter every row instead (twice the time), or the site's btree index.
_POSTGRES_CANDIDATES = f"""
    WITH holding AS MATERIALIZED (
        SELECT id, subject, exam, search_text, ts_rank(search_vector, %s::tsquery) AS votes
        FROM {TABLE} WHERE search_vector @@ %s::tsquery
    )
    SELECT id, search_text FROM holding WHERE subject = %s AND exam = %s
    ORDER BY votes DESC, id
    LIMIT %s
"""  # noqa: S608 (our table)
_POSTGRES_PLAN = ["SET LOCAL enable_seqscan = off", "SET LOCAL max_parallel_workers_per_gather = 0"]


def _postgres_candidates(site: Site, asked: list[str]) -> list[tuple[int, str]]:
    with connection.cursor() as cursor:
        cursor.execute(_POSTGRES_STATISTICS, [asked])
        found = cursor.fetchall()
        total = float(found[0][2]) if found else 0.0
        holders = {term: float(count) for term, count, _ in found if term is not None}
        chosen = voting(asked, holders, total)
        tsquery = " | ".join("'{}'".format(term.replace("'", "''")) for term in chosen)
        with transaction.atomic():
            for setting in _POSTGRES_PLAN:
                cursor.execute(setting)
            cursor.execute(
                _POSTGRES_CANDIDATES, [tsquery, tsquery, site.subject, site.exam, NARROW_TO]
            )
            rows = cursor.fetchall()
            transaction.set_rollback(True)  # the settings go with it (a savepoint's too)
        return rows


def _sqlite_candidates(site: Site, asked: list[str]) -> list[tuple[int, str]]:
    """FTS5's vocabulary (one lookup a term: `IN` would scan it) and rank (bm25 over every
    holder costs ten times a count) are left for the terms' own row lists, counted."""
    lookup = f"SELECT term, doc FROM {VOCABULARY} WHERE term = %s"  # noqa: S608 (our table)
    lookups = " UNION ALL ".join([lookup] * len(asked))
    with connection.cursor() as cursor:
        cursor.execute(lookups, asked)
        holders = {term: float(count) for term, count in cursor.fetchall()}
        if not holders:
            return []  # no stored problem holds any of the query's terms
        cursor.execute(f"SELECT count(*) FROM {TABLE}")  # noqa: S608 (our table)
        (total,) = cursor.fetchone()
        chosen = voting([term for term in asked if term in holders], holders, float(total))
        holding = f"SELECT rowid AS id FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"  # noqa: S608
        lists = " UNION ALL ".join([holding] * len(chosen))
        cursor.execute(
            f"SELECT p.id, p.search_text FROM {TABLE} p"  # noqa: S608 (our tables)
            f" JOIN (SELECT id, count(*) AS votes FROM ({lists}) GROUP BY id) v ON v.id = p.id"
            " WHERE p.subject = %s AND p.exam = %s ORDER BY v.votes DESC, p.id LIMIT %s",
            ['"{}"'.format(term.replace('"', '""')) for term in chosen]
            + [site.subject, site.exam, NARROW_TO],
        )
        return cursor.fetchall()
