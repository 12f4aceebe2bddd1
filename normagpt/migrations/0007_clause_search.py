"""Search moves from pages to clauses: the pages' full-text index goes, the clauses get one
(a stored tsvector of their stems with a GIN index on PostgreSQL, an FTS5 table kept in step
by triggers on SQLite) and a table of how many clauses hold each stem."""

import importlib

from django.db import migrations, models

from core.vendor_sql import per_database

pages_sql = importlib.import_module("normagpt.migrations.0002_search_indexes")

POSTGRES_UP = [
    # The stems are made by normagpt.parsing.search_stems, the same on every database:
    # the `simple` configuration keeps them as they are, with their positions.
    "ALTER TABLE normagpt_normclause ADD COLUMN IF NOT EXISTS search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_text)) STORED",
    "CREATE INDEX IF NOT EXISTS normagpt_clause_fts_gin ON normagpt_normclause "
    "USING GIN (search_vector)",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS normagpt_clause_fts_gin",
    "ALTER TABLE normagpt_normclause DROP COLUMN IF EXISTS search_vector",
]
SQLITE_UP = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS normagpt_clause_fts USING fts5("
    "search_text, content='normagpt_normclause', content_rowid='id', tokenize='unicode61')",
    "CREATE TRIGGER IF NOT EXISTS normagpt_clause_fts_ai AFTER INSERT ON normagpt_normclause "
    "BEGIN INSERT INTO normagpt_clause_fts(rowid, search_text) VALUES (new.id, new.search_text); "
    "END",
    "CREATE TRIGGER IF NOT EXISTS normagpt_clause_fts_ad AFTER DELETE ON normagpt_normclause "
    "BEGIN INSERT INTO normagpt_clause_fts(normagpt_clause_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); END",
    "CREATE TRIGGER IF NOT EXISTS normagpt_clause_fts_au AFTER UPDATE ON normagpt_normclause "
    "BEGIN INSERT INTO normagpt_clause_fts(normagpt_clause_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    "INSERT INTO normagpt_clause_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
    "INSERT INTO normagpt_clause_fts(normagpt_clause_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS normagpt_clause_fts_ai",
    "DROP TRIGGER IF EXISTS normagpt_clause_fts_ad",
    "DROP TRIGGER IF EXISTS normagpt_clause_fts_au",
    "DROP TABLE IF EXISTS normagpt_clause_fts",
]


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0006_clauses_claims_public_ids"),
    ]

    operations = [
        # the pages' index first: it reads the column removed next
        per_database(
            {"postgresql": pages_sql.POSTGRES_DOWN, "sqlite": pages_sql.SQLITE_DOWN},
            {"postgresql": pages_sql.POSTGRES_UP, "sqlite": pages_sql.SQLITE_UP},
        ),
        migrations.RemoveField(
            model_name="normpage",
            name="search_text",
        ),
        migrations.CreateModel(
            name="NormTerm",
            fields=[
                (
                    "term",
                    models.CharField(
                        max_length=40, primary_key=True, serialize=False, verbose_name="term"
                    ),
                ),
                ("clauses", models.IntegerField(default=0, verbose_name="clauses")),
            ],
            options={
                "verbose_name": "search term",
                "verbose_name_plural": "search terms",
            },
        ),
        per_database(
            {"postgresql": POSTGRES_UP, "sqlite": SQLITE_UP},
            {"postgresql": POSTGRES_DOWN, "sqlite": SQLITE_DOWN},
        ),
    ]
