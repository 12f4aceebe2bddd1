"""Documents known by their names get their short names as aliases (`code_aliases`: «Правила
ПУЭ» → «ПУЭ», «Федеральный закон 123-» → «123-ФЗ»), so that a claim citing «п. 1.7.101 ПУЭ»
finds the document in a corpus ingested before. Only aliases missing are added."""

from django.db import migrations

from normagpt.parsing import alias_key, code_aliases


def aliases_add(apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    Document = apps.get_model("normagpt", "NormDocument")
    Alias = apps.get_model("normagpt", "NormDocumentAlias")
    Alias.objects.bulk_create(
        [
            Alias(document=document, alias=name, key=alias_key(name), automatic=True)
            for document in Document.objects.only("pk", "code")
            for name in code_aliases(document.code)
        ],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [("normagpt", "0019_document_source")]

    operations = [migrations.RunPython(aliases_add, migrations.RunPython.noop)]
