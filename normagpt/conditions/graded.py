"""Grades a table gives as numbers (pure): «Значения морозостойкости F …» over cells «75»,
«50»: the cell «75» is F75, given for its row and column as any value is."""

from __future__ import annotations

import re
from collections.abc import Sequence

from normagpt import claims as c
from normagpt.conditions.verdict import Mismatch, table_cells, value_condition
from normagpt.grades import Grade

# a head naming a grade's letter after its quantity: «Значения морозостойкости F», «марка по
# водонепроницаемости W», «по средней плотности D»
_LETTERED = re.compile(
    r"(?:морозостойкост|водонепроницаемост|плотност)\w*\s*,?\s+(?P<letter>[FWD])(?![\w₁₂])", re.I
)
HEADING_LINES = 8  # the lines a table's heading takes at most


def grade_as_number(grade: Grade, text: str) -> c.Value | None:
    """The number a table whose heading names the grade's letter («морозостойкости F») gives
    `grade` as (75 for F75); None when its heading names no such letter."""
    heading = "\n".join(text.splitlines()[:HEADING_LINES])
    if not any(m["letter"].upper() == grade.kind for m in _LETTERED.finditer(heading)):
        return None
    try:
        number = float(grade.number)
    except ValueError:
        return None
    return c.Value(number, "", grade.number, "", 1.0)


def grade_condition(
    claim: str, grade: Grade, clauses: Sequence[tuple[str, bool]]
) -> tuple[bool, Mismatch | None]:
    """Whether a cited table gives `grade` as a number in its cells, and, when it does, the
    condition it gives it for if not the claim's (`value_condition`)."""
    for index, (text, table) in enumerate(clauses):
        value = grade_as_number(grade, text) if table else None
        if value is None or not any(c.value_held(value, list(v)) for v in table_cells(text)):
            continue
        mismatch = value_condition(claim, value, [(text, True)], kind="")
        return True, None if mismatch is None else Mismatch(
            mismatch.value, mismatch.given_for, mismatch.instead, index
        )
    return False, None
