"""Migration operations of the project's own, for any app's migrations."""

from __future__ import annotations

from typing import Any

from django.db.migrations.operations.base import Operation


class NamesOnly(Operation):
    """Operations that change nothing in the database (a field's verbose name, a model's
    ordering and names), applied to the migration state together: each model they touch
    is rendered again once, not once per operation.

    Django renders the state's models again after each `AlterField` (every model related to
    the one changed with it): the 73 verbose names of `normagpt` 0005 took 0.43 s of a
    fresh database's migrations, the four apps' verbose names 0.75 s of 1.9. Wrapped so,
    the operations give the same state (`tests/test_migrations.py` checks that none of them
    changes the database), and the database is not touched either way.
    """

    reduces_to_sql = True  # to none: `sqlmigrate` shows its description alone
    reversible = True

    def __init__(self, operations: list[Operation]) -> None:
        self.operations = operations

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (self.__class__.__qualname__, [self.operations], {})

    def state_forwards(self, app_label: str, state: Any) -> None:
        # `ProjectState.reload_model` renders only where the models are rendered already
        # (`apps` cached in the state): set aside, each operation only changes the state
        rendered = state.__dict__.pop("apps", None)
        try:
            for operation in self.operations:
                operation.state_forwards(app_label, state)
        finally:
            if rendered is not None:
                state.__dict__["apps"] = rendered
        touched = {(app_label, _model_of(operation)) for operation in self.operations}
        state.reload_models(sorted(touched), delay=False)

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        """Nothing: names are no part of the database."""

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        """Nothing: names are no part of the database."""

    def describe(self) -> str:
        return f"Names and options of models and fields ({len(self.operations)} operations)"


def _model_of(operation: Operation) -> str:
    """The lower-cased name of the model a field's or a model's operation changes."""
    return str(getattr(operation, "model_name_lower", None) or getattr(operation, "name_lower", ""))
