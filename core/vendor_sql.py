"""SQL a migration runs on one database engine only: full-text indexes are a generated
tsvector column with a GIN index on PostgreSQL, FTS5 tables kept by triggers on SQLite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import migrations

Statements = dict[str, list[str]]  # vendor ("postgresql", "sqlite") → its statements


def per_database(up: Statements, down: Statements) -> migrations.RunPython:
    """An operation that runs `up[vendor]` forwards and `down[vendor]` backwards (nothing
    on an engine neither names)."""
    return migrations.RunPython(_run(up), _run(down))


def _run(statements: Statements) -> Callable[[Any, Any], None]:
    def run(apps: Any, schema_editor: Any) -> None:
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return run
