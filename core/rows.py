"""Model instances from one hand-written join, for hot paths where compiling the ORM's
query costs more than running it (a three-table `select_related` is about 1 ms of Python
per call; the query itself a tenth of that).

    loader = JoinedLoader(NormClause, page=NormPage, document=NormDocument)
    clauses = loader.by_ids([4, 8, 15])  # {pk: clause}, clause.page and clause.document set
    pages = JoinedLoader(NormPage, document=NormDocument, defer=["text"])
    pages.where("t0.document_id = %s AND t0.number > %s", [7, 12], order="t0.number")

`defer` names fields as `QuerySet.defer` does (`"search_text"`, `"page__text"`): they are
not read, and an access loads them then, as a deferred field of the ORM's (one query each:
a long text no caller of a hot path reads is not carried through it). `where` takes a
condition on the columns of the joined tables (`t0` the base, `t1`… the relations, in the
order named).

Each relation named is a many-to-one field of the base model; its instance is attached as
`select_related` attaches it (in the field's cache: no further query on access), one
instance per related row of a call (clauses of one page share their page, as
`prefetch_related` would have it). Values go through the same database converters the ORM
applies (booleans, dates, JSON on SQLite). Instances are made as `Model.from_db` makes
them, minus `Model.__init__`'s handling of arguments (a setattr through a descriptor per
field: most of the cost of a load): the values go straight into the instance's attributes,
its state says fetched from `using`. So they behave as fetched ones (saving,
`refresh_from_db`). A model with an `__init__` or `from_db` of its own, or that something
listens to at `pre_init` or `post_init` (an `ImageField` with dimension fields), is made by
its `from_db`, so that its own code runs (this is read when a loader first runs on a
database: listeners connect at start-up).
"""

from __future__ import annotations

import functools
import math
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.db import connections, models
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

Converter = Callable[[Any, Any, Any], Any]
# A model of the join: its fields' attnames, the converters of those that have any (by
# index), where its pk is, and whether its instances are made plainly (`_plain`).
Part = tuple[type[models.Model], list[str], list[tuple[int, Any, list[Converter]]], int, bool]


class JoinedLoader:
    def __init__(
        self, base: type[models.Model], *, defer: Iterable[str] = (), **related: type[models.Model]
    ) -> None:
        self.base = base
        self.related = related
        self.deferred = frozenset(defer)
        self._fields: list[models.ForeignKey[Any, Any]] = []
        for name, model in related.items():
            field = base._meta.get_field(name)
            if not (isinstance(field, models.ForeignKey) and field.related_model is model):
                raise ValueError(f"{base.__name__}.{name} is not a foreign key to {model.__name__}")
            self._fields.append(field)
        unknown = self.deferred - {
            f"{prefix}{f.name}"
            for prefix, model in [("", base), *((f"{n}__", m) for n, m in related.items())]
            for f in model._meta.concrete_fields
            if not f.primary_key  # the instances are keyed by it
        }
        if unknown:
            raise ValueError(f"no such field to defer: {', '.join(sorted(unknown))}")
        self._prepared: dict[str, tuple[str, list[Part]]] = {}

    def by_ids(self, ids: Iterable[int], *, using: str = "default") -> dict[int, models.Model]:
        """The rows of `ids` (those that exist), by pk."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        pk = f"t0.{_pk(self.base, connections[using].ops.quote_name)}"
        if connections[using].vendor == "postgresql":  # one text whatever the count: parsed once
            return self.where(f"{pk} = ANY(%s)", [wanted], using=using)
        return self.where(f"{pk} IN ({','.join(['%s'] * len(wanted))})", wanted, using=using)

    def where(
        self, condition: str, params: list[Any], *, order: str = "", using: str = "default"
    ) -> dict[int, models.Model]:
        """The rows meeting `condition` (SQL on the aliased columns, placeholders `%s`), by
        pk, in `order` (SQL) when given."""
        connection = connections[using]
        sql, parts = self._prepare(using)
        sql += f" WHERE {condition}" + (f" ORDER BY {order}" if order else "")
        rows = rows_fetch(sql, params, using=using)
        out: dict[int, models.Model] = {}
        made: dict[tuple[int, Any], models.Model] = {}  # a related row met again: one instance
        for row in rows:
            offset, instances = 0, []
            for position, (model, names, converters, pk, plain) in enumerate(parts):
                start, offset = offset, offset + len(names)
                key = (position, row[start + pk]) if position else None  # (part, its pk)
                if key is not None and key in made:
                    instances.append(made[key])
                    continue
                values = list(row[start:offset])
                for index, col, chain in converters:
                    for convert in chain:
                        values[index] = convert(values[index], col, connection)
                instance = (
                    _instance(model, using, names, values)
                    if plain
                    else model.from_db(using, names, values)
                )
                if key is not None:
                    made[key] = instance
                instances.append(instance)
            base, *attached = instances
            for field, instance in zip(self._fields, attached, strict=True):
                field.set_cached_value(base, instance)  # as select_related attaches it
            out[base.pk] = base
        return out

    def _prepare(self, using: str) -> tuple[str, list[Part]]:
        """The query (its condition left to add) and, per model, its fields' attnames and
        converters: made once per database."""
        if using in self._prepared:
            return self._prepared[using]
        connection = connections[using]
        quote = connection.ops.quote_name
        models_ = [self.base, *self.related.values()]
        aliases = [f"t{i}" for i in range(len(models_))]
        columns: list[str] = []
        parts: list[Part] = []
        # On SQLite a column is read as `+column` (the same value): the driver then knows no
        # declared type to convert by, so a date or time is parsed by the field's converter,
        # once per instance made, not by the driver on each row a related row repeats in.
        plus = "+" if connection.vendor == "sqlite" else ""
        prefixes = ["", *(f"{name}__" for name in self.related)]
        for model, alias, prefix in zip(models_, aliases, prefixes, strict=True):
            fields = [
                f for f in model._meta.concrete_fields if f"{prefix}{f.name}" not in self.deferred
            ]
            columns += [f"{plus}{alias}.{quote(str(f.column))}" for f in fields]
            converters = []
            for index, f in enumerate(fields):
                col = f.get_col(alias)
                chain = [*connection.ops.get_db_converters(col), *f.get_db_converters(connection)]
                if chain:
                    converters.append((index, col, chain))
            names = [f.attname for f in fields]
            at = names.index(model._meta.pk.attname)
            parts.append((model, names, converters, at, _plain(model)))
        joins = " ".join(
            f"JOIN {quote(model._meta.db_table)} {alias} ON {alias}.{_pk(model, quote)}"
            f" = t0.{quote(_column(self.base, name))}"
            for (name, model), alias in zip(self.related.items(), aliases[1:], strict=True)
        )
        # names from the models' metadata; the ids are parameters
        table = quote(self.base._meta.db_table)
        sql = f"SELECT {', '.join(columns)} FROM {table} t0 {joins}"  # noqa: S608
        self._prepared[using] = (sql, parts)
        return self._prepared[using]


def fields_load(instances: Sequence[models.Model], name: str, *, using: str = "default") -> None:
    """The field `name` of `instances` (of one model) loaded in one query where it is
    deferred (a loader's `defer`), as an access would load it one query apiece."""
    if not instances:
        return
    model = type(instances[0])
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field)  # noqa: S101 (a relation's other side: no column)
    attname = field.attname
    wanted = [i for i in instances if attname not in i.__dict__]  # as the ORM tells deferred
    if not wanted:
        return
    found = dict(
        model._base_manager.using(using)
        .filter(pk__in=[i.pk for i in wanted])
        .values_list("pk", attname)
    )
    for instance in wanted:
        if instance.pk in found:
            setattr(instance, attname, found[instance.pk])


def rows_fetch(sql: str, params: list[Any], *, using: str = "default") -> list[tuple[Any, ...]]:
    """The rows of `sql` (placeholders `%s`, no `%%`) with `params`, as a Django cursor
    gives them. On SQLite, unless queries are being logged (DEBUG, `CaptureQueriesContext`)
    or watched (`connection.execute_wrapper`), straight from the driver's connection:
    Django's cursor rewrites every placeholder with a regex and wraps the call in four
    frames, more than a short indexed query costs. Errors are Django's, as through its
    cursor; the connection is opened and checked as its cursor opens and checks it. (On
    PostgreSQL the same bypass saved no CPU a search could show: 0–0.3 ms of 9.)"""
    connection = connections[using]
    if connection.vendor != "sqlite" or connection.queries_logged or connection.execute_wrappers:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())
    connection.ensure_connection()  # opened when closed, as `cursor()` opens it
    connection.validate_thread_sharing()  # and refused from another thread, as there
    connection.validate_no_broken_transaction()  # and in a broken atomic block
    with connection.wrap_database_errors:
        return connection.connection.execute(sql.replace("%s", "?"), params).fetchall()


def sqlite_functions(sender: Any, connection: Any, **kwargs: Any) -> None:
    """A `connection_created` receiver: `ln` on an SQLite built without its math functions
    (SQLITE_ENABLE_MATH_FUNCTIONS; most builds have them), as hand-written SQL uses it."""
    if connection.vendor == "sqlite" and not _sqlite_math():
        connection.connection.create_function("ln", 1, math.log, deterministic=True)


@functools.cache
def _sqlite_math() -> bool:
    try:
        sqlite3.connect(":memory:").execute("SELECT ln(1)").close()
    except sqlite3.OperationalError:
        return False
    return True


def _instance(model: type[models.Model], using: str, names: list[str], values: list[Any]) -> Any:
    """An instance of `model` as fetched from `using` (a `_plain` model); a concrete field
    not among `names` is deferred, as the ORM has it (its attname not in `__dict__`)."""
    instance = model.__new__(model)
    instance.__dict__.update(zip(names, values, strict=True))
    state = ModelState()
    state.adding, state.db = False, using
    instance._state = state
    return instance


def _plain(model: type[models.Model]) -> bool:
    """Whether Django's own `from_db` would make `model`'s instances: no `__init__` or
    `from_db` of its own (the documented `_loaded_values` pattern), no one listening to its
    `pre_init` or `post_init`."""
    return (
        model.__init__ is models.Model.__init__
        and model.from_db.__func__ is models.Model.from_db.__func__  # type: ignore[attr-defined]
        and not pre_init.has_listeners(model)
        and not post_init.has_listeners(model)
    )


def _column(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field)  # noqa: S101 (checked in __init__: a foreign key)
    return str(field.column)


def _pk(model: type[models.Model], quote: Callable[[str], str]) -> str:
    return quote(str(model._meta.pk.column if model._meta.pk else "id"))
