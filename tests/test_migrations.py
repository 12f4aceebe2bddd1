"""The migrations: the models agree with them, and names-only operations (verbose names,
ordering) are applied to the state at once without touching the database."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import AlterField, AlterModelOptions
from django.db.migrations.state import ProjectState

from core.migration_operations import NamesOnly

APPS = ("problems", "anki_bridge", "ojclient", "normagpt")


def names_only(loader: MigrationLoader) -> list[tuple[Any, NamesOnly]]:
    """Every `NamesOnly` operation of the project's migrations, with its migration."""
    return [
        (migration, operation)
        for (app, _), migration in sorted(loader.disk_migrations.items())
        if app in APPS
        for operation in migration.operations
        if isinstance(operation, NamesOnly)
    ]


@pytest.mark.django_db
def test_the_models_agree_with_their_migrations() -> None:
    """`makemigrations --check` exits 1 when a model differs from its migrations' state."""
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_a_names_only_operation_changes_nothing_of_the_database() -> None:
    """Each operation wrapped changes a field's non-database attributes only (its verbose
    name, help text, choices) or a model's options: nothing a schema editor would alter."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    found = names_only(loader)
    assert len(found) == 4  # the four apps' verbose names
    for migration, wrapper in found:
        state = loader.project_state((migration.app_label, migration.name), at_end=False)
        for operation in wrapper.operations:
            assert isinstance(operation, AlterField | AlterModelOptions), operation
            if isinstance(operation, AlterField):
                model = state.models[migration.app_label, operation.model_name_lower]
                before, after = model.fields[operation.name], operation.field
                _, _, _, old = before.deconstruct()
                _, _, _, new = after.deconstruct()
                kept = set(after.non_db_attrs)
                assert type(before) is type(after), (migration.name, operation.name)
                assert {k: v for k, v in old.items() if k not in kept} == {
                    k: v for k, v in new.items() if k not in kept
                }, (migration.name, operation.model_name, operation.name)
            operation.state_forwards(migration.app_label, state)


def test_a_names_only_operation_renders_the_models_once_to_the_same_state() -> None:
    """Applied one by one, normagpt 0005's 79 operations rendered the models again after
    each (0.43 s of a fresh database's migrations); wrapped, once, to the same models."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    migration = loader.disk_migrations["normagpt", "0005_verbose_names"]
    (wrapper,) = migration.operations

    def rendered() -> ProjectState:
        state = loader.project_state(("normagpt", "0005_verbose_names"), at_end=False)
        state.apps  # noqa: B018 (rendered, as the executor renders it before migrating)
        return state

    together, one_by_one = rendered(), rendered()
    with mock.patch.object(
        ProjectState, "_reload", autospec=True, side_effect=ProjectState._reload
    ) as reload:
        wrapper.state_forwards("normagpt", together)
    assert reload.call_count == 1
    for operation in wrapper.operations:
        operation.state_forwards("normagpt", one_by_one)
    models = {m._meta.model_name: m for m in together.apps.get_app_config("normagpt").get_models()}
    assert len(models) >= 6
    for name, model in models.items():
        fields = [
            [
                (f.name, str(f.verbose_name))
                for f in state.apps.get_model("normagpt", name)._meta.fields
            ]
            for state in (together, one_by_one)
        ]
        assert fields[0] == fields[1], name
        assert (
            model._meta.verbose_name
            == one_by_one.apps.get_model("normagpt", name)._meta.verbose_name
        )
