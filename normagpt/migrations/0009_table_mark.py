"""Tables are marked in the search text (`terms.TABLE_MARK` after their heading stems):
SQLite's ranking puts long clauses last, so search asks for the tables apart. The stored
tables' search text made anew (on SQLite the triggers update the full-text index)."""

from django.db import migrations

from normagpt.terms import clause_search_text


def mark(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    Clause = apps.get_model("normagpt", "NormClause")
    batch = []
    for clause in Clause.objects.filter(kind="table").only("heading", "text").iterator(2000):
        clause.search_text = clause_search_text(clause.heading, clause.text, table=True)
        batch.append(clause)
        if len(batch) == 2000:
            Clause.objects.bulk_update(batch, ["search_text"])
            batch = []
    Clause.objects.bulk_update(batch, ["search_text"])


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0008_index_stored_pages"),
    ]

    operations = [migrations.RunPython(mark, migrations.RunPython.noop)]
