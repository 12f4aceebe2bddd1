"""The fuzzy search's index of a site's stored problems: kept in each process, caught up
incrementally from the database.

Every write of a site's problems takes the next value of the site's `SiteRevision` counter
and stamps its rows with it (`revision_next`, in the writer's transaction: writers take
the counter row in turn, so revisions commit in order). A search reads that one row; an
index that has seen revision N then reads only the rows above N (an index on subject,
exam, revision), whichever process or host wrote them. Deleting problems bumps the
site's `generation`: an index of an older one is rebuilt from every row.

Searching narrows the candidates before the exact score (`problems.matching.score`): an
inverted index from keywords, their stems and the numbers to the problems holding them
keeps the problems sharing the most of the query's rarer terms; only a query sharing
nothing with any stored problem is compared with every one.
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter

from django.db import connection, transaction
from django.db.models import F

from problems.matching import Candidate, Query, rank, terms
from problems.models import Problem, SiteRevision
from problems.subjects import Site

NARROW_TO = 400  # candidates kept by the term prefilter
SCORED = 100  # of those, the best by token-set ratio get the exact score
TERMS_USED = 16  # the query's rarest terms that vote
COMMON_SHARE = 0.4  # a term held by more than this share of the problems does not vote


def revision_next(site: Site) -> int:
    """The site's next revision, for the rows being written (call inside their transaction:
    the counter row stays locked until it commits). One statement once the row exists."""
    table = SiteRevision._meta.db_table
    sql = (
        f"UPDATE {table} SET revision = revision + 1"  # noqa: S608 (our table)
        " WHERE subject = %s AND exam = %s RETURNING revision"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [site.subject, site.exam])
        row = cursor.fetchone()
        if row is None:  # the site's first write
            SiteRevision.objects.get_or_create(subject=site.subject, exam=site.exam)
            cursor.execute(sql, [site.subject, site.exam])
            row = cursor.fetchone()
    return int(row[0])


def generation_next(subject: str, exam: str) -> None:
    """Problems of the site were deleted: every index of it is rebuilt at its next search."""
    with transaction.atomic():
        counter = SiteRevision.objects.filter(subject=subject, exam=exam)
        if not counter.update(generation=F("generation") + 1):
            SiteRevision.objects.get_or_create(
                subject=subject, exam=exam, defaults={"generation": 1}
            )


def problem_saved(sender: object, instance: Problem, **kwargs: object) -> None:
    """A row saved one by one (the admin, a shell): stamped with the site's next revision."""
    with transaction.atomic():
        revision = revision_next(Site(instance.subject, instance.exam))
        Problem.objects.filter(pk=instance.pk).update(revision=revision)
    instance.revision = revision


class _Regenerate:
    """The sites whose problems one transaction deleted: their generation, bumped once each
    when it commits (not once per row)."""

    def __init__(self, site: tuple[str, str]) -> None:
        self.sites = {site}

    def __call__(self) -> None:
        for subject, exam in sorted(self.sites):
            generation_next(subject, exam)


def problem_deleted(sender: object, instance: Problem, using: str, **kwargs: object) -> None:
    site = (instance.subject, instance.exam)
    connection = transaction.get_connection(using)
    if connection.in_atomic_block:
        for _, callback, _ in connection.run_on_commit:
            if isinstance(callback, _Regenerate):
                callback.sites.add(site)
                return
    transaction.on_commit(_Regenerate(site), using=using)  # outside a transaction: at once


def _current(site: Site) -> tuple[int, int]:
    """(revision, generation) of the site: one indexed row."""
    row = (
        SiteRevision.objects.filter(subject=site.subject, exam=site.exam)
        .values_list("revision", "generation")
        .first()
    )
    return (int(row[0]), int(row[1])) if row else (0, 0)


@dataclass
class _Entry:
    """One site's index in this process."""

    revision: int = -1  # above the site's: the database went back (restored): rebuilt
    generation: int = -1
    candidates: dict[int, Candidate] = field(default_factory=dict)  # Problem.pk → candidate
    postings: dict[str, set[int]] = field(default_factory=dict)  # term → Problem.pks
    held: dict[int, set[str]] = field(default_factory=dict)  # Problem.pk → its terms

    def put(self, pk: int, search_text: str) -> None:
        self.drop(pk)
        if not search_text:
            return
        candidate = Candidate.from_normalized(pk, search_text)
        self.candidates[pk] = candidate
        own = terms(candidate.words, candidate.numbers)
        self.held[pk] = own
        for term in own:
            self.postings.setdefault(term, set()).add(pk)

    def drop(self, pk: int) -> None:
        self.candidates.pop(pk, None)
        for term in self.held.pop(pk, ()):
            holders = self.postings.get(term)
            if holders is not None:
                holders.discard(pk)
                if not holders:
                    del self.postings[term]

    def narrow(self, query: Query) -> list[Candidate]:
        """The candidates sharing the most of the query's rarer terms (all: none shared, or
        no more than NARROW_TO stored — in a small store every term is "common", and the
        rarest alone would drop a twin that lacks it)."""
        total = len(self.candidates)
        if total <= NARROW_TO:
            return list(self.candidates.values())
        lists = sorted(
            (self.postings[t] for t in terms(query.words, query.nums) if t in self.postings),
            key=len,
        )
        voting = [holders for holders in lists if len(holders) <= COMMON_SHARE * total]
        voting = (voting or lists[:1])[:TERMS_USED]
        if not voting:
            return list(self.candidates.values())
        votes: Counter[int] = Counter()
        for holders in voting:
            votes.update(holders)
        best = heapq.nlargest(NARROW_TO, votes.items(), key=itemgetter(1))
        return [self.candidates[pk] for pk, _ in best]


class SiteIndex:
    """Every site's index in this process, caught up at each search."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sites: dict[str, _Entry] = {}

    def search(
        self, site: Site, query: Query, *, threshold: float, limit: int
    ) -> list[tuple[Candidate, float]]:
        """The best stored problems of `site` for `query` (Candidate.key is Problem.pk)."""
        with self._lock:
            entry = self._caught_up(site)
            pool = entry.narrow(query)
        return rank(query, pool, threshold=threshold, limit=limit, prefilter=SCORED)

    def size(self, site: Site) -> int:
        """How many problems of `site` the index holds, once caught up."""
        with self._lock:
            return len(self._caught_up(site).candidates)

    def _caught_up(self, site: Site) -> _Entry:
        revision, generation = _current(site)  # read before the rows: a later write is re-read
        entry = self._sites.get(site.label)
        if entry is None or entry.generation != generation or entry.revision > revision:
            entry = _Entry(generation=generation)
            self._apply(entry, site, None)
            self._sites[site.label] = entry
        elif entry.revision < revision:
            self._apply(entry, site, entry.revision)
        entry.revision = revision
        return entry

    @staticmethod
    def _apply(entry: _Entry, site: Site, after: int | None) -> None:
        rows = Problem.objects.filter(subject=site.subject, exam=site.exam)
        if after is not None:
            rows = rows.filter(revision__gt=after)
        for pk, text in rows.values_list("pk", "search_text").iterator(chunk_size=5000):
            entry.put(pk, text)

    def forget(self) -> None:
        """Drop every index of this process (tests; the next search rebuilds)."""
        with self._lock:
            self._sites.clear()


site_index = SiteIndex()
