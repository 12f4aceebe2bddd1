"""Real norm clauses kept as test material (tests/fixtures/norms/*.json, SOURCES.md): stored
as the checker finds them, and the ids of the cases written against them."""

from __future__ import annotations

from typing import Any


def material_store(data: dict[str, Any]) -> None:
    """The material's clauses, each on its page (the page as the dataset gives it where the
    material holds it, else the page's clauses joined), stems counted, codes' aliases made."""
    from normagpt.indexing import aliases_refresh, clause_search_text, terms_recount
    from normagpt.models import NormClause, NormDocument, NormPage

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
