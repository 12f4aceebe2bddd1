"""Tests of a data migration: the database taken to a migration and back to the latest."""

from __future__ import annotations

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets: list[tuple[str, str]]) -> Apps:
    """The database migrated to `targets` (forwards or backwards); the apps as they are
    there (the models of that state)."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest() -> None:
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
