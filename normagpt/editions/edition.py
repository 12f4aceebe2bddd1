"""An edition's clauses as its amendments leave them, changed one change at a time (the
applying in `applying` makes the versions). A change names a clause or table by number
(compared in one form: `entities.number_form`), a section or appendix by its number or
letter (its clauses, and the unnumbered text under its heading), or the whole text.

A change that cannot be made leaves the clauses as they were and says so: words replaced
must stand once in the clause; a clause reworded, deleted or added to must be there; a
clause added must not be; a paragraph or item named must be found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from normagpt.clauses import clauses_split
from normagpt.clauses import number_key as number_order
from normagpt.editions import texts
from normagpt.editions.entities import (
    ADD,
    APPEND,
    CLAUSE,
    INSERT,
    PART,
    PREFACE,
    REPLACE,
    SECTION,
    SUBSTITUTE,
    TABLE,
    TEXT,
    TITLE,
    number_form,
)
from normagpt.models import NormClause

HEADING_PARTS = " › "  # between the headings of a clause's heading path
_FRONT = {number_form(word): word for word in (PREFACE, "Введение", "Библиография")}


@dataclass
class Unit:
    """A clause, table or unnumbered text as the amendments so far leave it."""

    kind: str
    number: str  # as stored
    key: str  # its number's form, or the front matter it is («ПРЕДИСЛОВИЕ»)
    heading: str
    text: str | None  # None: deleted
    place: NormClause  # where it stands: its own first text, or the clause it follows
    row: NormClause | None  # the version holding now


class Edition:
    """The units of an edition (`clauses`: its own texts, in order) and the changes made
    to them so far."""

    def __init__(self, clauses: list[NormClause]) -> None:
        self.units: dict[int, Unit] = {}
        self.named: dict[tuple[str, str], int] = {}
        for clause in clauses:
            key = number_form(clause.number) if clause.number else _front(clause.text)
            self.units[clause.pk] = Unit(
                clause.kind, clause.number, key, clause.heading, clause.text, clause, clause
            )
            if key:
                self.named.setdefault((clause.kind, key), clause.pk)
        self.added = 0

    def state(self) -> dict[int, tuple[str | None, str]]:
        """Each unit's text and heading now: what a later state is compared with."""
        return {uid: (unit.text, unit.heading) for uid, unit in self.units.items()}

    def apply(self, change: Any) -> bool:
        """Make `change` (a NormAmendmentChange or an `entities.Change`); whether it could
        be made."""
        number = number_form(change.number)
        return bool(_MODES[change.mode](self, change, number))

    # -- finding ------------------------------------------------------------------------

    def unit(self, kind: str, number: str) -> Unit | None:
        """The unit `number` (its form) of `kind` (None: the edition never had it)."""
        uid = self.named.get((kind, number))
        return self.units[uid] if uid is not None else None

    def section(self, number: str) -> list[Unit]:
        """The units of section or appendix `number` (every unit: ''), in order."""
        return [unit for unit in self.units.values() if _in_section(unit, number)]

    def add(self, kind: str, number: str, text: str, heading: str = "") -> Unit:
        """A new unit, placed after the clause numbered last before it, under that clause's
        headings when it is of the same section (else `heading`); at the edition's end when
        none is numbered before it."""
        anchor = self._anchor(number)
        if anchor is not None and _section_of(anchor.key) == _section_of(number):
            heading = anchor.heading
        place = anchor.place if anchor else max(self.units.values(), key=_position).place
        self.added -= 1
        unit = Unit(kind, number, number, heading, text, place, None)
        self.units[self.added] = unit
        self.named[(kind, number)] = self.added
        return unit

    def _anchor(self, number: str) -> Unit | None:
        order = number_order(number)
        numbered = [
            u for u in self.units.values() if u.kind == CLAUSE and u.key and u.text is not None
        ]
        before = [u for u in numbered if number_order(u.key) < order]
        near = [u for u in before if _section_of(u.key) == _section_of(number)]
        candidates = near or before
        return (
            max(candidates, key=lambda u: (number_order(u.key), _position(u)))
            if candidates
            else None
        )


def _front(text: str) -> str:
    first = text.strip().split("\n", 1)[0].strip() if text.strip() else ""
    key = number_form(first) if first else ""
    return key if key in _FRONT else ""


def _position(unit: Unit) -> tuple[int, int]:
    return (unit.place.position, unit.place.pk or 0)


def _section_of(number: str) -> str:
    return number.split(".", 1)[0]


def _in_section(unit: Unit, number: str) -> bool:
    if not number:
        return True
    if unit.key and unit.kind in (CLAUSE, TABLE) and unit.key.startswith(f"{number}."):
        return True
    if unit.kind == CLAUSE and unit.key == number:
        return True  # a table's own number is not its section's («Таблица 2» in section 4)
    top = unit.heading.split(HEADING_PARTS, 1)[0].strip()
    return top.startswith((f"{number} ", f"Приложение {number}")) or top == number


# -- the changes, by mode ------------------------------------------------------------------


def _replaced(edition: Edition, change: Any, number: str) -> bool:
    if change.kind == PART:  # a section's part: «Раздел 2 … примечание изложить …»
        return any(_part_replaced(u, change) for u in reversed(edition.section(number)))
    unit = edition.unit(change.kind, number)
    if unit is None:
        return False  # not in the edition: no clause is made up
    if change.part:
        return _part_replaced(unit, change)
    if not change.text:
        deleted, unit.text = unit.text is not None, None
        return deleted
    unit.text = _worded(unit, change.text)
    return True


def _part_replaced(unit: Unit, change: Any) -> bool:
    new = texts.part_replaced(unit.text, change.part, change.text) if unit.text else None
    if new is None:
        return False
    unit.text = new or None
    return True


def _worded(unit: Unit, text: str) -> str:
    """A new text in full: front matter keeps its title line («Предисловие»)."""
    if unit.kind == TEXT and unit.key in _FRONT and number_form(text.split("\n")[0]) != unit.key:
        return f"{_FRONT[unit.key]}\n{text.strip()}"
    return text.strip()


def _added(edition: Edition, change: Any, number: str) -> bool:
    unit = edition.unit(change.kind, number)
    if unit is not None and unit.text is not None:
        return False  # there already: an addition does not overwrite it
    if unit is not None:
        unit.text = change.text.strip()
    elif edition.units:  # an edition with no clauses yet: made once it is ingested
        edition.add(change.kind, number, change.text.strip())
    return bool(edition.units)


def _appended(edition: Edition, change: Any, number: str) -> bool:
    if change.kind == PART:
        units = [u for u in edition.section(number) if u.text is not None]
        unit = max(units, key=_position) if units else None
    else:
        unit = edition.unit(change.kind, number)
    if unit is None or unit.text is None or not change.text.strip():
        return False
    new = texts.text_appended(unit.text, change.text, change.part)
    if new is None:
        return False
    unit.text = new
    return True


def _inserted(edition: Edition, change: Any, number: str) -> bool:
    unit = edition.unit(change.kind, number)
    new = texts.text_inserted(unit.text, change.part, change.text) if unit and unit.text else None
    if unit is None or new is None:
        return False
    unit.text = new
    return True


def _substituted(edition: Edition, change: Any, number: str) -> bool:
    """Words replaced: in a clause or table where they stand once; in a section or the
    whole text wherever they stand (after an entry named: the first time after it)."""
    if change.kind != PART:
        unit = edition.unit(change.kind, number)
        if unit is None or unit.text is None:
            return False
        unit.text, count = texts.words_replaced(
            unit.text, change.replaces, change.text, part=change.part
        )
        return count == 1
    units = [unit for unit in edition.section(number) if unit.text is not None]
    if change.part.startswith("после «"):  # an entry named: the unit holding it, only
        units = [unit for unit in units if texts.entry_in(unit.text or "", change.part)][:1]
    made = 0
    for unit in units:
        unit.text, count = texts.words_replaced(
            unit.text or "", change.replaces, change.text, part=change.part, every=True
        )
        made += count
    return made > 0


def _sectioned(edition: Edition, change: Any, number: str) -> bool:
    """A section's or appendix's clauses replaced by those its new text holds (clauses it
    no longer has deleted, new ones added); '' deletes every unit of it."""
    units = edition.section(number)
    if not change.text.strip():
        alive = [u for u in units if u.text is not None]
        for unit in alive:
            unit.text = None
        return bool(alive)
    if not edition.units:
        return False  # an edition with no clauses yet: made once it is ingested
    new = {
        number_form(c.number): c
        for c in clauses_split([change.text])
        if c.number and c.kind in (CLAUSE, TABLE)
    }
    if not new:
        return False
    for unit in units:
        if unit.key and unit.kind in (CLAUSE, TABLE):
            unit.text = new[unit.key].text if unit.key in new else None
    for key, clause in new.items():
        if edition.units and edition.unit(clause.kind, key) is None:
            edition.add(clause.kind, key, clause.text, clause.heading)
    return True


def _titled(edition: Edition, change: Any, number: str) -> bool:
    """A section's title given anew: the heading paths of its units."""
    title = " ".join(change.text.split())
    made = False
    for unit in edition.section(number):
        parts = unit.heading.split(HEADING_PARTS)
        if parts and parts[0].startswith(f"{number} "):
            unit.heading = HEADING_PARTS.join([title, *parts[1:]])
            made = True
    return made


_MODES = {
    REPLACE: _replaced,
    ADD: _added,
    APPEND: _appended,
    INSERT: _inserted,
    SUBSTITUTE: _substituted,
    SECTION: _sectioned,
    TITLE: _titled,
}
