"""Amendments kept: an amendment's changes and the orders its reading did not apply stored,
its edition's amendments applied anew, an amendment removed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import date

from django.db import transaction

from core.exceptions import InvalidInput
from normagpt.editions.applying import amendments_apply
from normagpt.editions.entities import (
    ADD,
    APPEND,
    INSERT,
    PART,
    SECTION,
    SUBSTITUTE,
    TABLE,
    TEXT,
    TITLE,
    Change,
    Order,
    Reading,
    number_form,
    shortened,
)
from normagpt.editions.orders import amendment_read
from normagpt.exceptions import DocumentNotFound
from normagpt.models import (
    NormAmendment,
    NormAmendmentChange,
    NormAmendmentOrder,
    NormClause,
    NormDocument,
)
from normagpt.parsing import code_key
from normagpt.terms import stem_counts, terms_add

NO_CHANGE = (
    "the amendment states no change: expected «Пункт N изложить в новой редакции: «…»», "
    "«Пункт N исключить», «Дополнить пунктом N следующего содержания: «…»», «Пункт N "
    "дополнить абзацем: «…»» or «Пункт N. Заменить слова «…» на «…»»"
)


def reading_checked(text: str) -> Reading:
    """An amendment's text read (`reading.amendment_read`). InvalidInput (naming `file`)
    when it states no change the reader can make."""
    return changes_required(amendment_read(text))


def changes_required(reading: Reading) -> Reading:
    """`reading`, when it states a change the reader can make; else InvalidInput (naming
    `file`, and the first order not read)."""
    if not reading.changes:
        raise InvalidInput(NO_CHANGE + _unread_named(reading), field="file")
    return reading


def _unread_named(reading: Reading) -> str:
    unread = reading.unread
    return f"; not read: {unread[0].shown} ({unread[0].reason})" if unread else ""


def changes_parse(text: str) -> list[Change]:
    """The changes an amendment's text makes, in order (see `reading_checked`)."""
    return reading_checked(text).changes


def changes_unread(text: str) -> list[str]:
    """The amendment's orders its reading does not apply, each as written (cut at
    `entities.UNREAD_SHOWN`): to be named, never dropped."""
    return [order.shown for order in amendment_read(text).unread]


@transaction.atomic
def amendment_save(
    *,
    code: str,
    number: int,
    in_force_from: date,
    changes: list[Change],
    title: str = "",
    unread: Iterable[Order] = (),
) -> NormAmendment:
    """Create or replace amendment `number` of the edition `code` with its `changes` and the
    orders read but not applied (`unread`), and apply the edition's amendments anew.
    DocumentNotFound for a code the corpus lacks."""
    document = NormDocument.objects.filter(code_key=code_key(code)).first()
    if document is None:
        raise DocumentNotFound(f"no document {code} in the corpus", extra={"field": "code"})
    if number < 1:
        raise InvalidInput("number must be 1 or more", field="number")
    amendment, _ = NormAmendment.objects.update_or_create(
        document=document,
        number=number,
        defaults={"in_force_from": in_force_from, "title": title},
    )
    changes_store(amendment, changes, every=True)
    orders_store(amendment, unread)
    amendments_apply(document_id=document.pk)
    return amendment


def changes_store(amendment: NormAmendment, changes: list[Change], *, every: bool) -> None:
    """Keep `changes` as the amendment's, in their order: in place of all it had (`every`),
    or of those read from a file before and those typed in for what they name (a file read
    anew replaces the last file's reading whole). The caller applies them."""
    stale = []
    if not every:
        named = {(c.kind, number_form(c.number)) for c in changes}
        stale = [
            row.pk
            for row in amendment.changes.all()
            if row.order or (row.kind, number_form(row.number)) in named
        ]
    (amendment.changes.all() if every else amendment.changes.filter(pk__in=stale)).delete()
    NormAmendmentChange.objects.bulk_create(
        [
            NormAmendmentChange(
                amendment=amendment, kind=c.kind, number=c.number, text=c.text, mode=c.mode,
                replaces=c.replaces, part=c.part, order=c.order,
                targets=[list(target) for target in c.targets],
            )
            for c in changes
        ]
    )  # fmt: skip


def orders_store(amendment: NormAmendment, orders: Iterable[Order]) -> None:
    """Keep `orders` as the amendment's orders not applied, in place of those it had."""
    amendment.unread_orders.all().delete()
    NormAmendmentOrder.objects.bulk_create(
        NormAmendmentOrder(
            amendment=amendment,
            position=position,
            text=order.text,
            targets=[list(target) for target in order.targets],
            reason=order.reason[:300],
        )
        for position, order in enumerate(orders)
    )


@transaction.atomic
def amendment_delete(*, amendment_id: int) -> None:
    """Remove an amendment: its clause versions leave the stem counts, the edition's other
    amendments are applied anew."""
    amendment = NormAmendment.objects.filter(pk=amendment_id).first()
    if amendment is None:
        return
    NormDocument.objects.select_for_update().filter(pk=amendment.document_id).first()
    versions = NormClause.objects.filter(amendment=amendment)
    removed = stem_counts(versions.values_list("search_text", flat=True))
    versions.delete()
    terms_add(Counter({term: -n for term, n in removed.items()}))
    amendment.delete()
    amendments_apply(document_id=amendment.document_id)


def target_label(kind: str, number: str) -> str:
    """What a change names, as a person reads it: «п. 2.3», «табл. 1», «разд. 2», «прил. А»,
    «весь текст», «Предисловие»."""
    if kind == TABLE:
        return f"табл. {number}"
    if kind == PART:
        if not number:
            return "весь текст"
        return f"прил. {number}" if number[:1].isalpha() else f"разд. {number}"
    if kind == TEXT:
        return number.capitalize()
    return f"п. {number}"


def change_label(change: NormAmendmentChange | Change) -> str:
    """A change as a person reads it (Russian), for what reports it: «п. 10.3.2: слова
    «20 мм» → «25 мм»»."""
    where = target_label(change.kind, change.number)
    where += f" ({change.part})" if change.part and change.mode != INSERT else ""
    text = shortened(change.text, 80)
    if change.mode == SUBSTITUTE:
        return f"{where}: слова «{change.replaces}» → «{change.text}»"
    described = {
        APPEND: f"дополнение «{text}»",
        ADD: f"новый пункт «{text}»",
        INSERT: f"вставка перед «{change.part}»: «{text}»",
        SECTION: f"новая редакция «{text}»" if change.text else "исключение",
        TITLE: f"новое наименование «{text}»",
    }
    if change.mode in described:
        return f"{where}: {described[change.mode]}"
    return f"{where}: новая редакция «{text}»" if change.text else f"{where}: исключение"
