"""Applying an edition's amendments: each clause an amendment changes gets a version of its
own from the amendment's day (`NormClause` with the amendment and the days it holds); the
text it changed holds until then."""

from __future__ import annotations

from collections import Counter
from datetime import date

from django.db import transaction

from normagpt.editions.edition import Edition, Unit
from normagpt.models import NormAmendment, NormAmendmentChange, NormClause, NormDocument
from normagpt.terms import clause_search_text, stem_counts, terms_add


@transaction.atomic
def amendments_apply(*, document_id: int) -> int:
    """Make the clause versions of the edition's amendments, oldest first: each changed
    clause's text holds until the amendment's day, its new text from then (a later
    amendment of the same clause closes that one in turn). An amendment's changes apply in
    their order; the clauses they change each make one version; each change's `applied`
    says whether it could be made. Earlier versions are replaced; the stem counts follow.
    The number of versions made."""
    # one applier per edition at a time (an admin save beside a re-ingestion): the counts
    # below are of the rows this transaction deletes
    NormDocument.objects.select_for_update().filter(pk=document_id).first()
    versions = NormClause.objects.filter(document_id=document_id, amendment__isnull=False)
    removed = stem_counts(versions.values_list("search_text", flat=True))
    versions.delete()
    NormClause.objects.filter(document_id=document_id).exclude(
        valid_from=None, valid_to=None
    ).update(valid_from=None, valid_to=None)
    edition = Edition(
        list(NormClause.objects.filter(document_id=document_id).order_by("position", "id"))
    )
    amendments = NormAmendment.objects.filter(document_id=document_id).order_by(
        "in_force_from", "number"
    )
    made: list[NormClause] = []
    missed: list[int] = []
    for amendment in amendments.prefetch_related("changes"):
        before = edition.state()
        missed += [c.pk for c in amendment.changes.all() if not edition.apply(c)]
        made += _versions(edition, before, amendment)
    for version in made:  # saved one by one: a later amendment may have closed it already
        version.save()
    stored = NormAmendmentChange.objects.filter(amendment__document_id=document_id)
    stored.exclude(applied=True).exclude(pk__in=missed).update(applied=True)
    stored.filter(pk__in=missed, applied=True).update(applied=False)
    added = stem_counts(v.search_text for v in made)
    added.subtract(removed)
    terms_add(Counter({term: n for term, n in added.items() if n}))
    return len(made)


def _versions(
    edition: Edition, before: dict[int, tuple[str | None, str]], amendment: NormAmendment
) -> list[NormClause]:
    """The versions of the units the amendment changed (since `before`): the text each held
    ends on its day; a unit deleted gets none."""
    made = []
    for uid, unit in edition.units.items():
        if (unit.text, unit.heading) == before.get(uid, (None, unit.heading)):
            continue
        if unit.row is not None:
            _closed(unit.row, amendment.in_force_from)
        unit.row = None if unit.text is None else _version(unit, amendment)
        made += [unit.row] if unit.row is not None else []
    return made


def _closed(row: NormClause, day: date) -> None:
    row.valid_to = day
    if row.pk:
        NormClause.objects.filter(pk=row.pk).update(valid_to=day)


def _version(unit: Unit, amendment: NormAmendment) -> NormClause:
    place, text = unit.place, unit.text or ""
    return NormClause(
        document_id=place.document_id,
        page_id=place.page_id,
        kind=unit.kind,
        number=unit.number,
        heading=unit.heading[:500],
        text=text,
        position=place.position,
        start=place.start,
        end=place.end,
        span=place.span if unit.row is place else 0,
        search_text=clause_search_text(unit.heading, text, table=unit.kind == "table"),
        amendment=amendment,
        valid_from=amendment.in_force_from,
    )
