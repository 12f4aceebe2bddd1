"""The search's candidates from the database: the query's stems as the corpus knows them
(`vocabulary_read`: each stem's weight and its variants, from the counts `normagpt.terms`
keeps), clauses named by their number, and the full-text candidates — SQLite's FTS5 by
`bm25`, PostgreSQL in tiers of which rare stems they hold — at most CANDIDATES of them and
the tables holding them besides. `normagpt.search` asks; `normagpt.search_ranking` ranks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Max, Min, Q

from core.rows import rows_fetch
from normagpt.kin import VARIANT_MIN, fleeting_bases, stems_kin
from normagpt.models import NormClause
from normagpt.parsing import Query
from normagpt.terms import ALL_CLAUSES, GENERATION, TABLE_MARK

CANDIDATES = 120  # clauses the database ranks for the final ranking here
TABLES = 20  # tables besides, on SQLite, when the candidates are that many
LONG, LONG_PAIRS = 6, 4  # a query this long pairs this many of its rarest stems instead
PAIR_TERMS = 3  # a candidate holds two of the query's this many rarest stems…
PAIRS_FEW = 20  # …or, when fewer clauses hold two, the rarest alone
RANK_MAX, CORRELATED = 3000, 3  # pairs likely to match more: all of the rarest at once…
AND_TERMS = 5  # …up to this many
NAMED_MAX = 200  # clauses looked up by number (every document's «4.1»)
# PostgreSQL's `ts_rank` divided by 1 + the log of the clause's length: as bm25 does on SQLite,
# a long text (a table, a list) does not come first by repeating the query's words along its
# length. Unnormalized, the candidates' texts were 1.7 times as long (175,000 characters a whole
# question at the median against 102,000) and the whole questions' gold clause first for 130
# of 245 over the tuning table's five sets, in the top 5 for 171 (now 136 and 183)
RANK_NORMALIZATION = 1


@dataclass
class Vocabulary:
    """The query's stems as the corpus knows them: each one's weight (idf) and clause count,
    and the corpus stems that are its variants («подва» of «подвал» and «подвальн» of
    «подвальных»: a stem and another a few letters longer)."""

    weights: dict[str, float]
    counts: dict[str, int]
    variants: dict[str, str]  # a corpus stem → the query stem it stands for
    total: int
    generation: int = 0  # of the counts (`terms.GENERATION`)
    # a corpus stem standing for several query stems: an abbreviation's
    # (`normagpt.abbreviations`), found as each of them
    standing: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def never(self) -> float:
        """The weight of a stem no clause holds (bm25's: above every stem some clause holds)."""
        return idf(0, self.total)

    def forms(self, terms: Iterable[str]) -> list[str]:
        wanted = set(terms)
        return sorted(
            {stem for stem, term in self.variants.items() if term in wanted}
            # a stem standing for several in the first's forms only: in every one's, a
            # clause holding it alone would hold every pair of them
            | {stem for stem, stands in self.standing.items() if stands[0] in wanted}
        )


def vocabulary_read(
    terms: list[str],
    said_as: dict[str, tuple[str, ...]] | None = None,
    apart: frozenset[str] = frozenset(),
) -> Vocabulary:
    """The query's stems as the corpus knows them, each with the stems norms use for it
    (`said_as`: a lay word's, a quantity's) standing for it too; variants are found by their
    first letters (ranges of the stems' primary key: no stem table is scanned)."""
    said_as = said_as or {}
    words = list(dict.fromkeys([*terms, *(s for said in said_as.values() for s in said)]))
    prefixes = sorted(
        {
            start[:VARIANT_MIN]
            for word in words
            if len(word) >= 3
            for start in (word, *fleeting_bases(word))
        }
    )
    where = " OR ".join(["term IN ({})".format(",".join(["%s"] * (len(words) + 2)))] + [
        "(term >= %s AND term < %s)"
    ] * len(prefixes))  # fmt: skip
    params: list[Any] = [*words, ALL_CLAUSES, GENERATION]
    for prefix in prefixes:
        params += [prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
    sql = f"SELECT term, clauses FROM normagpt_normterm WHERE {where}"  # noqa: S608
    known = dict(sql_rows(sql, params))
    total = max(1, known.pop(ALL_CLAUSES, 0))
    generation = known.pop(GENERATION, 0)
    # kin stems other than equal ones share their first three letters, or those of a
    # noun's adjective (`stems_kin`): each word is tried against those only, in the order
    # the database gave them
    by_start: dict[str, list[tuple[str, int]]] = {}
    for stem, n in known.items():
        if n > 0:
            by_start.setdefault(stem[:3], []).append((stem, n))
    # a query stem of a word of its own (`apart`) is its own, not a kin stem's variant
    # («площадк» of «площадка» is not «площадь», asked beside it; «участок» is «участка»'s);
    # then each term's own forms, then those of the words it is said as
    variants = {term: term for term in terms if term in apart and known.get(term)}
    counts = {term: known[term] for term in variants}
    pairs = [(t, t) for t in terms] + [(t, w) for t in terms for w in said_as.get(t, ())]
    for term, word in pairs:
        if variants.get(term, term) != term:
            continue  # another form of an earlier term's word («участок» of «участк»): its
            # own leftovers are no forms of it («участвовать»)
        for start in dict.fromkeys([word[:3], *(base[:3] for base in fleeting_bases(word))]):
            for stem, n in by_start.get(start, ()):
                if stem not in variants and stems_kin(word, stem):
                    variants[stem] = term
                    counts[term] = counts.get(term, 0) + n
    weights = {term: idf(n, total) for term, n in counts.items()}
    return Vocabulary(weights, counts, variants, total, generation)


class _TermCounts:
    """How many clauses hold each stem, as this process read them, while the counts'
    generation (`terms.GENERATION`, read with every search's vocabulary) is the one they
    were read in: the words of scope of the candidates' documents' titles are dozens per
    search, mostly the same words. Another generation, or more than LIMIT stems, starts
    anew; a stem the corpus does not count is left out, as the table leaves it. Their
    weights (`idfs`) are kept alike, for the generation and the number of clauses they were
    weighed at."""

    LIMIT = 300_000

    def __init__(self) -> None:
        self.generation: int | None = None
        self.counts: dict[str, int | None] = {}
        self.weighed: tuple[int, int] | None = None  # (generation, clauses) of `weights`
        self.weights: dict[str, float] = {}

    def of(self, terms: Iterable[str], generation: int) -> dict[str, int]:
        wanted = list(terms)
        counts = self._read(wanted, generation)
        return {term: n for term in wanted if (n := counts.get(term)) is not None}

    def idfs(self, terms: set[str], generation: int, total: int) -> dict[str, float]:
        """The weight (`idf` among `total` clauses) of each of `terms`; 0.0 for a stem the
        corpus does not count (what a stem left out of the weights weighs)."""
        weights = self.weights  # another thread may start anew: this search keeps its own
        if self.weighed != (generation, total) or len(weights) > self.LIMIT:
            weights = {}
            self.weights, self.weighed = weights, (generation, total)
        missing = terms.difference(weights)  # a look-up per term (`- keys()` walks them all)
        if missing:
            counts = self._read(list(missing), generation)
            for term in missing:
                n = counts.get(term)
                weights[term] = 0.0 if n is None else idf(n, total)
        return dict(zip(terms, map(weights.__getitem__, terms), strict=True))

    def _read(self, wanted: list[str], generation: int) -> dict[str, int | None]:
        """The counts, `wanted`'s among them (read when this process has not)."""
        counts = self.counts  # another thread may start anew: this search keeps its own
        if generation != self.generation or len(counts) > self.LIMIT:
            counts = {}
            self.counts, self.generation = counts, generation
        missing = [term for term in wanted if term not in counts]
        if missing:
            where, params = sql_within("term", missing)
            sql = f"SELECT term, clauses FROM normagpt_normterm WHERE {where}"  # noqa: S608
            found = dict(sql_rows(sql, params))
            counts.update({term: found.get(term) for term in missing})
        return counts


TERM_COUNTS = _TermCounts()


def sql_rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of a query written out here (no ORM query to build: this is the hot path)."""
    return rows_fetch(sql, params)


def sql_within(column: str, values: list[Any]) -> tuple[str, list[Any]]:
    """`column` among `values`: one array parameter on PostgreSQL (its driver parses a query
    once per text; a list of placeholders makes a new text for every length), a list of
    placeholders elsewhere. Words (stems: no space in one) go as one text the server splits:
    the driver quotes an array's texts one by one, a regex each (1 ms for a search's 800)."""
    if connection.vendor != "postgresql":
        return f"{column} IN ({','.join(['%s'] * len(values)) or 'NULL'})", list(values)
    if values and all(type(v) is str and v and " " not in v for v in values):
        return f"{column} = ANY(string_to_array(%s, ' '))", [" ".join(values)]
    return f"{column} = ANY(%s)", [list(values)]


def idf(count: int, total: int) -> float:
    return math.log(1 + (total - count + 0.5) / (count + 0.5))


def clauses_named(query: Query, expected: list[int]) -> list[int]:
    """Clauses named by their number: in the expected documents, else in any. A clause
    the query names with its document («п. 10.3.2 СП 28») is that document's or none; one
    named alone, with documents given to rank first that lack it, is any document's."""
    if not query.clauses:
        return []
    wanted = Q()
    for ref in query.clauses:
        wanted |= Q(kind=ref.kind, number__iexact=ref.number)
    qs = NormClause.objects.filter(wanted).order_by("document_id", "position")
    ids = qs.values_list("pk", flat=True)
    if expected:
        within = list(ids.filter(document_id__in=expected)[:NAMED_MAX])
        if within or query.documents:
            return within
    return list(ids[:NAMED_MAX])


def _match_terms(vocabulary: Vocabulary, context: frozenset[str] = frozenset()) -> list[str]:
    """The query's stems, weightiest first (the rarest, but for a whole question's everyday
    words: `normagpt.everyday`); those of a question's story after the others."""
    weights = vocabulary.weights
    return sorted(vocabulary.counts, key=lambda t: (t in context, -weights[t], t))


def candidates_find(
    vocabulary: Vocabulary, expected: list[int], context: frozenset[str] = frozenset()
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
        # the mark once, after the alternatives: FTS5 reads its long list (every table's)
        # once, not once for each alternative
        return _sqlite(f'({_sqlite_match(alternatives)}) AND "{TABLE_MARK}"', [], TABLES)
    return _postgres(*_tsqueries(alternatives), [], TABLES, tables=True)


def _tiered(groups: list[list[str]]) -> bool:
    return connection.vendor == "postgresql" and len(groups) == 3


def _tiers(groups: list[list[str]], limit: int, *, few: bool) -> list[int]:
    """PostgreSQL's candidates holding two of the three rarest stems (`groups`), in the
    tiers bm25 would make of them (`ts_rank` knows no word's rarity): all three first, then
    the rarest pair, and so on; each tier fills what is left of `limit`. Within a tier the
    database does not rank (unnormalized, `ts_rank` put first the clauses that repeat the
    words, most often long ones on another subject; normalized as `_postgres` ranks, it
    moved no first hit of the tuning table's five sets and costs every match read): the
    ranking here does. When `few` clauses are likely to hold two, one query takes them all."""
    if few:
        pairs = [[x, y] for x, y in itertools.combinations(groups, 2)]
        return _postgres(_written(pairs, "&", "|", str), None, [], limit)
    a, b, c = ["(" + " | ".join(g) + ")" for g in groups]
    tiers = [f"{a} & {b} & {c}", f"{a} & {b} & !{c}", f"{a} & {c} & !{b}", f"{b} & {c} & !{a}"]
    # one statement: PostgreSQL runs the branches in turn and stops once `limit` rows came
    branch = (
        "(SELECT id, %s AS tier FROM normagpt_normclause "
        "WHERE search_vector @@ to_tsquery('simple', %s) ORDER BY id LIMIT %s)"
    )
    sql = " UNION ALL ".join([branch] * len(tiers)) + " LIMIT %s"
    params = [x for tier, query in enumerate(tiers) for x in (tier, query, limit)]
    rows = sql_rows(sql, [*params, limit])
    return [int(pk) for pk, _ in sorted(rows, key=lambda row: row[1])]  # tier order, stable


def _pairs_matched(vocabulary: Vocabulary, terms: list[str]) -> float:
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
        return _postgres(*_tsqueries(alternatives), documents, limit)
    return _sqlite(_sqlite_match(alternatives), documents, limit)


def _sqlite_match(alternatives: list[list[list[str]]]) -> str:
    """FTS5's query of the `alternatives` (each: groups of a stem's forms, all of them)."""
    return _written(alternatives, "AND", "OR", lambda form: f'"{form}"')


def _written(
    alternatives: list[list[list[str]]], both: str, either: str, quoted: Callable[[str], str]
) -> str:
    """A full-text query of the `alternatives` (each: groups of a stem's forms, all of them),
    in the operators `both` and `either`. An index reads a stem's list once per mention: the
    pairs of three groups or more name each group with those before it («d AND (a OR b OR c)
    OR c AND (a OR b) OR b AND a»), not in each of its pairs (9 mentions of four groups, not
    12: the same clauses; SQLite's bm25 then weighs the first, rarer, groups more)."""

    def anyone(forms: Iterable[str]) -> str:
        return "(" + f" {either} ".join(map(quoted, forms)) + ")"

    groups = list(dict.fromkeys(tuple(group) for groups in alternatives for group in groups))
    paired = [[list(a), list(b)] for a, b in itertools.combinations(groups, 2)]
    if len(groups) > 2 and alternatives == paired:
        return f" {either} ".join(
            f"({anyone(groups[at])} {both} ({f' {either} '.join(map(anyone, groups[:at]))}))"
            for at in range(len(groups) - 1, 0, -1)
        )
    return f" {either} ".join(
        "(" + f" {both} ".join(map(anyone, groups)) + ")" for groups in alternatives
    )


def _tsqueries(alternatives: list[list[list[str]]]) -> tuple[str, str]:
    """PostgreSQL's query of the `alternatives` and the query to rank its matches by. Of
    several alternatives (a «|» on top) `ts_rank` weighs each stem once, whatever the
    operators under it: the stems alone give the same order, parsed and sorted for each row
    in half the time (a whole question's pairs name each stem three times)."""
    query = _written(alternatives, "&", "|", str)  # stems are [0-9a-zа-я]+: nothing to escape
    if len(alternatives) < 2:
        return query, query  # all of them at once: ts_rank weighs how near they stand
    stems = dict.fromkeys(stem for groups in alternatives for group in groups for stem in group)
    return query, " | ".join(stems)


def _postgres(
    query: str, rank: str | None, documents: list[int], limit: int, *, tables: bool = False
) -> list[int]:
    """Clauses matching `query`, best first by `ts_rank` of `rank` (by id with None)."""
    within = "AND document_id = ANY(%s)" if documents else ""
    within += " AND kind = 'table'" if tables else ""
    order = f"ts_rank(search_vector, to_tsquery('simple', %s), {RANK_NORMALIZATION}) DESC, id"
    order = order if rank else "id"
    sql = f"""
        SELECT id FROM normagpt_normclause
        WHERE search_vector @@ to_tsquery('simple', %s) {within}
        ORDER BY {order} LIMIT %s
    """  # noqa: S608 (only placeholders are interpolated)
    params: list[Any] = [query, *([documents] if documents else []), *([rank] if rank else [])]
    return [int(pk) for (pk,) in sql_rows(sql, [*params, limit])]


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
    rows = sql_rows(sql, [match, *(span or ()), *(ids or ()), limit])
    return [(float(rank), int(pk)) for rank, pk in rows]
