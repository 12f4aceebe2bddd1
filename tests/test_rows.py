"""core.rows.JoinedLoader: instances as the ORM's, relations attached, values converted."""

from __future__ import annotations

import contextlib
import math
import sqlite3
from datetime import date
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.models.signals import post_init
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from core import rows
from core.rows import JoinedLoader, rows_fetch
from normagpt.models import NormClause, NormDocument, NormPage

pytestmark = pytest.mark.django_db


def _clause() -> NormClause:
    document = NormDocument.objects.create(
        code="СП 1.13330.2020", title="Свод", is_sample=True, in_force_from=date(2020, 7, 1)
    )
    page = NormPage.objects.create(document=document, number=3, text="5.1 Текст", clauses=["5.1"])
    return NormClause.objects.create(
        document=document,
        page=page,
        number="5.1",
        text="Текст",
        search_text="текст",
        valid_from=date(2021, 1, 15),
    )


def test_loads_the_instances_with_their_relations_in_one_query() -> None:
    clause = _clause()
    loader = JoinedLoader(NormClause, page=NormPage, document=NormDocument)
    with CaptureQueriesContext(connection) as queries:
        loaded = loader.by_ids([clause.pk, clause.pk, 10**9])
        found = loaded[clause.pk]
        assert (found.page.number, found.document.code) == (3, "СП 1.13330.2020")
    assert len(queries) == 1
    assert list(loaded) == [clause.pk]
    fetched = NormClause.objects.select_related("page", "document").get(pk=clause.pk)
    pairs = [(found, fetched), (found.page, fetched.page), (found.document, fetched.document)]
    for mine, orm in pairs:  # every value, of the ORM's type (dates too, not their text)
        for field in type(orm)._meta.concrete_fields:
            value, expected = getattr(mine, field.attname), getattr(orm, field.attname)
            assert (value, type(value)) == (expected, type(expected)), field.name
    # converted as the ORM does: a JSON list, a boolean, an aware datetime
    assert found.page.clauses == ["5.1"]
    assert found.document.is_sample is True
    assert found.document.created_at == fetched.document.created_at
    assert not found._state.adding
    found.text = "Другой текст"
    found.save(update_fields=["text"])
    assert NormClause.objects.get(pk=clause.pk).text == "Другой текст"


def test_no_ids_no_query_and_a_wrong_relation_refused() -> None:
    loader = JoinedLoader(NormClause, page=NormPage)
    with CaptureQueriesContext(connection) as queries:
        assert loader.by_ids([]) == {}
    assert not queries
    with pytest.raises(ValueError, match="not a foreign key"):
        JoinedLoader(NormClause, page=NormDocument)


def test_clauses_of_one_page_share_its_instance() -> None:
    first = _clause()
    second = NormClause.objects.create(
        document=first.document, page=first.page, kind=NormClause.Kind.CLAUSE, number="5.2",
        text="Второй пункт той же страницы.",
    )  # fmt: skip
    loaded = JoinedLoader(NormClause, page=NormPage, document=NormDocument).by_ids(
        [first.pk, second.pk]
    )
    a, b = loaded[first.pk], loaded[second.pk]
    assert a is not b
    assert a.page is b.page
    assert a.document is b.document
    assert (b.number, b.page.number, b.document.code) == ("5.2", 3, "СП 1.13330.2020")


def test_an_instance_someone_listens_to_is_made_through_init() -> None:
    """A `post_init` listener (an ImageField's dimensions) sees every instance loaded; the
    others are made without `Model.__init__` and equal the ORM's all the same."""
    clause = _clause()
    seen: list[object] = []

    def listener(sender: type, instance: object, **kwargs: object) -> None:
        seen.append(instance)

    post_init.connect(listener, sender=NormPage)
    try:
        loaded = JoinedLoader(NormClause, page=NormPage, document=NormDocument).by_ids([clause.pk])
    finally:
        post_init.disconnect(listener, sender=NormPage)
    found = loaded[clause.pk]
    assert seen == [found.page]
    assert (found, found.page, found.document) == (clause, clause.page, clause.document)
    assert found.page.document == clause.document  # the relation read as the ORM reads it
    assert found._state.db == "default"


def test_rows_fetch_gives_the_cursors_rows_and_errors_and_is_captured() -> None:
    clause = _clause()
    sql = "SELECT id, number, valid_from FROM normagpt_normclause WHERE id IN (%s, %s)"
    with connection.cursor() as cursor:
        cursor.execute(sql, [clause.pk, 10**9])
        expected = cursor.fetchall()
    assert (
        rows_fetch(sql, [clause.pk, 10**9]) == expected == [(clause.pk, "5.1", date(2021, 1, 15))]
    )
    with pytest.raises(DatabaseError), transaction.atomic():  # Django's, as its cursor's
        rows_fetch("SELECT nothing FROM normagpt_no_such_table WHERE id = %s", [1])
    with CaptureQueriesContext(connection) as queries:  # logged: through Django's cursor
        rows_fetch(sql, [clause.pk, 1])
    assert len(queries) == 1
    assert str(clause.pk) in queries[0]["sql"]


def test_rows_fetch_is_watched_and_refused_as_the_cursor_is() -> None:
    """Straight from the driver, the statement still passes Django's execute wrappers (a
    watcher sees it) and is refused in a broken atomic block, as through its cursor."""
    clause = _clause()
    sql = "SELECT id FROM normagpt_normclause WHERE id = %s"
    seen: list[str] = []

    def watch(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        assert rows_fetch(sql, [clause.pk]) == [(clause.pk,)]
    assert seen == [sql]
    with transaction.atomic():
        with contextlib.suppress(DatabaseError), transaction.atomic(savepoint=False):
            rows_fetch("SELECT nothing FROM normagpt_no_such_table WHERE id = %s", [1])
        with pytest.raises(TransactionManagementError):
            rows_fetch(sql, [clause.pk])


def test_ln_is_there_on_an_sqlite_built_without_math(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[tuple[object, ...]] = []

    class Raw:
        def create_function(self, *args: object, **kwargs: object) -> None:
            registered.append((*args, kwargs))

    monkeypatch.setattr(rows, "_sqlite_math", lambda: True)
    rows.sqlite_functions(None, SimpleNamespace(vendor="sqlite", connection=Raw()))
    assert registered == []  # the library's own
    monkeypatch.setattr(rows, "_sqlite_math", lambda: False)
    rows.sqlite_functions(None, SimpleNamespace(vendor="postgresql", connection=Raw()))
    rows.sqlite_functions(None, SimpleNamespace(vendor="sqlite", connection=Raw()))
    assert registered == [("ln", 1, math.log, {"deterministic": True})]
    raw = sqlite3.connect(":memory:")
    rows.sqlite_functions(None, SimpleNamespace(vendor="sqlite", connection=raw))
    assert raw.execute("SELECT ln(?)", [2.5]).fetchone()[0] == math.log(2.5)


def test_deferred_fields_are_not_read_and_load_on_access_or_together() -> None:
    clause = _clause()
    loader = JoinedLoader(
        NormClause, page=NormPage, document=NormDocument, defer=["search_text", "page__text"]
    )
    with CaptureQueriesContext(connection) as queries:
        found = loader.by_ids([clause.pk])[clause.pk]
    assert len(queries) == 1
    assert "search_text" not in queries[0]["sql"]
    assert '"text"' in queries[0]["sql"]  # the clause's own text is read: only the page's not
    assert found.get_deferred_fields() == {"search_text"}
    assert found.page.get_deferred_fields() == {"text"}
    assert found.text == "Текст"
    with CaptureQueriesContext(connection) as queries:
        assert found.search_text == "текст"  # as a deferred field of the ORM's: one query
    assert len(queries) == 1
    other = loader.by_ids([clause.pk])[clause.pk]
    with CaptureQueriesContext(connection) as queries:
        rows.fields_load([other.page, found.page], "text")
        rows.fields_load([other.page], "text")  # loaded already: no query
        assert other.page.text == found.page.text == "5.1 Текст"
    assert len(queries) == 1
    with pytest.raises(ValueError, match="no such field to defer: page__nothing"):
        JoinedLoader(NormClause, page=NormPage, defer=["page__nothing"])


def test_where_takes_a_condition_on_the_joined_columns_and_an_order() -> None:
    clause = _clause()
    later = NormPage.objects.create(document=clause.document, number=4, text="Дальше")
    pages = JoinedLoader(NormPage, document=NormDocument, defer=["text"])
    found = pages.where(
        "t1.code = %s AND t0.number >= %s", ["СП 1.13330.2020", 3], order="t0.number DESC"
    )
    assert list(found) == [later.pk, clause.page_id]
    assert found[later.pk].document.code == "СП 1.13330.2020"
    assert pages.where("t0.number > %s", [9]) == {}
