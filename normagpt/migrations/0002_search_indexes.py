"""Full-text search: a generated tsvector with a GIN index on PostgreSQL, FTS5 on SQLite."""

from django.db import migrations

from core.vendor_sql import per_database

# A stored, generated tsvector (unknown to the ORM: PostgreSQL keeps it in step) and its GIN
# index: matching and ranking read it instead of parsing every page's text per query.
POSTGRES_UP = [
    "ALTER TABLE normagpt_normpage ADD COLUMN IF NOT EXISTS search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('russian'::regconfig, search_text)) STORED",
    "CREATE INDEX IF NOT EXISTS normagpt_page_fts_gin ON normagpt_normpage "
    "USING GIN (search_vector)",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS normagpt_page_fts_gin",
    "ALTER TABLE normagpt_normpage DROP COLUMN IF EXISTS search_vector",
]

# An external-content FTS5 table over normagpt_normpage.search_text, kept in step by triggers.
SQLITE_UP = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS normagpt_page_fts USING fts5("
    "search_text, content='normagpt_normpage', content_rowid='id', tokenize='unicode61')",
    "CREATE TRIGGER IF NOT EXISTS normagpt_page_fts_ai AFTER INSERT ON normagpt_normpage BEGIN "
    "INSERT INTO normagpt_page_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
    "CREATE TRIGGER IF NOT EXISTS normagpt_page_fts_ad AFTER DELETE ON normagpt_normpage BEGIN "
    "INSERT INTO normagpt_page_fts(normagpt_page_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); END",
    "CREATE TRIGGER IF NOT EXISTS normagpt_page_fts_au AFTER UPDATE ON normagpt_normpage BEGIN "
    "INSERT INTO normagpt_page_fts(normagpt_page_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    "INSERT INTO normagpt_page_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
    "INSERT INTO normagpt_page_fts(normagpt_page_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS normagpt_page_fts_ai",
    "DROP TRIGGER IF EXISTS normagpt_page_fts_ad",
    "DROP TRIGGER IF EXISTS normagpt_page_fts_au",
    "DROP TABLE IF EXISTS normagpt_page_fts",
]


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0001_initial")]

    operations = [
        per_database(
            {"postgresql": POSTGRES_UP, "sqlite": SQLITE_UP},
            {"postgresql": POSTGRES_DOWN, "sqlite": SQLITE_DOWN},
        )
    ]
