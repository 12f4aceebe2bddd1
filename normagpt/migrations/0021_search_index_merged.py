"""The clauses' full-text indexes merged once, for corpora loaded before loads merged them
(`indexing.search_index_merge`): SQLite's FTS5 segments into one, PostgreSQL's GIN pending
lists into the indexes. The statements are copied here: a migration does not follow the
code's later changes."""

from django.db import migrations

from core.vendor_sql import per_database

UP = {
    "postgresql": [
        "SELECT gin_clean_pending_list('normagpt_clause_fts_gin'::regclass)",
        "SELECT gin_clean_pending_list('normagpt_table_fts_gin'::regclass)",
    ],
    "sqlite": ["INSERT INTO normagpt_clause_fts(normagpt_clause_fts) VALUES ('optimize')"],
}


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0020_named_document_aliases"),
    ]

    operations = [per_database(UP, {})]
