"""Subjects, exams and aliases of the 30 СДАМ ГИА sites."""

from __future__ import annotations

import pytest

from core.exceptions import InvalidInput
from problems.subjects import site_resolve, sites_all


def test_fifteen_sites_per_exam() -> None:
    sites = sites_all()
    assert len([s for s in sites if s.exam == "ege"]) == 15
    assert len([s for s in sites if s.exam == "oge"]) == 15
    assert {s.label for s in sites} >= {"mathb-ege", "ruso-oge", "en-oge", "hist-ege"}


@pytest.mark.parametrize(
    ("subject", "exam", "label"),
    [
        ("math", "ege", "math-ege"),
        ("информатика", "ege", "inf-ege"),
        ("Профильная математика", "ege", "math-ege"),
        ("профмат", "ЕГЭ", "math-ege"),
        ("база", "ege", "mathb-ege"),
        ("Русский язык", "oge", "rus-oge"),
        ("устное собеседование", "ОГЭ", "ruso-oge"),
        (" PHYS ", "oge", "phys-oge"),
        ("english", "ege", "en-ege"),
    ],
)
def test_aliases_resolve(subject: str, exam: str, label: str) -> None:
    assert site_resolve(subject=subject, exam=exam).label == label


@pytest.mark.parametrize(
    ("subject", "exam", "field", "fragment"),
    [
        ("mathb", "oge", "subject", "exists only for ege, not for oge"),
        ("ruso", "ege", "subject", "exists only for oge, not for ege"),
        ("astronomy", "ege", "subject", "valid codes for ege: math, mathb, inf"),
        ("math", "vpr", "exam", "exam must be 'ege' or 'oge'"),
    ],
)
def test_impossible_pairs_are_refused_listing_valid_codes(
    subject: str, exam: str, field: str, fragment: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        site_resolve(subject=subject, exam=exam)
    assert caught.value.field == field
    assert fragment in caught.value.message
