"""The ingestion's lease (NormDocument.ingest_holder, ingest_heartbeat_at) and progress
(ingest_done of ingest_total pages), and NormPageDraft: the pages an ingestion has rendered
before they replace the edition's.

The columns with a default are added by ALTER TABLE ADD COLUMN on every database, as in
0016: Django's AddField of a field with a default remakes an SQLite table. A document
`running` from before leases has no heartbeat: the recovery sweep marks it failed.
"""

import django.db.models.deletion
from django.db import migrations, models

TABLE = "normagpt_normdocument"
COLUMNS = {
    "ingest_holder": "varchar(80) NOT NULL DEFAULT ''",
    "ingest_done": "integer NOT NULL DEFAULT 0 CHECK (ingest_done >= 0)",
    "ingest_total": "integer NOT NULL DEFAULT 0 CHECK (ingest_total >= 0)",
}


def column_add(name: str) -> migrations.RunSQL:
    return migrations.RunSQL(
        f"ALTER TABLE {TABLE} ADD COLUMN {name} {COLUMNS[name]}",
        f"ALTER TABLE {TABLE} DROP COLUMN {name}",
    )


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0016_clause_span")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[column_add(name) for name in COLUMNS],
            state_operations=[
                migrations.AddField(
                    model_name="normdocument",
                    name="ingest_holder",
                    field=models.CharField(
                        blank=True,
                        db_default="",
                        default="",
                        editable=False,
                        max_length=80,
                        verbose_name="ingested by",
                    ),
                ),
                migrations.AddField(
                    model_name="normdocument",
                    name="ingest_done",
                    field=models.PositiveIntegerField(
                        db_default=0, default=0, editable=False, verbose_name="pages rendered"
                    ),
                ),
                migrations.AddField(
                    model_name="normdocument",
                    name="ingest_total",
                    field=models.PositiveIntegerField(
                        db_default=0, default=0, editable=False, verbose_name="pages to render"
                    ),
                ),
            ],
        ),
        migrations.AddField(  # nullable, no default: ALTER TABLE ADD COLUMN on SQLite too
            model_name="normdocument",
            name="ingest_heartbeat_at",
            field=models.DateTimeField(
                blank=True, editable=False, null=True, verbose_name="ingestion heartbeat at"
            ),
        ),
        migrations.CreateModel(
            name="NormPageDraft",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("source", models.CharField(max_length=80, verbose_name="source")),
                ("number", models.PositiveIntegerField(verbose_name="number")),
                ("text", models.TextField(blank=True, verbose_name="text")),
                (
                    "image",
                    models.FileField(blank=True, upload_to="normagpt/pages/", verbose_name="image"),
                ),
                ("width", models.PositiveIntegerField(default=0, verbose_name="width")),
                ("height", models.PositiveIntegerField(default=0, verbose_name="height")),
                (
                    "has_text_layer",
                    models.BooleanField(default=True, verbose_name="has text layer"),
                ),
                ("ocr", models.BooleanField(default=False, verbose_name="ocr")),
                (
                    "document",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="normagpt.normdocument",
                        verbose_name="document",
                    ),
                ),
            ],
            options={
                "verbose_name": "rendered page",
                "verbose_name_plural": "rendered pages",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("document", "number"), name="normpagedraft_unique"
                    )
                ],
            },
        ),
    ]
