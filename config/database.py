"""The database a serving command starts on: migrated, or a refusal naming the command."""

from __future__ import annotations

import logging
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError

logger = logging.getLogger(__name__)


def database_migrated(output: Any) -> bool:
    """The embedded default (SQLite) is migrated here, quietly (`output`: stderr) — a
    desktop client's first start on a fresh clone or data directory just works. A server
    database (PostgreSQL) is its owner's to migrate: with migrations pending the command
    refuses to start, naming the command, rather than answer every call that stores data
    with an error. True when the database was new (no migration applied before)."""
    from django.db import DatabaseError, connection
    from django.db.migrations.executor import MigrationExecutor

    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        said = str(exc)  # a server that cannot be reached is named already (core/postgresql)
        if database_name() not in said:
            said = f"the database {database_name()} cannot be read: {said}"
        raise CommandError(said) from exc
    if not pending:
        return False
    if connection.vendor != "sqlite":
        raise CommandError(
            f"the database {database_name()} has {len(pending)} unapplied migration(s): "
            "run `python manage.py migrate` (`tool-hub migrate`, `make migrate`) with the "
            "same DATABASE_URL, then start again"
        )
    logger.info("applying %d migration(s) to the embedded database", len(pending))
    fresh = not executor.loader.applied_migrations
    call_command("migrate", verbosity=0, interactive=False, stdout=output)
    return fresh


def database_name() -> str:
    """`name on host:port` of the default database (no credentials), for messages."""
    from django.db import connection

    database = connection.settings_dict
    if connection.vendor == "sqlite":
        return str(database["NAME"])
    host = database.get("HOST") or "localhost"
    return f"{database['NAME']} on {host}:{database.get('PORT') or 5432}"
