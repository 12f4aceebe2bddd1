from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0016_clause_span")]

    operations: list[migrations.operations.base.Operation] = []
