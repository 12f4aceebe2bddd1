"""A real corpus in one command: the public dataset of Russian construction norms
Akumsk/russian-construction-standards (a checkout's `metadata/*.json`: the text of every page
of 361 official documents, CC BY 4.0) loaded as documents of the corpus.

Each file is read into a `DatasetDocument` (its code, title, kind and page texts); loading
one stores it with the dataset's attribution as its source and ingests its pages as texts
(`document_texts_ingest`: the edition it replaces stays whole if anything fails). A file
loaded before, unchanged, is skipped: a load that stopped goes on where it was.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from django.db.models import Count, Q

from core.exceptions import InvalidInput
from normagpt.ingest import document_save, document_texts_ingest
from normagpt.ingest.documents import Progress
from normagpt.models import NormClause, NormDocument, NormPage
from normagpt.parsing import clauses_find, code_key, number_normal

DATASET = "Akumsk/russian-construction-standards"
DATASET_URL = "https://github.com/Akumsk/russian-construction-standards"
ATTRIBUTION = f"Текст страниц: {DATASET} ({DATASET_URL}), лицензия CC BY 4.0"
UNREAD_SHOWN = 8
# the dataset's document types as the corpus writes codes («Свод правил 63.13330.2018» →
# «СП 63.13330.2018»); a file's name is the code where its fields give none
_KINDS = {"свод правил": "СП", "санитарные правила и нормы": "СанПиН", "санпин": "СанПиН"}
_COPY = re.compile(r"_\d+$")  # «ГОСТ Р 53195.4-2010_1.json»: a second copy of a document


@dataclass(frozen=True)
class DatasetDocument:
    path: Path
    code: str
    title: str
    pages: list[str]
    digest: str  # the file's SHA-256


@dataclass(frozen=True)
class Reading:
    """How a document's pages were read: its parts, and the clause numbers that open a line
    of a page but became no clause or heading (what was not understood)."""

    pages: int
    clauses: int
    tables: int
    unread: list[str]


def dataset_files(directory: Path) -> list[Path]:
    """The dataset's document files under `directory` (a checkout, or its `metadata`);
    InvalidInput (naming `directory`) for none."""
    folder = directory / "metadata" if (directory / "metadata").is_dir() else directory
    files = sorted(folder.glob("*.json"))
    if not files:
        raise InvalidInput(
            f"{directory}: no document of the dataset (metadata/*.json)", field="directory"
        )
    return files


def code_wanted(code: str, only: list[str] | None) -> bool:
    """Whether the document `code` is one of those asked for by (part of) their codes
    («СП 54», «25192»); every document when none are."""
    return not only or any(code_key(name) in code_key(code) for name in only)


def dataset_document_read(path: Path) -> DatasetDocument:
    """One file of the dataset; InvalidInput naming the file when it is not a document of it
    (not JSON, no pages)."""
    data = path.read_bytes()
    try:
        fields = json.loads(data.decode("utf-8-sig"))
        pages = [str(page.get("page_content") or "") for page in fields["pages"]]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidInput(
            f"{path.name}: not a document of {DATASET} ({exc})", field="file"
        ) from exc
    if not pages:
        raise InvalidInput(f"{path.name}: the document holds no page", field="file")
    return DatasetDocument(
        path=path,
        code=_code(fields, path.stem),
        title=" ".join(str(fields.get("full_name") or path.stem).split())[:500],
        pages=pages,
        digest=hashlib.sha256(data).hexdigest(),
    )


def _code(fields: dict[str, object], stem: str) -> str:
    kind = " ".join(str(fields.get("document_type") or "").split())
    number = " ".join(str(fields.get("number") or "").split()).strip(" -")
    if kind and number and kind.casefold() in _KINDS | {"гост": "", "гост р": "", "сп": ""}:
        return f"{_KINDS.get(kind.casefold(), kind)} {number}"
    return _code_of_name(stem)


def _code_of_name(stem: str) -> str:
    words = _COPY.sub("", stem).split()
    if len(words) > 2 and " ".join(words[:2]).casefold() in _KINDS:
        words = [_KINDS[" ".join(words[:2]).casefold()], *words[2:]]
    return " ".join(words)


def dataset_document_load(
    *, document: DatasetDocument, progress: Progress | None = None
) -> tuple[NormDocument, bool]:
    """Store `document` in the corpus (by its code), its pages ingested as texts and the
    dataset's attribution as its source; (the document, whether it was loaded now). One
    loaded from the same file before is left as it is."""
    stored = NormDocument.objects.filter(code_key=code_key(document.code)).first()
    if (
        stored is not None
        and stored.source_digest == document.digest
        and stored.ingest_status == NormDocument.Ingest.DONE
    ):
        return stored, False
    saved = document_save(code=document.code, title=document.title)
    NormDocument.objects.filter(pk=saved.pk).update(source=ATTRIBUTION, source_digest="")
    loaded = document_texts_ingest(document_id=saved.pk, texts=document.pages, progress=progress)
    NormDocument.objects.filter(pk=saved.pk).update(source_digest=document.digest)
    loaded.refresh_from_db()
    return loaded, True


def document_reading(*, document_id: int) -> Reading:
    """How the document's stored pages were read (see `Reading`)."""
    counts = NormClause.objects.filter(document_id=document_id, amendment=None).aggregate(
        clauses=Count("pk", filter=Q(kind=NormClause.Kind.CLAUSE)),
        tables=Count("pk", filter=Q(kind=NormClause.Kind.TABLE)),
    )
    pages = list(NormPage.objects.filter(document_id=document_id).values_list("text", "clauses"))
    known = {number_normal(n) for _, numbers in pages for n in numbers}
    known |= set(
        NormClause.objects.filter(document_id=document_id).values_list("number", flat=True)
    )
    opening = dict.fromkeys(number_normal(n) for text, _ in pages for n in clauses_find(text))
    unread = [number for number in opening if number not in known]
    return Reading(len(pages), counts["clauses"], counts["tables"], unread)
