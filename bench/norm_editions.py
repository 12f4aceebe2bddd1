"""Editions and amendments on the benchmark's corpus: the same question asked as of two days.

    .venv/bin/python bench/normagpt.py --editions [--pages 10000]

The corpus of `bench/norm_corpus.py` (real norm vocabulary; a tenth of its СП have an older,
replaced edition that states some values otherwise) gets days: each edition in force from
July 1 of its year, an older one until its successor's day. Amendments are made the way
they are issued, as text read by the amendment reader (`normagpt.editions.changes_parse`):
for 15 facts of editions in force, «Изменение № 1» gives the clause a new value from March
1 two years after the edition, its text otherwise the clause's own — for a third a
restructuring: «Пункт N исключить» and «Подраздел P дополнить пунктом P.K следующего
содержания: «P.K …»», the fact restated with its new value under a new number (asked after
the day, the right clause is P.K); for a third, where the value's words stand once in the
clause, «Пункт N. Заменить слова «…» на «…»»; the rest «Пункт N изложить в новой редакции:
«…»». Every order must be read and made, or the benchmark stops.

30 questions, each naming its document series by a short name as people do («СП 398»):
15 on a fact both editions state (asked on a day of the old edition and on one of the new),
15 on an amended fact (asked before the amendment's day and after). For each of the 60
asks: whether search's first clause is of the edition in force that day; whether the asked
clause, among the first five, reads that day's text (the edition's, or the amendment's
after its day); whether the first clause is the asked one with that text (ranking too);
and whether the claim check (what a cited answer is checked against) confirms that day's
value and refuses the other day's. The baseline is the same search without a day: the
editions and clause texts in force today.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass
from datetime import date
from typing import Any

QUESTIONS_EACH = 15


@dataclass
class Ask:
    kind: str  # edition | amendment
    keywords: list[str]
    series: str  # the short name the question names
    day: date
    code: str  # the right edition
    number: str  # the right clause
    value: str  # the value it states that day
    other: str  # the value of the question's other day


def days_assign(builder: Any) -> dict[str, tuple[date, date | None]]:
    """Each document's days in force (from its code's year; an old edition until its
    successor's day), written to the corpus."""
    from normagpt.models import NormDocument

    days: dict[str, tuple[date, date | None]] = {}
    successors = {d.code: d.replaced_by for d in builder.documents if d.replaced_by}
    for document in builder.documents:
        year = int(re.findall(r"\d{4}", document.code)[-1])
        days[document.code] = (date(year, 7, 1), None)
    for old, new in successors.items():
        days[old] = (days[old][0], days[new][0])
    for code, (since, until) in days.items():
        NormDocument.objects.filter(code=code).update(in_force_from=since, in_force_to=until)
    return days


def asks_make(builder: Any, days: dict[str, tuple[date, date | None]]) -> list[Ask]:
    """The 60 asks (30 questions × 2 days); the amendments they ask about are stored."""
    rng = random.Random(31)
    edition_facts, amendable = _facts_askable(builder)
    asks = _edition_asks(builder, days, edition_facts, rng)
    return asks + _amendment_asks(builder, days, amendable, rng)


def _facts_askable(builder: Any) -> tuple[list[tuple[Any, Any, Any]], list[tuple[Any, Any]]]:
    """The facts two editions state with different values (the fact, the old edition's
    place, the new one's), and the facts an edition in force that replaced another states
    (an amendment may change them)."""
    successors = {d.code: d.replaced_by for d in builder.documents if d.replaced_by}
    edition_facts, amendable = [], []
    for key, places in sorted(builder.places.items(), key=lambda kv: str(kv[0])):
        if key.prop.startswith("table:"):
            continue
        by_code = {p.code: p for p in places}
        for old, new in successors.items():
            if old in by_code and new in by_code and by_code[old].value != by_code[new].value:
                edition_facts.append((key, by_code[old], by_code[new]))
        in_force = [p for p in places if p.in_force and p.code in successors.values()]
        if in_force:
            amendable.append((key, in_force[0]))
    return edition_facts, amendable


def _edition_asks(
    builder: Any,
    days: dict[str, tuple[date, date | None]],
    edition_facts: list[tuple[Any, Any, Any]],
    rng: random.Random,
) -> list[Ask]:
    """QUESTIONS_EACH facts both editions state, each asked on a day of each edition."""
    from bench.norm_corpus_questions import short_name

    asks: list[Ask] = []
    stored = [f for f in rng.sample(edition_facts, k=len(edition_facts)) if _stored(f[1], f[2])]
    for key, old, new in stored[:QUESTIONS_EACH]:
        keywords, series = _keywords(builder, key, new.code, rng, short_name)
        old_day = _between(days[old.code][0], days[new.code][0])
        new_day = _between(days[new.code][0], date(2026, 1, 1))
        asks.append(Ask("edition", keywords, series, old_day, old.code, old.number, old.value,
                        new.value))  # fmt: skip
        asks.append(Ask("edition", keywords, series, new_day, new.code, new.number, new.value,
                        old.value))  # fmt: skip
    return asks


@dataclass
class _Tally:
    """How the amendments' orders were worded, so that a third of each kind is made."""

    chosen: int
    moved: int = 0
    substituted: int = 0


def _amendment_asks(
    builder: Any,
    days: dict[str, tuple[date, date | None]],
    amendable: list[tuple[Any, Any]],
    rng: random.Random,
) -> list[Ask]:
    """QUESTIONS_EACH facts given a new value by an «Изменение № 1» of their document
    (stored), each asked before the amendment's day and after."""
    per_document: dict[str, list[tuple[Any, Any, str]]] = {}
    chosen = 0
    for key, place in rng.sample(amendable, k=len(amendable)):
        if chosen == QUESTIONS_EACH:
            break
        if not _stored(place):
            continue  # a place the split reads otherwise: not asked
        value = _another_value(place.value, rng)
        per_document.setdefault(place.code, []).append((key, place, value))
        chosen += 1
    tally = _Tally(chosen)
    asks: list[Ask] = []
    for code, facts in per_document.items():
        asks += _amendment_store(builder, days, code, facts, rng, tally)
    print(f"amendments: {chosen} facts, {tally.moved} moved to a new number, "
          f"{tally.substituted} by words replaced, the rest in a new wording",
          file=sys.stderr)  # fmt: skip
    return asks


def _amendment_store(
    builder: Any,
    days: dict[str, tuple[date, date | None]],
    code: str,
    facts: list[tuple[Any, Any, str]],
    rng: random.Random,
    tally: _Tally,
) -> list[Ask]:
    """The amendment of `code` that gives `facts` their new values, written as orders the
    amendment reader must read and make, stored; the asks on its facts."""
    from bench.norm_corpus_questions import short_name
    from normagpt.editions import amendment_save, changes_parse, changes_unread
    from normagpt.editions.texts import words_replaced
    from normagpt.models import NormClause

    asks: list[Ask] = []
    since = date(days[code][0].year + 2, 3, 1)
    orders = [f"Изменение № 1 к {code}", f"Дата введения — {since:%d.%m.%Y}", ""]
    taken = set(NormClause.objects.filter(document__code=code).values_list("number", flat=True))
    for key, place, value in facts:
        clause = NormClause.objects.get(document__code=code, number=place.number, amendment=None)
        text = _value_replaced(clause.text, place.value, value)
        number = _number_free(place.number, taken) if tally.moved * 3 < tally.chosen else None
        # the reader replaces whole words standing once: only such a value is worded so
        replaced, times = words_replaced(clause.text, place.value, value)
        words = number is None and tally.substituted * 3 < tally.chosen and times == 1
        if words and replaced == text:
            tally.substituted += 1
            orders += [f"Пункт {place.number}. Заменить слова «{place.value}» на «{value}».", ""]
        elif number is None:
            orders += [f"Пункт {place.number} изложить в новой редакции:", f"«{text}»", ""]
        else:
            tally.moved += 1
            taken.add(number)
            parent = place.number.rsplit(".", 1)[0]
            body = number + text[len(place.number) :]
            orders += [f"Пункт {place.number} исключить.", f"Подраздел {parent} дополнить "
                       f"пунктом {number} следующего содержания:", f"«{body}»", ""]  # fmt: skip
        keywords, series = _keywords(builder, key, code, rng, short_name)
        before = _between(days[code][0], since)
        after = _between(since, date(2026, 1, 1))
        asks.append(Ask("amendment", keywords, series, before, code, place.number,
                        place.value, value))  # fmt: skip
        asks.append(Ask("amendment", keywords, series, after, code, number or place.number,
                        value, place.value))  # fmt: skip
    written = "\n".join(orders)
    if changes_unread(written):
        raise SystemExit(f"the amendment reader leaves orders of {code}: {written}")
    amendment = amendment_save(
        code=code, number=1, in_force_from=since, changes=changes_parse(written)
    )
    if amendment.changes.filter(applied=False).exists():
        raise SystemExit(f"a change of {code}'s amendment was not made: {written}")
    return asks


def _number_free(number: str, taken: set[str]) -> str | None:
    """The number a clause moved within its subsection gets: one past the subsection's last
    (None for a clause with no subsection, or numbers that are not digits)."""
    parent, _, last = number.rpartition(".")
    if not parent or not last.isdigit():
        return None
    siblings = [n.rpartition(".")[2] for n in taken if n.rpartition(".")[0] == parent]
    return f"{parent}.{max(int(n) for n in siblings if n.isdigit()) + 1}"


def _stored(*places: Any) -> bool:
    """Whether each place is a stored clause stating its value (the split may read a place
    otherwise: a number wrapped to a line's start)."""
    from normagpt.models import NormClause

    for place in places:
        clause = NormClause.objects.filter(
            document__code=place.code, number=place.number, amendment=None
        ).first()
        if clause is None or not _holds(clause.text, place.value):
            return False
    return True


def _keywords(
    builder: Any, key: Any, code: str, rng: random.Random, short: Any
) -> tuple[list[str], str]:
    fact = builder.facts[key]
    domain = builder._domain(key.domain)
    question = builder._question(fact, domain, rng, "alias")
    return question.keywords, short(code, rng)


def _between(start: date, end: date) -> date:
    """A day well inside [start, end): a third of the way."""
    return date.fromordinal(start.toordinal() + (end.toordinal() - start.toordinal()) // 3)


def _another_value(value: str, rng: random.Random) -> str:
    """The value an amendment sets instead: a number a step away, as amendments tighten or
    relax a requirement."""
    number = re.search(r"\d+(?:,\d+)?", value)
    if number is None:
        return value + " (в новой редакции)"
    digits = number.group(0)
    if "," in digits:
        new = f"{float(digits.replace(',', '.')) + 0.5:.1f}".replace(".", ",")
    else:
        step = max(1, int(digits) // 5)
        new = str(int(digits) + rng.choice([step, -step if int(digits) > step else step]))
    return value[: number.start()] + new + value[number.end() :]


def _value_replaced(text: str, old: str, new: str) -> str:
    """The clause's text with its value `old` made `new` (its number left as it is)."""
    number, _, body = text.partition(" ")
    first = re.escape(re.search(r"\d+(?:,\d+)?", old).group(0))  # type: ignore[union-attr]
    newer = re.search(r"\d+(?:,\d+)?", new).group(0)  # type: ignore[union-attr]
    return f"{number} " + re.sub(rf"(?<![\d,.]){first}(?![\d,.]\d)", newer, body, count=1)


def _holds(text: str, value: str) -> bool:
    number = re.search(r"\d+(?:,\d+)?", value)
    if number is None:
        return value in text
    return re.search(rf"(?<![\d,]){re.escape(number.group(0))}(?![\d,])", text) is not None


def score(asks: list[Ask], *, dated: bool) -> dict[str, Any]:
    """Search's first clause for each ask, and the claim check of that day's value and of the
    other day's, with the day (`dated`) or without (the baseline: today's editions)."""
    from normagpt.models import NormClause
    from normagpt.search import clauses_search
    from normagpt.verification import Checker

    counts = {"edition": 0, "found": 0, "text": 0, "both": 0, "confirmed": 0, "other_passed": 0}
    for ask in asks:
        day = ask.day if dated else None
        hits = clauses_search(
            keywords=ask.keywords, expected_documents=[ask.series], limit=5, as_of=day
        )
        top = hits[0].clause if hits else None
        asked = [
            h.clause
            for h in hits
            if (h.clause.document.code, h.clause.number) == (ask.code, ask.number)
        ]
        edition = top is not None and top.document.code == ask.code
        text = bool(asked) and _holds(asked[0].text, ask.value)
        counts["edition"] += edition
        counts["found"] += bool(asked)
        counts["text"] += text
        counts["both"] += edition and top.number == ask.number and _holds(top.text, ask.value)  # type: ignore[union-attr]
        page = (
            NormClause.objects.filter(document__code=ask.code, number=ask.number)
            .values_list("page__number", flat=True)
            .first()
        )
        source = [{"document": ask.code, "clause": ask.number, "page": page}]
        checker = Checker(sources=source, pages=[], as_of=day)
        for value, key in ((ask.value, "confirmed"), (ask.other, "other_passed")):
            claim = f"Принимают {value} (п. {ask.number} {ask.code})."
            [result] = checker.answer(claim) or [None]
            counts[key] += result is not None and result.verdict == "confirmed"
    return counts


def run(pages: int) -> list[list[str]]:
    """Loads the corpus (the database set up by the caller), makes the asks, scores both
    modes; the table's rows."""
    from bench.norm_load import norms_load

    builder = norms_load(pages, fresh=True)
    days = days_assign(builder)
    asks = asks_make(builder, days)
    rows = []
    for label, dated in (("as_of (the asked day)", True), ("no day (today's editions)", False)):
        counts = score(asks, dated=dated)
        n = len(asks)
        rows.append([
            label, str(n), f"{counts['edition']}/{n}", f"{counts['found']}/{n}",
            f"{counts['text']}/{counts['found']}", f"{counts['both']}/{n}",
            f"{counts['confirmed']}/{n}", f"{counts['other_passed']}/{n}",
        ])  # fmt: skip
    return rows
