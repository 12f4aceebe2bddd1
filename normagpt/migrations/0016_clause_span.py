"""NormClause.span. Added by ALTER TABLE ADD COLUMN on every database: Django's AddField of a
field with a default remakes an SQLite table, and the clause index's triggers (0007, 0014)
would go with the old one."""

from django.db import migrations, models

ADD = (
    "ALTER TABLE normagpt_normclause "
    "ADD COLUMN span smallint NOT NULL DEFAULT 0 CHECK (span >= 0)"
)
DROP = "ALTER TABLE normagpt_normclause DROP COLUMN span"


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0015_amendment_additions")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(ADD, DROP)],
            state_operations=[
                migrations.AddField(
                    model_name="normclause",
                    name="span",
                    field=models.PositiveSmallIntegerField(
                        db_default=0,
                        default=0,
                        help_text="pages after its first that it runs on to",
                        verbose_name="pages after the first",
                    ),
                )
            ],
        )
    ]
