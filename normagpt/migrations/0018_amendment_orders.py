from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0017_ingest_lease")]

    operations: list[migrations.operations.base.Operation] = []
