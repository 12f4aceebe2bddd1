"""Amendments as they are really written: a change names a part of a clause (`part`:
«абзац 2», «перечисление 1», «примечание», «после «…»»), keeps the amendment's words it was
read from (`order`) and what that order names (`targets`), may name a section or appendix (kind «section»; an empty number: the
whole text) and add a clause, insert before a part, replace a section's clauses or its title
(modes «add», «insert», «section», «title»). NormAmendmentOrder keeps the orders a reading
did not apply, so that none is dropped silently.

Only normagpt_normamendmentchange gets columns (an SQLite table remake there loses nothing:
the clause and page tables, whose full-text triggers a remake would drop, are not touched).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0017_ingest_lease")]

    operations = [
        migrations.AddField(
            model_name="normamendmentchange",
            name="order",
            field=models.TextField(
                blank=True,
                default="",
                editable=False,
                help_text="the amendment's words it was read from (empty: typed in)",
                verbose_name="order",
            ),
        ),
        migrations.AddField(
            model_name="normamendmentchange",
            name="targets",
            field=models.JSONField(blank=True, default=list, editable=False, verbose_name="names"),
        ),
        migrations.AddField(
            model_name="normamendmentchange",
            name="part",
            field=models.CharField(
                blank=True,
                default="",
                help_text="where in the clause: «абзац 2», «абзац -1» (the last), «перечисление "
                "1», «примечание», «после «…»» (the entry or row after those words); empty: "
                "all of it",
                max_length=200,
                verbose_name="part",
            ),
        ),
        migrations.AlterField(
            model_name="normamendmentchange",
            name="kind",
            field=models.CharField(
                choices=[
                    ("clause", "clause"),
                    ("table", "table"),
                    ("text", "unnumbered text"),
                    ("section", "section or appendix"),
                ],
                default="clause",
                max_length=8,
                verbose_name="kind",
            ),
        ),
        migrations.AlterField(
            model_name="normamendmentchange",
            name="mode",
            field=models.CharField(
                choices=[
                    ("replace", "new text in full"),
                    ("append", "added at the end"),
                    ("substitute", "words replaced"),
                    ("add", "new clause"),
                    ("insert", "inserted before a part"),
                    ("section", "a section's clauses replaced"),
                    ("title", "a section's title"),
                ],
                default="replace",
                max_length=10,
                verbose_name="change made",
            ),
        ),
        migrations.AlterField(
            model_name="normamendmentchange",
            name="number",
            field=models.CharField(
                blank=True,
                help_text="a clause's or table's number, a section's number or an appendix's "
                "letter (a section, empty: the whole text)",
                max_length=40,
                verbose_name="number",
            ),
        ),
        migrations.CreateModel(
            name="NormAmendmentOrder",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveIntegerField(default=0, verbose_name="position")),
                ("text", models.TextField(verbose_name="order")),
                ("targets", models.JSONField(blank=True, default=list, verbose_name="names")),
                ("reason", models.CharField(blank=True, max_length=300, verbose_name="reason")),
                (
                    "amendment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="unread_orders",
                        to="normagpt.normamendment",
                        verbose_name="amendment",
                    ),
                ),
            ],
            options={
                "verbose_name": "order not applied",
                "verbose_name_plural": "orders not applied",
                "ordering": ["amendment", "position"],
            },
        ),
    ]
