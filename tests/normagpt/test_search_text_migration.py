"""Migration 0023: the clauses stored before it are searched by the words their text sets
letter-spaced after it (their search text made anew, the stems' counts moved with it), on
SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

import pytest

from normagpt import indexing, parsing, services
from normagpt.models import NormClause, NormTerm
from tests.migrating import migrate, migrate_to_latest
from tests.normagpt.material import pages_stored

BEFORE = [("normagpt", "0022_term_counts_covered")]
# and 0024, which adds the abbreviations' table the code of today writes and reads
AFTER = [("normagpt", "0024_abbreviations")]


def clauses_held(stem: str) -> int:
    return NormTerm.objects.filter(term=stem).values_list("clauses", flat=True).first() or 0


@pytest.mark.django_db(transaction=True)
def test_a_table_stored_before_the_migration_is_searched_by_its_letter_spaced_head(
    monkeypatch: Any,
) -> None:
    migrate(BEFORE)  # (0023 changes no table: the models are the same)
    try:
        with monkeypatch.context() as patch:  # stored as the code before 0023 stored it
            patch.setattr(parsing, "letter_spaced_joined", lambda text: text)
            patch.setattr(indexing, "abbreviations_refresh", lambda *_: None)  # no table yet
            document = pages_stored(
                "ГОСТ 8736-2014", "Песок", "gost-8736-2014-spaced-heads.json", 9
            )
        table = NormClause.objects.get(document=document, kind="table", number="3")
        grains = parsing.search_stems("зерен")[0]  # «С о д е р ж а н и е  зе р е н»
        assert grains not in table.search_text.split()
        held = clauses_held(grains)

        migrate(AFTER)
        table.refresh_from_db()
        assert grains in table.search_text.split()
        assert clauses_held(grains) == held + 1
        hits = services.clauses_search(keywords=["содержание зерен крупностью менее 0,16 мм"])
        assert (hits[0].clause.kind, hits[0].clause.number) == ("table", "3")
    finally:
        migrate_to_latest()
