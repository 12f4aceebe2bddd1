"""The fuzzy search's candidates come from the database, not from an index each process
builds: `Problem.search_terms` (filled here for the stored rows) is indexed by a generated
tsvector column with a GIN index on PostgreSQL, by an FTS5 table kept in step by triggers on
SQLite (with its vocabulary: how many rows hold each term). The per-site revision counter
that processes caught up by goes."""

from django.db import migrations, models

from core.vendor_sql import per_database

POSTGRES_UP = [
    # The terms as they are (no parser, no dictionary), without positions.
    "ALTER TABLE problems_problem ADD COLUMN IF NOT EXISTS search_vector tsvector "
    "GENERATED ALWAYS AS (array_to_tsvector(string_to_array(search_terms, ' '))) STORED",
    "CREATE INDEX IF NOT EXISTS problems_problem_fts_gin ON problems_problem "
    "USING GIN (search_vector)",
    "ANALYZE problems_problem",  # the terms' frequencies the search reads
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS problems_problem_fts_gin",
    "ALTER TABLE problems_problem DROP COLUMN IF EXISTS search_vector",
]
SQLITE_UP = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS problems_problem_fts USING fts5(search_terms, "
    "content='problems_problem', content_rowid='id', "
    "tokenize='unicode61 remove_diacritics 0', detail='none')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS problems_problem_vocab "
    "USING fts5vocab(problems_problem_fts, 'row')",
    "CREATE TRIGGER IF NOT EXISTS problems_problem_fts_ai AFTER INSERT ON problems_problem "
    "BEGIN INSERT INTO problems_problem_fts(rowid, search_terms) "
    "VALUES (new.id, new.search_terms); END",
    "CREATE TRIGGER IF NOT EXISTS problems_problem_fts_ad AFTER DELETE ON problems_problem "
    "BEGIN INSERT INTO problems_problem_fts(problems_problem_fts, rowid, search_terms) "
    "VALUES ('delete', old.id, old.search_terms); END",
    "CREATE TRIGGER IF NOT EXISTS problems_problem_fts_au "
    "AFTER UPDATE OF search_terms ON problems_problem "
    "BEGIN INSERT INTO problems_problem_fts(problems_problem_fts, rowid, search_terms) "
    "VALUES ('delete', old.id, old.search_terms); "
    "INSERT INTO problems_problem_fts(rowid, search_terms) VALUES (new.id, new.search_terms); "
    "END",
    "INSERT INTO problems_problem_fts(problems_problem_fts) VALUES ('rebuild')",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS problems_problem_fts_ai",
    "DROP TRIGGER IF EXISTS problems_problem_fts_ad",
    "DROP TRIGGER IF EXISTS problems_problem_fts_au",
    "DROP TABLE IF EXISTS problems_problem_vocab",
    "DROP TABLE IF EXISTS problems_problem_fts",
]


def fill_terms(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    from problems.matching import index_terms

    Problem = apps.get_model("problems", "Problem")
    rows = Problem.objects.exclude(search_text="").only("pk", "search_text").order_by("pk")
    last = 0
    while batch := list(rows.filter(pk__gt=last)[:2000]):
        for row in batch:
            row.search_terms = index_terms(row.search_text)
        Problem.objects.bulk_update(batch, ["search_terms"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [
        ("problems", "0003_verbose_names"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="problem", name="problem_site_revision"),
        migrations.RemoveField(model_name="problem", name="revision"),
        migrations.DeleteModel(name="SiteRevision"),
        migrations.AddField(
            model_name="problem",
            name="search_terms",
            field=models.TextField(blank=True, editable=False, verbose_name="search terms"),
        ),
        migrations.RunPython(fill_terms, migrations.RunPython.noop),
        per_database(
            {"postgresql": POSTGRES_UP, "sqlite": SQLITE_UP},
            {"postgresql": POSTGRES_DOWN, "sqlite": SQLITE_DOWN},
        ),
    ]
