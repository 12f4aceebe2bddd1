"""The abbreviations each document defines (`normagpt.abbreviations`), read from the
clauses stored already: their lists of abbreviations, under a heading of abbreviations or
symbols or led by one («сокращения», «обозначения», either case of the first letter)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Q

from normagpt.abbreviations import abbreviations_found


def read(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    Clause = apps.get_model("normagpt", "NormClause")
    Abbreviation = apps.get_model("normagpt", "NormAbbreviation")
    listed = Q()
    for word in ("окращени", "бозначени"):  # either case of the first letter
        listed |= Q(heading__contains=word) | Q(text__contains=word)
    by_document: dict[int, list[tuple[str, str]]] = {}
    rows = Clause.objects.filter(listed).order_by("pk").values_list("document_id", "heading", "text")
    for document, heading, text in rows.iterator(2000):
        by_document.setdefault(document, []).append((heading, text))
    Abbreviation.objects.bulk_create(
        [
            Abbreviation(document_id=document, **fields)
            for document, clauses in by_document.items()
            for fields in abbreviations_found(clauses)
        ],
        batch_size=1000,
    )


class Migration(migrations.Migration):

    dependencies = [
        ('normagpt', '0023_letter_spaced_words'),
    ]

    operations = [
        migrations.CreateModel(
            name='NormAbbreviation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('short', models.CharField(max_length=16, verbose_name='abbreviation')),
                ('expansion', models.CharField(max_length=200, verbose_name='expansion')),
                ('stem', models.CharField(editable=False, max_length=40)),
                ('stems', models.CharField(editable=False, max_length=300)),
                ('head', models.CharField(db_index=True, editable=False, max_length=40)),
                ('document', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='abbreviations', to='normagpt.normdocument', verbose_name='document')),
            ],
            options={
                'verbose_name': 'abbreviation',
                'verbose_name_plural': 'abbreviations',
            },
        ),
        migrations.RunPython(read, migrations.RunPython.noop),
    ]
