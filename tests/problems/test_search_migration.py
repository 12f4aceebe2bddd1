"""Migration 0004: the problems stored before it are found by the database's index after
it (their terms filled, the index built from them), on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest
from django.utils import timezone

from problems import index
from problems.matching import Query, matching_form
from problems.subjects import Site
from tests.migrating import migrate, migrate_to_latest

BEFORE = [("problems", "0003_verbose_names")]
AFTER = [("problems", "0004_search_in_the_database")]
TEXTS = {
    "1": "Найдите площадь ромба, если его диагонали равны 10 и 24.",
    "2": "Найдите периметр квадрата, площадь которого равна 49.",
}


@pytest.mark.django_db(transaction=True)
def test_problems_stored_before_the_migration_are_found_after_it() -> None:
    old = migrate(BEFORE).get_model("problems", "Problem")
    crowd = [
        old(
            subject="math",
            exam="ege",
            problem_id=str(100 + i),
            search_text=matching_form(f"Найдите значение выражения {i} умножить на {i + 7}."),
            fetched_at=timezone.now(),
        )
        for i in range(index.NARROW_TO + 20)
    ]
    mine = [
        old(
            subject="math",
            exam="ege",
            problem_id=pid,
            search_text=matching_form(text),
            fetched_at=timezone.now(),
        )
        for pid, text in TEXTS.items()
    ]
    old.objects.bulk_create(crowd + mine)
    try:
        new = migrate(AFTER).get_model("problems", "Problem")
        assert new.objects.filter(search_terms="").count() == 0
        for pid, text in TEXTS.items():
            ranked = index.search(
                Site("math", "ege"), Query.from_text(text), threshold=0.8, limit=3
            )
            assert [new.objects.get(pk=c.key).problem_id for c, _ in ranked] == [pid]
    finally:
        migrate_to_latest()
