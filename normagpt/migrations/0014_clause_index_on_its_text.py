"""SQLite's clause index follows only the clause's stems: its update trigger fires on an
update of `search_text`, not on every update of a clause row (an edition that supersedes
a clause sets its `valid_to`, which re-indexed the clause's stems for nothing). PostgreSQL
keeps its generated tsvector itself."""

import importlib

from django.db import migrations

from core.vendor_sql import per_database

clause_sql = importlib.import_module("normagpt.migrations.0007_clause_search")

OLD_TRIGGER = next(sql for sql in clause_sql.SQLITE_UP if "normagpt_clause_fts_au" in sql)
NEW_TRIGGER = OLD_TRIGGER.replace(
    "AFTER UPDATE ON normagpt_normclause", "AFTER UPDATE OF search_text ON normagpt_normclause"
)
assert NEW_TRIGGER != OLD_TRIGGER
DROP = "DROP TRIGGER IF EXISTS normagpt_clause_fts_au"


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0013_editions")]

    operations = [
        per_database({"sqlite": [DROP, NEW_TRIGGER]}, {"sqlite": [DROP, OLD_TRIGGER]}),
    ]
