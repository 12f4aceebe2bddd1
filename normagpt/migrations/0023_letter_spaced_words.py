"""Words set letter-spaced (captions and table heads: «С о д е р ж а н и е  п ы л е в и д н ы
х», «и гл и н и сты х ч а сти ц», ГОСТ 8736-2014 table 4) are searched as the words they are
(`split_words.letter_spaced_joined`): the search text of the clauses holding them made
anew, the stems' counts moved by what changed (on SQLite the triggers update the full-text
index; PostgreSQL's indexes are on the text itself).

A clause's heading part is kept as it was: a table's holds the sentences pointing at it,
which its row does not (only its statement and the rest are read from its text)."""

from collections import Counter

from django.db import migrations

from normagpt.split_words import letter_spaced_joined
from normagpt.terms import PART, clause_search_text, stem_counts, terms_add

BATCH = 2000


def rejoin(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    Clause = apps.get_model("normagpt", "NormClause")
    delta: Counter[str] = Counter()
    batch = []
    clauses = Clause.objects.only("kind", "text", "search_text").order_by("pk")
    for clause in clauses.iterator(BATCH):
        text = clause.text.lower().replace("ё", "е")
        if letter_spaced_joined(text) == text:
            continue
        head, _, _ = clause.search_text.partition(PART)
        made = clause_search_text("", clause.text, table=clause.kind == "table")
        text = head + PART + made.partition(PART)[2]
        if text == clause.search_text:
            continue
        delta.update(stem_counts([text]))
        delta.subtract(stem_counts([clause.search_text]))
        clause.search_text = text
        batch.append(clause)
        if len(batch) == BATCH:
            Clause.objects.bulk_update(batch, ["search_text"])
            batch = []
    Clause.objects.bulk_update(batch, ["search_text"])
    terms_add(delta)


class Migration(migrations.Migration):
    dependencies = [
        ("normagpt", "0022_term_counts_covered"),
    ]

    operations = [migrations.RunPython(rejoin, migrations.RunPython.noop)]
