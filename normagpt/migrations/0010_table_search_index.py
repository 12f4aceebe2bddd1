"""On PostgreSQL, a GIN index over the tables' search vectors alone: search asks for the
tables apart (a table's rows make a long text, which rankings put last), and the index of
every clause would have to walk the postings of all of them. SQLite marks the tables in
the search text instead (0009)."""

from django.db import migrations


def _run(sql: str):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0009_table_mark"),
    ]

    operations = [
        migrations.RunPython(
            _run(
                "CREATE INDEX IF NOT EXISTS normagpt_table_fts_gin ON normagpt_normclause "
                "USING GIN (search_vector) WHERE kind = 'table'"
            ),
            _run("DROP INDEX IF EXISTS normagpt_table_fts_gin"),
        ),
    ]
