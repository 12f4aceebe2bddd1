"""Real norm clauses kept as test material (tests/fixtures/norms/*.json, SOURCES.md): stored
as the checker finds them, and the ids of the cases written against them; excerpts of the
dataset's pages, read and stored as ingestion reads and stores them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from normagpt.models import NormDocument

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "norms"


@cache
def material(name: str) -> dict[str, Any]:
    """The material of tests/fixtures/norms/`name`."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def pages_of(name: str) -> list[str]:
    """The pages of the dataset excerpt tests/fixtures/norms/`name`, as ingestion reads them."""
    from normagpt.parsing import text_clean

    return [text_clean(page["page_content"]) for page in material(name)["pages"]]


def pages_stored(code: str, title: str, fixture: str, first: int = 1) -> NormDocument:
    """The excerpt's pages stored from page `first` on and indexed as the corpus's are; the
    document."""
    from normagpt import indexing, services
    from normagpt.models import NormPage

    document = services.document_save(code=code, title=title)
    NormPage.objects.bulk_create(
        [
            NormPage(document=document, number=n, text=t)
            for n, t in enumerate(pages_of(fixture), first)
        ]
    )
    indexing.document_index(document_id=document.pk)
    return document


def texts(name: str, document: str, number: str) -> list[tuple[str, bool]]:
    """The texts of a clause or table of the material («табл. 38»: every row the reader made
    of it), each with whether it is a table."""
    kind = "table" if number.startswith("табл. ") else "clause"
    number = number.removeprefix("табл. ")
    found = [
        (x["text"], kind == "table")
        for x in material(name)["clauses"]
        if (x["document"], x["kind"], x["number"]) == (document, kind, number)
    ]
    assert found, (document, number)
    return found


def verdict(cited: list[tuple[str, bool]], claim: str, number: str) -> tuple[str, str]:
    """What the checker says of `claim`'s values and grades against the `cited` texts:
    'confirmed', 'value_missing' (a value they do not hold) or 'other_condition' with the
    reason (for which condition they give it)."""
    from normagpt import claims as c
    from normagpt.conditions import value_condition
    from normagpt.conditions.graded import grade_condition

    text = "\n".join(text for text, _ in cited)
    held = c.values_find(text)
    reasons = []
    for value in c.said(claim).values:
        if c.value_held(value, held) is None:
            return "value_missing", c.value_text(value)
        mismatch = value_condition(claim, value, cited)
        if mismatch is not None:
            reasons.append(mismatch.reason(number))
    grades = c.grades_find(text)
    for grade in c.said(claim).grades:
        if c.grade_held(grade, grades):
            continue
        found, graded = grade_condition(claim, grade, cited)
        if not found:
            return "value_missing", grade.text
        if graded is not None:
            reasons.append(f"{grade.text} — для «{graded.given_for}»")
    return ("other_condition", "; ".join(reasons)) if reasons else ("confirmed", "")


def verdict_holds(
    cited: list[tuple[str, bool]], number: str, claim: str, expected: str, words: list[str]
) -> None:
    """The case's verdict is `expected`, and its reason says each of `words`."""
    found, reason = verdict(cited, claim, number)
    assert found == expected, reason
    for word in words:
        assert word in reason


def material_store(data: dict[str, Any]) -> None:
    """The material's clauses, each on its page (the page as the dataset gives it where the
    material holds it, else the page's clauses joined), stems counted, codes' aliases made."""
    from normagpt.indexing import aliases_refresh
    from normagpt.models import NormClause, NormDocument, NormPage
    from normagpt.terms import clause_search_text, terms_recount

    real = {(p["document"], p["number"]): p["text"] for p in data.get("pages", [])}
    for entry in data["documents"]:
        document = NormDocument.objects.create(code=entry["code"], title=entry["title"])
        aliases_refresh(document)
        own = [x for x in data["clauses"] if x["document"] == entry["code"]]
        for number in sorted({x["page"] for x in own}):
            here = [x for x in own if x["page"] == number]
            text = real.get((entry["code"], number)) or "\n".join(x["text"] for x in here)
            page = NormPage.objects.create(document=document, number=number, text=text)
            for position, x in enumerate(here):
                start = x["start"] if (entry["code"], number) in real else text.find(x["text"])
                NormClause.objects.create(
                    document=document, page=page, kind=x["kind"], number=x["number"],
                    heading=x["heading"], text=x["text"], position=position, start=start,
                    end=start + len(x["text"]) if start >= 0 else x["end"],
                    search_text=clause_search_text(
                        x["heading"], x["text"], table=x["kind"] == "table"
                    ),
                )  # fmt: skip
    terms_recount()


def case_id(case: tuple[Any, ...]) -> str:
    """A case (document, clause, claim, verdict, …) named by its document's number, its
    clause and its verdict."""
    document, number, _, expected, *_ = case
    return f"{document.split()[1].split('.')[0]} {number} {expected}"
