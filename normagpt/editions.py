"""Editions and amendments: which text of a clause holds on a day.

An edition is a document of the corpus (`NormDocument`: «СП 63.13330.2012», then
«СП 63.13330.2018») with the days it was in force. An amendment (`NormAmendment`,
Изменение № N) gives single clauses of an edition a new text from its day on. Applying the
amendments makes each new text a clause version of its own (a `NormClause` with its
`amendment` and the days it holds), searched like any clause; the text it changed holds
until that day. Search, the agent's pages and the claim checks read, for a day (`as_of`),
the editions in force then and the clause versions holding then.

An amendment's text is read the way amendments are written: «Пункт 10.3.2 изложить в
новой редакции: «…»», «Таблицу 5.1 изложить в новой редакции: «…»», «Пункт 5.3
исключить», «Раздел 6 дополнить пунктами 6.4, 6.5 следующего содержания: «…»» (new
clauses), «Пункт 5.2 дополнить абзацем: «…»», «Таблицу 5.1 дополнить строкой: «…»» (added
at the clause's end). Orders inside a clause's words («после слов … дополнить словами …»)
and whole sections are reported, not applied.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.exceptions import InvalidInput
from normagpt.exceptions import DocumentNotFound
from normagpt.indexing import clause_search_text, stem_counts, terms_add
from normagpt.models import (
    NormAmendment,
    NormAmendmentChange,
    NormClause,
    NormDocument,
    document_in_force,
    holds_on,
)
from normagpt.parsing import code_key

__all__ = ["document_in_force", "holds_on"]  # the day rules, for search (from the models)

_NUMBER = r"[А-ЯA-Z]?\.?\d+(?:\.\d+)*"
_CHANGE = re.compile(
    rf"(?P<what>[Пп]ункт|[Пп]одпункт|[Тт]аблиц[уаы])\s+(?P<number>{_NUMBER})\.?\s+"
    r"(?:[Ии]зложить\s+в\s+(?:(?:новой|следующей)\s+)?редакции\s*:?\s*«"
    r"|(?P<deleted>[Ии]сключить)(?=\s*(?:[.;]|$)))",  # «исключить слова …» is a substitution
    re.MULTILINE,
)
# «Пункты 5.1, 5.2 и 5.3 исключить»
_DELETED_MANY = re.compile(
    rf"(?P<what>[Пп]ункты|[Пп]одпункты|[Тт]аблицы)\s+(?P<numbers>{_NUMBER}(?:\s*(?:,|и)\s*{_NUMBER})+)"
    r"\.?\s+[Ии]сключить(?=\s*(?:[.;]|$))",
    re.MULTILINE,
)
_WORDING = r"(?:\s+(?:следующего\s+содержания|в\s+(?:(?:новой|следующей)\s+)?редакции))?\s*:?\s*«"
# «Раздел 6 дополнить пунктом 6.4 следующего содержания: «…»», «Дополнить пунктами 6.4 и 6.5:
# «…»», «Пункт 5.3 дополнить подпунктом 5.3.4: «…»», «… дополнить таблицей 5.2: «…»»
_ADDED = re.compile(
    r"[Дд]ополнить\s+(?:нов(?:ым|ыми)\s+)?(?P<what>(?:под)?пункт(?:ом|ами)|таблиц(?:ей|ами))\s+"
    rf"(?P<numbers>{_NUMBER}(?:\s*(?:,|и)\s*{_NUMBER})*){_WORDING}"
)
# «Пункт 5.2 дополнить абзацем следующего содержания: «…»», «Таблицу 5.1 дополнить строкой: «…»»
_APPENDED = re.compile(
    rf"(?P<what>[Пп]ункт|[Пп]одпункт|[Тт]аблиц[уа])\s+(?P<number>{_NUMBER})\.?\s+[Дд]ополнить\s+"
    r"(?:(?:нов|следующ)(?:им|ым|ими|ыми)\s+)?"
    r"(?:абзац(?:ем|ами)|строк(?:ой|ами)|примечани(?:ем|ями)|перечислени(?:ем|ями))" + _WORDING
)
_WORDS = r"(?:слов[оа]|значени[ея]|ссылк[уи]|обозначени[ея]|цифр[уы]|текст)"
# «Пункт 5.2. Заменить слова «не менее 20 мм» на «не менее 25 мм»», «Пункт 5.2. Второй абзац.
# Исключить слова «…»»: words replaced or removed in the clause
_SUBSTITUTED = re.compile(
    rf"(?P<what>[Пп]ункт|[Пп]одпункт|[Тт]аблиц[уаы])\s+(?P<number>{_NUMBER})\.?"
    # where in the clause («Второй абзац.», «В первом предложении»), no other order in it
    r"(?:(?!(?i:пункт|подпункт|таблиц|изложить|исключить|дополнить|заменить))[^«»\n]){0,120}?"
    rf"(?:(?P<replace>[Зз]аменить)(?:\s+{_WORDS})?|(?P<remove>[Ии]сключить)\s+{_WORDS})\s*:?\s*«"
)
_THEN_ON = re.compile(r"\s*на\s*«")
_THEN_PAIR = re.compile(r"\s*(?:,|;|и)\s*«")
_ORDER = re.compile(r"изложить|исключить|дополнить|заменить", re.IGNORECASE)

REPLACE, APPEND, SUBSTITUTE = "replace", "append", "substitute"  # NormAmendmentChange.Mode
UNREAD_SHOWN = 200


@dataclass(frozen=True)
class Change:
    kind: str  # clause | table
    number: str
    text: str  # '' deletes the clause
    mode: str = REPLACE  # APPEND: `text` is added at the clause's end
    replaces: str = ""  # SUBSTITUTE: these words become `text`


def changes_parse(text: str) -> list[Change]:
    """The clauses an amendment's text changes, in order. InvalidInput (naming `file`) when
    it states none."""
    changes = [change for _, read in _orders(text) for change in read]
    if not changes:
        raise InvalidInput(
            "the amendment states no change: expected «Пункт N изложить в новой редакции: «…»», "
            "«Пункт N исключить», «Дополнить пунктом N следующего содержания: «…»», «Пункт N "
            "дополнить абзацем: «…»» or «Пункт N. Заменить слова «…» на «…»»",
            field="file",
        )
    return changes


def _orders(text: str) -> list[tuple[tuple[int, int], list[Change]]]:
    """Each order this reading applies: where it stands and the changes it makes, in the
    order of the text."""
    orders = _blanked(text)  # an order's words inside a new text are the text, not an order
    found: list[tuple[tuple[int, int], list[Change]]] = []
    for match in _DELETED_MANY.finditer(orders):
        numbers = re.findall(_NUMBER, match["numbers"])
        found.append((match.span(), [Change(_kind(match), n, "") for n in numbers]))
    for match in _CHANGE.finditer(orders):
        if match["deleted"]:
            found.append((match.span(), [Change(_kind(match), match["number"], "")]))
            continue
        body = _quoted(text, match.end()).strip()
        if body:
            found.append((match.span(), [Change(_kind(match), match["number"], body)]))
    for match in _ADDED.finditer(orders):
        numbers = re.findall(_NUMBER, match["numbers"])
        parts = _split_at_numbers(_quoted_run(text, match.end()), numbers)
        if parts is not None:
            read = [Change(_kind(match), n, part) for n, part in zip(numbers, parts, strict=True)]
            found.append((match.span(), read))
    for match in _APPENDED.finditer(orders):
        body = _quoted_run(text, match.end()).strip()
        if body:
            found.append((match.span(), [Change(_kind(match), match["number"], body, APPEND)]))
    for match in _SUBSTITUTED.finditer(orders):
        pairs = _pairs(text, match.end(), removed=bool(match["remove"]))
        read = [
            Change(_kind(match), match["number"], new, SUBSTITUTE, old)
            for old, new in pairs
            if old.strip()
        ]
        if read:
            found.append((match.span(), read))
    return sorted(found, key=lambda order: order[0])


def _pairs(text: str, start: int, *, removed: bool) -> list[tuple[str, str]]:
    """The words a substitution replaces and those put in their place, from `start` (just
    past the first «): «А» на «Б», «В» на «Г» (`removed`: «А», «Б», each by nothing). A
    pair without its «на «…»» ends the reading."""
    pairs: list[tuple[str, str]] = []
    while True:
        old = _quoted(text, start)
        at = start + len(old) + 1
        if removed:
            new = ""
        else:
            on = _THEN_ON.match(text, at)
            if on is None:
                return pairs
            new = _quoted(text, on.end())
            at = on.end() + len(new) + 1
        pairs.append((old, new))
        following = _THEN_PAIR.match(text, at)
        if following is None:
            return pairs
        start = following.end()


def _kind(match: re.Match[str]) -> str:
    return "table" if match["what"].lower().startswith("таблиц") else "clause"


def _split_at_numbers(body: str, numbers: list[str]) -> list[str] | None:
    """The texts of the clauses `numbers` in `body`, each from its number at a line's start
    to the next one's (a single clause: the whole body). None when a number is not there
    in that order: such an order is reported, not guessed at."""
    if len(numbers) == 1:
        return [body.strip()] if body.strip() else None
    starts, at = [], 0
    for number in numbers:
        found = re.compile(rf"(?m)^\s*{re.escape(number)}(?!\.?\d)").search(body, at)
        if found is None:
            return None
        starts.append(found.start())
        at = found.end()
    parts = [body[a:b].strip() for a, b in zip(starts, [*starts[1:], len(body)], strict=True)]
    return parts if all(parts) else None


def changes_unread(text: str) -> list[str]:
    """The amendment's orders this reading does not apply (words inserted inside a clause,
    a section, an appendix): to be reported, not dropped silently. Each is its line (the
    words it quotes there included), cut at UNREAD_SHOWN characters."""
    outside = _blanked(text)
    read = [span for span, _ in _orders(text)]
    unread = []
    for order in _ORDER.finditer(outside):
        if not any(start <= order.start() < end for start, end in read):
            line_start = outside.rfind("\n", 0, order.start()) + 1
            line_end = outside.find("\n", order.end())
            line = " ".join(text[line_start : None if line_end < 0 else line_end].split())
            cut = len(line) > UNREAD_SHOWN
            unread.append(line[: UNREAD_SHOWN - 1].rstrip() + "…" if cut else line)
    return unread


def _blanked(text: str) -> str:
    """`text` with what its «quotes» hold made spaces (the quotes and every place kept)."""
    out, depth = [], 0
    for char in text:
        if char == "«":
            depth += 1
            out.append(char if depth == 1 else " ")
        elif char == "»" and depth:
            depth -= 1
            out.append(char if depth == 0 else " ")
        else:
            out.append(" " if depth and char != "\n" else char)
    return "".join(out)


def _quoted_run(text: str, start: int) -> str:
    """The quoted text from `start` (just past a «) and the quoted blocks that follow it with
    nothing but spaces between (one per added clause or paragraph), a line apart."""
    blocks = []
    while True:
        block = _quoted(text, start)
        blocks.append(block)
        after = start + len(block) + 1  # past the closing »
        rest = text[after:]
        if not rest.lstrip().startswith("«"):
            return "\n".join(blocks)
        start = after + (len(rest) - len(rest.lstrip())) + 1


def _quoted(text: str, start: int) -> str:
    """The text from `start` to the » that closes the « before it (quotes nest)."""
    depth = 1
    for at in range(start, len(text)):
        if text[at] == "«":
            depth += 1
        elif text[at] == "»":
            depth -= 1
            if depth == 0:
                return text[start:at]
    return text[start:]


@transaction.atomic
def amendment_save(
    *,
    code: str,
    number: int,
    in_force_from: date,
    changes: list[Change],
    title: str = "",
) -> NormAmendment:
    """Create or replace amendment `number` of the edition `code` with its `changes`, and
    apply the edition's amendments anew. DocumentNotFound for a code the corpus lacks."""
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
    amendments_apply(document_id=document.pk)
    return amendment


def changes_store(amendment: NormAmendment, changes: list[Change], *, every: bool) -> None:
    """Keep `changes` as the amendment's, in their order: in place of all it had (`every`),
    or of those of the clauses they name. The caller applies them."""
    replaced = amendment.changes.all()
    if not every:
        named = Q(pk__in=[])
        for change in changes:
            named |= Q(kind=change.kind, number__iexact=change.number)
        replaced = replaced.filter(named)
    replaced.delete()
    NormAmendmentChange.objects.bulk_create(
        [
            NormAmendmentChange(
                amendment=amendment, kind=c.kind, number=c.number, text=c.text, mode=c.mode,
                replaces=c.replaces,
            )
            for c in changes
        ]
    )  # fmt: skip


@transaction.atomic
def amendments_apply(*, document_id: int) -> int:
    """Make the clause versions of the edition's amendments, oldest first: each changed
    clause's text holds until the amendment's day, its new text from then (a later
    amendment of the same clause closes that one in turn). An amendment's changes of one
    clause apply in their order and make one version; each change's `applied` says whether
    it could be made. Earlier versions are replaced; the stem counts follow. The number of
    versions made."""
    # one applier per edition at a time (an admin save beside a re-ingestion): the counts
    # below are of the rows this transaction deletes
    NormDocument.objects.select_for_update().filter(pk=document_id).first()
    versions = NormClause.objects.filter(document_id=document_id, amendment__isnull=False)
    removed = stem_counts(versions.values_list("search_text", flat=True))
    versions.delete()
    NormClause.objects.filter(document_id=document_id).exclude(
        valid_from=None, valid_to=None
    ).update(valid_from=None, valid_to=None)
    amendments = NormAmendment.objects.filter(document_id=document_id).order_by(
        "in_force_from", "number"
    )
    latest: dict[tuple[str, str], NormClause | None] = {}  # None: deleted by an amendment
    made: list[NormClause] = []
    missed: list[int] = []  # the changes that could not be made
    for amendment in amendments.prefetch_related("changes"):
        of_clause: dict[tuple[str, str], list[NormAmendmentChange]] = {}
        for change in amendment.changes.all():
            of_clause.setdefault((change.kind, change.number.casefold()), []).append(change)
        for key, changes in of_clause.items():
            number = changes[-1].number
            current = (
                latest[key] if key in latest else _original(document_id, key[0], number)
            )  # a clause deleted before stays deleted until an amendment gives it a text
            text = current.text if current is not None else None
            for change in changes:
                text, applied = _changed(text, change)
                if not applied:
                    missed.append(change.pk)
            if text == (current.text if current is not None else None):
                continue  # nothing changed
            anchor, in_section = (current, True) if current else _anchor(document_id, number)
            if text is not None and anchor is None:
                missed += [c.pk for c in changes]  # an edition with no pages yet: applied
                continue  # once it is ingested
            if current is not None:
                current.valid_to = amendment.in_force_from
                if current.pk:
                    NormClause.objects.filter(pk=current.pk).update(valid_to=current.valid_to)
            if text is None or anchor is None:
                latest[key] = None
                continue
            heading = anchor.heading if in_section else ""
            version = NormClause(
                document_id=document_id,
                page_id=anchor.page_id,
                kind=key[0],
                number=number,
                heading=heading,
                text=text,
                position=anchor.position,
                start=anchor.start,
                end=anchor.end,
                search_text=clause_search_text(heading, text, table=key[0] == "table"),
                amendment=amendment,
                valid_from=amendment.in_force_from,
            )
            made.append(version)
            latest[key] = version
    for version in made:  # saved one by one: a later amendment may have closed it already
        version.save()
    stored = NormAmendmentChange.objects.filter(amendment__document_id=document_id)
    stored.exclude(applied=True).exclude(pk__in=missed).update(applied=True)
    stored.filter(pk__in=missed, applied=True).update(applied=False)
    added = stem_counts(v.search_text for v in made)
    added.subtract(removed)
    terms_add(Counter({term: n for term, n in added.items() if n}))
    return len(made)


def change_label(change: NormAmendmentChange) -> str:
    """A change as a person reads it (Russian), for what reports it: «п. 10.3.2: слова
    «20 мм» → «25 мм»»."""
    what = "табл." if change.kind == "table" else "п."
    if change.mode == SUBSTITUTE:
        return f"{what} {change.number}: слова «{change.replaces}» → «{change.text}»"
    if change.mode == APPEND:
        return f"{what} {change.number}: дополнение «{_shortened(change.text)}»"
    if not change.text:
        return f"{what} {change.number}: исключение"
    return f"{what} {change.number}: новая редакция «{_shortened(change.text)}»"


def _shortened(text: str, most: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def _changed(text: str | None, change: NormAmendmentChange) -> tuple[str | None, bool]:
    """A clause's text (None: it is not there) after `change`, and whether the change could
    be made: words replaced must stand once in the text, what is added needs a clause."""
    if change.mode == APPEND:
        if text is None or not change.text.strip():
            return text, False
        return f"{text.rstrip()}\n{change.text.strip()}", True
    if change.mode == SUBSTITUTE:
        old = change.replaces
        if text is None or not old or text.count(old) != 1:
            return text, False
        if change.text:
            return text.replace(old, change.text), True
        before, _, after = text.partition(old)
        if before.endswith(" ") and (not after or after[0] in " ,.;:)"):
            before = before[:-1]  # words removed: no space left doubled or before a mark
        return before + after, True
    return (change.text or None), True


def _original(document_id: int, kind: str, number: str) -> NormClause | None:
    return (
        NormClause.objects.filter(
            document_id=document_id, kind=kind, number__iexact=number, amendment=None
        )
        .order_by("position")
        .first()
    )


def _anchor(document_id: int, number: str) -> tuple[NormClause | None, bool]:
    """Where a clause an amendment adds goes: after the last clause of its section («5.3.4»
    after «5.3.3», «5.3.1» after «5.3»), whose heading path it shares (True); else at the
    document's end, under no heading (False)."""
    parent = number.rsplit(".", 1)[0] if "." in number else ""
    qs = NormClause.objects.filter(document_id=document_id, amendment=None)
    if parent:
        section = qs.filter(Q(number__iexact=parent) | Q(number__istartswith=f"{parent}."))
        found = section.order_by("-position").first()
        if found is not None:
            return found, True
    return qs.order_by("-position").first(), False


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
    until = f" до {document.in_force_to:%d.%m.%Y}" if document.in_force_to else ""
    return f"не действует{until}{successor}"


def amendment_label(amendment: NormAmendment) -> str:
    return f"Изменение № {amendment.number} (с {amendment.in_force_from:%d.%m.%Y})"


def source_edition(source: dict[str, Any], day: date) -> dict[str, str]:
    """`edition` (the cited document's status on `day`) and `amendment` (the amendment whose
    text of the cited clause holds then, or '') of an answer's source."""
    from normagpt.models import NormPage

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
    or an amendment deleted it)."""
    if not number:
        return None
    for version in (
        NormClause.objects.select_related("amendment")
        .filter(document_id=document_id, number__iexact=number)
        .order_by("position", "id")
    ):
        if holds_on(day.isoformat(), version.valid_from, version.valid_to):
            return version
    return None


def amendment_text(data: bytes) -> str:
    """An amendment file's text: a PDF's text layer, or the file as UTF-8 text. BadPdf (naming
    `file`) for a PDF pdfium cannot read; InvalidInput for text that is not UTF-8."""
    if data.startswith(b"%PDF"):
        import pypdfium2 as pdfium

        from normagpt.exceptions import BadPdf

        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise BadPdf(f"the amendment is not a readable PDF: {exc}", field="file") from exc
        try:
            pages = []
            for index in range(len(pdf)):
                textpage = pdf[index].get_textpage()
                pages.append(textpage.get_text_range())
                textpage.close()
            return "\n".join(pages)
        finally:
            pdf.close()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput("the amendment is neither a PDF nor UTF-8 text", field="file") from exc


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
