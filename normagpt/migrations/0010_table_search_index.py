"""On PostgreSQL, a GIN index over the tables' search vectors alone: search asks for the
tables apart (a table's rows make a long text, which rankings put last), and the index of
every clause would have to walk the postings of all of them. SQLite marks the tables in
the search text instead (0009)."""

from django.db import migrations

from core.vendor_sql import per_database

UP = {
    "postgresql": [
        "CREATE INDEX IF NOT EXISTS normagpt_table_fts_gin ON normagpt_normclause "
        "USING GIN (search_vector) WHERE kind = 'table'"
    ]
}
DOWN = {"postgresql": ["DROP INDEX IF EXISTS normagpt_table_fts_gin"]}


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0009_table_mark"),
    ]

    operations = [per_database(UP, DOWN)]
