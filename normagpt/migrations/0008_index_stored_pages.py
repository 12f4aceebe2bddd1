"""Documents ingested before clauses existed: their stored pages split into clauses, their
stems counted and their codes' short names made, so search finds them after the upgrade
without reading the PDFs again. Historical models and the pure splitting functions only."""

from collections import Counter

from django.db import migrations
from django.db.models import F

from normagpt.clauses import clauses_split
from normagpt.parsing import alias_key, code_aliases
from normagpt.terms import ALL_CLAUSES, clause_search_text, clause_terms


def index(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    Document = apps.get_model("normagpt", "NormDocument")
    Page = apps.get_model("normagpt", "NormPage")
    Clause = apps.get_model("normagpt", "NormClause")
    Term = apps.get_model("normagpt", "NormTerm")
    Alias = apps.get_model("normagpt", "NormDocumentAlias")
    counts: Counter[str] = Counter()
    for document in Document.objects.filter(clauses__isnull=True).distinct():
        pages = list(Page.objects.filter(document=document).order_by("number"))
        rows = []
        for unit in clauses_split([page.text for page in pages]):
            text = clause_search_text(unit.heading, unit.text, table=unit.kind == "table")
            counts.update(clause_terms(text))
            counts[ALL_CLAUSES] += 1
            rows.append(
                Clause(
                    document=document, page=pages[unit.page_index], kind=unit.kind,
                    number=unit.number, heading=unit.heading[:500], text=unit.text,
                    position=unit.position, start=unit.start, end=unit.end, search_text=text,
                )
            )  # fmt: skip
        Clause.objects.bulk_create(rows, batch_size=2000)
        Alias.objects.bulk_create(
            [
                Alias(document=document, alias=name, key=alias_key(name), automatic=True)
                for name in code_aliases(document.code)
            ],
            ignore_conflicts=True,
        )
    counts = Counter({t: n for t, n in counts.items() if len(t) <= 40})
    known = set(Term.objects.filter(term__in=list(counts)).values_list("term", flat=True))
    Term.objects.bulk_create(
        [Term(term=t, clauses=n) for t, n in counts.items() if t not in known], batch_size=5000
    )
    for term in known:
        Term.objects.filter(term=term).update(clauses=F("clauses") + counts[term])


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0007_clause_search")]

    operations = [migrations.RunPython(index, migrations.RunPython.noop)]
