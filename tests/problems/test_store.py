"""Storing parsed problems: one `INSERT … ON CONFLICT DO UPDATE` per call, whatever the count."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from problems.entities import Codifier, ParsedProblem
from problems.models import Problem
from problems.services import problem_store, problems_store
from problems.subjects import site_resolve

pytestmark = pytest.mark.django_db

CONTROL = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")


def statements(run: Callable[[], Any]) -> list[str]:
    """The SQL statements `run()` sends (transaction control left out)."""
    with CaptureQueriesContext(connection) as captured:
        run()
    return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(CONTROL)]


def parsed(problem_id: str, condition: str = "Найдите x.", **fields: Any) -> ParsedProblem:
    return ParsedProblem(problem_id=problem_id, condition_text=condition, **fields)


def test_one_problem_is_one_statement_and_a_second_store_updates_the_row() -> None:
    site = site_resolve(subject="math")
    (sql,) = statements(lambda: problem_store(site=site, parsed=parsed("27340", answer="0,5")))
    assert sql.startswith("INSERT")
    assert "ON CONFLICT" in sql
    first = Problem.objects.get()

    updated = parsed("27340", "Найдите y.", codifier=[Codifier(code="1.1", title="Числа")])
    assert len(statements(lambda: problem_store(site=site, parsed=updated))) == 1
    row = Problem.objects.get()
    assert row.pk == first.pk
    assert row.condition_text == "Найдите y."
    assert row.codifier == [{"code": "1.1", "title": "Числа"}]
    assert row.search_text == "найдите y"
    assert row.search_terms == ""  # a stop word and a letter: nothing to find it by

    problem_store(site=site, parsed=parsed("27340", "Найдите площадь ромба, равного 24."))
    # what the database's full-text index reads: keywords (OCR-folded: о → 0, б → 6), the
    # long ones' stems, the numbers
    assert Problem.objects.get().search_terms == "n24 пл0щаx пл0щадь р0м6а равн0x равн0г0"
    assert row.answer == ""


def test_the_returned_row_has_its_key_for_relations() -> None:
    site = site_resolve(subject="math")
    stored = problem_store(site=site, parsed=parsed("1"))
    again = problem_store(site=site, parsed=parsed("1", "Другое условие."))
    assert stored.pk is not None
    assert again.pk == stored.pk == Problem.objects.get().pk


def test_a_page_is_one_statement_whole_problems_only_a_repeat_once() -> None:
    site = site_resolve(subject="math")
    page = [parsed("1"), parsed("2", ""), parsed("3"), parsed("1", "Повтор.")]
    rows: list[Problem] = []
    (sql,) = statements(lambda: rows.extend(problems_store(site=site, parsed=page)))
    assert sql.startswith("INSERT")
    assert [row.problem_id for row in rows] == ["1", "3", "1"]
    stored = {row.problem_id: row.condition_text for row in Problem.objects.all()}
    assert stored == {"1": "Повтор.", "3": "Найдите x."}
    assert statements(lambda: problems_store(site=site, parsed=[parsed("2", "")])) == []
