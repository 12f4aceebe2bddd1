"""Reading editions and amendments for a day: the text of a clause holding then, an
edition's status, and the mark a clause's text carries when an amendment in force then
changes it but the change is not made (an order not read, or one that could not be
applied): the text served is not the amended one, and the reader is told so."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from django.db.models import Q
from django.utils import timezone

from core.exceptions import InvalidInput
from normagpt.editions.amendments import change_label
from normagpt.editions.entities import PART, TABLE, number_form, shortened
from normagpt.models import (
    NormAmendment,
    NormAmendmentChange,
    NormAmendmentOrder,
    NormClause,
    NormDocument,
    NormPage,
    holds_on,
)

MARK_ORDER_SHOWN = 300  # the order quoted in a mark, at most this long


def day_of(value: Any) -> date:
    """`as_of` as a day: a date, an ISO string, or None (today)."""
    if value is None or value == "":
        return timezone.localdate()
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError as exc:
        raise InvalidInput(
            f"as_of must be a date as YYYY-MM-DD, got {value!r}", field="as_of"
        ) from exc


def edition_status(document: NormDocument, day: date) -> str:
    """The edition's status on `day`, as an answer states it (Russian)."""
    if document.in_force_on(day):
        since = f" с {document.in_force_from:%d.%m.%Y}" if document.in_force_from else ""
        return f"действует{since}"
    if document.in_force_from is not None and day < document.in_force_from:
        return f"ещё не действовал (введён с {document.in_force_from:%d.%m.%Y})"
    successor = f", заменён {document.replaced_by.code}" if document.replaced_by else ""
    if document.in_force_to:  # the first day it no longer held ([from, to))
        return f"утратил силу с {document.in_force_to:%d.%m.%Y}{successor}"
    return f"не действует{successor}"


def amendment_label(amendment: NormAmendment) -> str:
    return f"Изменение № {amendment.number} (с {amendment.in_force_from:%d.%m.%Y})"


def source_edition(source: dict[str, Any], day: date) -> dict[str, str]:
    """`edition` (the cited document's status on `day`) and `amendment` (the amendment whose
    text of the cited clause holds then, or '') of an answer's source."""
    page_id = source.get("page_id")
    page = (
        NormPage.objects.select_related("document__replaced_by").filter(pk=page_id).first()
        if isinstance(page_id, int)
        else None
    )
    if page is None:
        return {"edition": "", "amendment": ""}
    version = clause_version(page.document_id, str(source.get("clause") or ""), day)
    amendment = version.amendment if version is not None else None
    return {
        "edition": edition_status(page.document, day),
        "amendment": amendment_label(amendment) if amendment is not None else "",
    }


def clause_version(document_id: int, number: str, day: date) -> NormClause | None:
    """The text of clause `number` of the document holding on `day` (None: no such clause,
    or an amendment deleted it). Numbers compare in one form («2.7А» is «2.7а», a Latin
    «A.1» the Cyrillic «А.1»), on SQLite as on PostgreSQL."""
    if not number:
        return None
    form = number_form(number)
    for version in (
        NormClause.objects.select_related("amendment")
        .filter(Q(number=form) | Q(number__iexact=number), document_id=document_id)
        .order_by("position", "id")
    ):
        if number_form(version.number) == form and holds_on(
            day.isoformat(), version.valid_from, version.valid_to
        ):
            return version
    return None


def clause_marks(
    *, document_id: int, numbers: Iterable[str], day: date, kind: str = "clause"
) -> dict[str, str]:
    """For the clauses (or tables: `kind`) `numbers` of a document, served as of `day`, the
    mark each carries when an amendment in force then names it but its change is not made:
    «Изменение № 1 (с 01.07.2023) меняет этот пункт; изменение не применено: «…»». Keyed by
    the numbers as given; clauses with no such amendment are left out."""
    wanted = {number_form(n): n for n in numbers if n}
    if not wanted:
        return {}
    amendments = NormAmendment.objects.filter(document_id=document_id, in_force_from__lte=day)
    found: dict[str, dict[int, list[str]]] = {}
    labels: dict[int, str] = {}
    for amendment, names, order in _not_made(amendments):
        labels[amendment.pk] = amendment_label(amendment)
        for form in _marked(names, wanted, kind):
            found.setdefault(form, {}).setdefault(amendment.pk, []).append(order)
    what = "эту таблицу" if kind == TABLE else "этот пункт"
    return {
        wanted[form]: "; ".join(
            f"{labels[pk]} меняет {what}; изменение не применено: "
            + ", ".join(
                f"«{shortened(order, MARK_ORDER_SHOWN)}»" for order in dict.fromkeys(orders)
            )
            for pk, orders in by_amendment.items()
        )
        for form, by_amendment in found.items()
    }


def _not_made(amendments: Any) -> list[tuple[NormAmendment, list[tuple[str, str]], str]]:
    """The changes not applied and the orders not read of `amendments`: each with what it
    names and its words, oldest amendment first."""
    missed = NormAmendmentChange.objects.filter(amendment__in=amendments, applied=False)
    orders = NormAmendmentOrder.objects.filter(amendment__in=amendments)
    found = [
        (
            c.amendment,
            [(c.kind, c.number), *((k, n) for k, n in c.targets)],
            c.order or change_label(c),
        )
        for c in missed.select_related("amendment")
    ]
    found += [
        (o.amendment, [(k, n) for k, n in o.targets], o.text)
        for o in orders.select_related("amendment")
    ]
    return sorted(found, key=lambda item: (item[0].in_force_from, item[0].number))


def _marked(names: list[tuple[str, str]], wanted: dict[str, str], kind: str) -> set[str]:
    """The wanted numbers (their forms) that `names` name: the same kind and number, or a
    clause within a section named (not the whole text)."""
    marked = set()
    for named_kind, number in names:
        form = number_form(number)
        if named_kind == kind and form in wanted:
            marked.add(form)
        elif named_kind == PART and form and kind != TABLE:
            marked |= {w for w in wanted if w == form or w.startswith(f"{form}.")}
    return marked
