"""On SQLite, the stems' counts read from an index holding them (a covering index): a
search reads a few hundred stems by ranges of their first letters, and SQLite's primary
key index on a text holds only the key, so each stem found cost a look-up in the table
besides (0.6 of a whole question's 0.9 ms for its vocabulary; 0.2 with the counts in the
index). PostgreSQL's plan reads them no faster so: nothing is made there."""

from django.db import migrations

from core.vendor_sql import per_database

UP = {"sqlite": ["CREATE INDEX normagpt_normterm_counts ON normagpt_normterm (term, clauses)"]}
DOWN = {"sqlite": ["DROP INDEX IF EXISTS normagpt_normterm_counts"]}


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0021_search_index_merged"),
    ]

    operations = [per_database(UP, DOWN)]
