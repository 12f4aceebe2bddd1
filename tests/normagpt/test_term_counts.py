"""A search process keeps the stem counts it read while the corpus's counts are the same
generation (`terms.GENERATION`): any change of the counts, by any process, is seen by the
next search."""

from __future__ import annotations

import pytest

from normagpt import services
from normagpt.ingest import document_texts_ingest
from normagpt.search import clauses_search
from normagpt.search_candidates import TERM_COUNTS, idf, vocabulary_read
from normagpt.terms import terms_recount


def ingest(code: str, text: str) -> None:
    document = services.document_save(code=code, title="Проверочный документ")
    document_texts_ingest(document_id=document.pk, texts=[text])


@pytest.mark.django_db(transaction=True)
def test_counts_are_read_anew_once_the_corpus_changes() -> None:
    ingest("СП 995.0000.2026", "5.1 Уклон кровли из металлочерепицы принимают не менее 14 %.")
    before = vocabulary_read(["уклон"])
    assert TERM_COUNTS.of(["кровл"], before.generation) == {"кровл": 1}
    assert clauses_search(keywords=["уклон кровли"])  # a search reads them through the cache

    ingest("СП 994.0000.2026", "6.1 Кровлю из черепицы устраивают по обрешетке.")
    after = vocabulary_read(["уклон"])
    assert after.generation > before.generation
    assert TERM_COUNTS.of(["кровл", "обрешетк"], after.generation) == {
        "кровл": 2,
        "обрешетк": 1,
    }
    terms_recount()  # every count written anew: another generation still
    assert vocabulary_read(["уклон"]).generation > after.generation


@pytest.mark.django_db(transaction=True)
def test_weights_follow_the_counts_generation() -> None:
    ingest("СП 993.0000.2026", "5.1 Уклон кровли из металлочерепицы принимают не менее 14 %.")
    before = vocabulary_read(["уклон"])
    weights = TERM_COUNTS.idfs({"кровл", "небывал"}, before.generation, before.total)
    assert weights == {"кровл": idf(1, before.total), "небывал": 0.0}  # uncounted: nothing

    ingest("СП 992.0000.2026", "6.1 Кровлю из черепицы устраивают по обрешетке.")
    after = vocabulary_read(["уклон"])
    assert TERM_COUNTS.idfs({"кровл"}, after.generation, after.total) == {
        "кровл": idf(2, after.total)
    }


@pytest.mark.django_db(transaction=True)
def test_a_second_form_of_a_query_word_takes_no_other_word_as_its_variant() -> None:
    """«участок» and «участка» stem apart (`участок`, `участк`): the second is a form of
    the first's word, and the stems left after the first took its forms («участвовать»'s)
    are no forms of it."""
    ingest(
        "СП 991.0000.2026",
        "5.1 Площадь участка принимают по расчету. Участок озеленяют. "
        "5.2 В приемке участвует заказчик.",
    )
    vocabulary = vocabulary_read(["участк", "участок"], {"участок": ("участк",)})
    assert vocabulary.variants.get("участок") == "участк"
    assert "участв" not in vocabulary.variants  # «участвует»: no form of «участок»
    assert set(vocabulary.counts) == {"участк"}


def test_on_sqlite_the_counts_of_a_words_variants_are_read_from_the_index_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The vocabulary's ranges of stems (a word's variants by their first letters) are read
    from an index holding the counts, with no look-up in the table per stem (migration
    0022): on a schema made as Django makes it, whatever database the suite runs on."""
    import importlib
    import sqlite3

    from normagpt import search_candidates

    asked: list[tuple[str, list[object]]] = []
    monkeypatch.setattr(
        search_candidates, "sql_rows", lambda sql, params: asked.append((sql, params)) or []
    )
    vocabulary_read(["площад", "кухн"], {"кухн": ("кухонн",)})
    (sql, params), *_ = asked

    covered = importlib.import_module("normagpt.migrations.0022_term_counts_covered")
    db = sqlite3.connect(":memory:")
    db.execute(
        'CREATE TABLE "normagpt_normterm" '
        '("term" varchar(40) NOT NULL PRIMARY KEY, "clauses" integer NOT NULL)'
    )
    for statement in covered.UP["sqlite"]:
        db.execute(statement)
    plan = [row[-1] for row in db.execute("EXPLAIN QUERY PLAN " + sql.replace("%s", "?"), params)]
    ranges = [step for step in plan if "term>?" in step]
    assert len(ranges) >= 2, plan
    assert all("COVERING INDEX" in step for step in ranges), plan
