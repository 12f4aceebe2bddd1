"""The shared store of a run, and the checks on what goes into the final answer."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from django.utils import timezone

from normagpt.claim_results import (
    UNCONFIRMED,
    ClaimResult,
    answer_lead,
    answer_marked,
    results_summary,
)
from normagpt.claims import references_find
from normagpt.parsing import clause_label, code_matches
from normagpt.verification import Checker

Store = dict[str, Any]


def store_new(question: str, context: str = "", as_of: date | None = None) -> Store:
    """The seed's shared store, plus what the run keeps for itself (retrieved pages, review).
    A follow-up in a thread reads its `context` (the earlier turns) before the question; a
    question on a past or future day (`as_of`) says so."""
    query = f"{context}\n\nНовый вопрос: {question}" if context else question
    if as_of is not None and as_of != timezone.localdate():
        query += (
            f"\n(Ответ нужен на дату {as_of:%d.%m.%Y}: по редакциям, действовавшим тогда, "
            "с изменениями, вступившими до неё.)"
        )
    return {
        "as_of": (as_of or timezone.localdate()).isoformat(),
        "user_query": query,
        "plan": None,
        "scratchpad": {
            "priority_documents": [],
            "query_domain": "",
            "rejected_sources": {},
            "search_hypotheses": [],
            "reviewer_notes": [],
            "plans": 0,
            "replans": 0,
        },
        "execution_history": [],
        "step_results": {},
        "retrieved_pages": [],
        "final_answer": None,
        "status": "planning",
    }


def findings_all(shared: Store) -> list[dict[str, Any]]:
    """Every finding of every step, in order."""
    return [f for result in shared["step_results"].values() for f in result.get("findings", [])]


def page_match(shared: Store, document: str, page: int) -> dict[str, Any] | None:
    """The page retrieved in this run that `document`, `page` names, if any."""
    for ref in shared["retrieved_pages"]:
        if ref["page"] == page and code_matches(document, ref["document"]):
            return ref
    return None


def citations_check(
    shared: Store,
    output: dict[str, Any],
    *,
    origin: str = "answer",
    checked: list[dict[str, Any]] | None = None,
    lead: bool = True,
) -> dict[str, Any]:
    """The final answer checked: only sources that hold (a page retrieved in this run and a
    cited clause on it), and every claim against the text of the clause it cites
    (`normagpt.verification`), each unconfirmed one marked, the answer saying so first.

    Sources repeat once. A dropped source is listed under `dropped_sources` with why and the
    answer says so; the scratchpad's `rejected_sources` records them too. `checked` are
    checks made before (the executor's quotes), kept first.
    """
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for source in output.get("sources", []):
        ref = page_match(shared, source["document"], source["page"])
        clause = str(source.get("clause") or "").strip().rstrip(".,;)")
        if ref is None:
            dropped.append({**source, "reason": "страница не найдена в этом запуске"})
        elif clause and not clause_on_page(clause, ref):
            dropped.append({**source, "reason": f"пункта {clause} нет на странице {ref['page']}"})
        else:
            kept.append(
                {**source, "document": ref["document"], "clause": clause, "page_id": ref["page_id"]}
            )
    kept = editions_named(list({(s["page_id"], s["clause"]): s for s in kept}.values()), shared)
    checker = Checker(
        sources=output.get("sources", []), pages=shared["retrieved_pages"], as_of=run_day(shared)
    )
    checks = list(checked or [])
    results = checker.answer(output["answer"], origin=origin, start=len(checks))
    _resting_on_dropped(results, dropped, shared)
    answer = answer_marked(output["answer"], results, lead=lead)
    if dropped:
        names = "; ".join(
            f"{s['document']} {clause_label(s.get('clause') or '')}, стр. {s['page']} "
            f"({s['reason']})"
            for s in dropped
        )
        answer += f"\n\n> Ссылки удалены, они не подтверждаются найденными страницами: {names}."
        shared["scratchpad"]["rejected_sources"].update(
            {f"{s['document']} стр. {s['page']}": s["reason"] for s in dropped}
        )
    return {
        "answer": answer,
        "sources": kept,
        "conditions": output.get("conditions", []),
        "clarifying_questions": output.get("clarifying_questions", []),
        "dropped_sources": dropped,
        "checks": checks + [result.as_dict() for result in results],
        "unconfirmed": results_summary(results),
        "lead": answer_lead(results),
    }


def _resting_on_dropped(
    results: list[ClaimResult], dropped: list[dict[str, Any]], shared: Store
) -> None:
    """Each confirmed claim whose clause the run never read (its page not retrieved) and
    that a dropped source cites made unconfirmed, saying which source and why: the clause's
    text holds the value, but the answer did not rest on what the run found."""
    for result in results:
        if not result.confirmed or not result.document_code or result.page_number is None:
            continue
        if page_match(shared, result.document_code, result.page_number) is not None:
            continue
        source = next((s for s in dropped if _cites(s, result)), None)
        if source is None:
            continue
        cited = f"{clause_label(result.clause_number)} {result.document_code}"
        result.verdict = UNCONFIRMED
        result.reason = (
            f"источник удалён: {source['document']}, стр. {source['page']} "
            f"({source['reason']}): {cited} в этом запуске не прочитан"
        )
        problems = [*result.details.get("problems", []), "source_dropped"]
        result.details = {**result.details, "problem": "source_dropped", "problems": problems}


def _cites(source: dict[str, Any], result: ClaimResult) -> bool:
    """Whether `source` names the clause `result` was checked against (or its page)."""
    clause = str(source.get("clause") or "").strip().rstrip(".,;)")
    return code_matches(source["document"], result.document_code) and (
        clause == result.clause_number or source["page"] == result.page_number
    )


def findings_checked(shared: Store, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The executor's quotes, each checked against the clause and page it names."""
    checker = Checker(sources=[], pages=shared["retrieved_pages"], as_of=run_day(shared))
    return [result.as_dict() for result in checker.findings(findings)]


def run_day(shared: Store) -> date:
    """The day the run answers for (today for a run made before days were kept)."""
    return date.fromisoformat(shared["as_of"]) if shared.get("as_of") else timezone.localdate()


def editions_named(sources: list[dict[str, Any]], shared: Store) -> list[dict[str, Any]]:
    """Each source with its edition's status on the run's day and, for a clause an
    amendment changed by then, the amendment its text is from."""
    from normagpt.editions import source_edition  # the corpus, read once per answer

    day = run_day(shared)
    return [{**source, **source_edition(source, day)} for source in sources]


def clause_on_page(clause: str, ref: dict[str, Any]) -> bool:
    """Whether clause `clause` is on the retrieved page `ref` (its clause list, its text)."""
    if clause in (ref.get("clauses") or []):
        return True
    from normagpt.models import NormPage  # the page's text, for clauses the list lacks

    text = NormPage.objects.filter(pk=ref["page_id"]).values_list("text", flat=True).first()
    if _clause_pattern(clause).search(text or "") is not None:
        return True
    from normagpt.models import NormClause  # a clause an amendment added to the page

    return NormClause.objects.filter(
        page_id=ref["page_id"], number__iexact=clause, amendment__isnull=False
    ).exists()


def _clause_pattern(clause: str) -> re.Pattern[str]:
    """`10.3.2` as a number of its own: not inside `110.3.2` or `10.3.21`; «табл. 5.1» as
    the table's title «Таблица 5.1»."""
    tables = [r.number for r in references_find(clause) if r.kind == "table"]
    if tables:
        return re.compile(rf"(?i)таблица\s+{re.escape(tables[0])}(?![\d]|\.\d)")
    return re.compile(rf"(?<![\d.]){re.escape(clause)}(?![\d]|\.\d)")


def fallback_answer(shared: Store, reason: str) -> dict[str, Any]:
    """An answer without the model: what the steps found, cited, each quote checked against
    its clause, marked incomplete."""
    findings = findings_all(shared)
    head = f"**Ответ не завершён:** {reason}."
    lines, sources = [], []
    for f in findings:
        clause = f" {clause_label(f['clause'])}" if f.get("clause") else ""
        lines.append(f"- {f['document']}{clause}, стр. {f['page']}: «{f.get('quote', '')}»")
        sources.append(
            {"document": f["document"], "clause": f.get("clause", ""), "page": f["page"]}
        )
    if not lines:
        return {
            **citations_check(shared, {"answer": head, "sources": []}, origin="fallback"),
            "answer": f"{head}\n\nДо остановки ничего подходящего не найдено.",
            "checks": [],
            "unconfirmed": "",
            "lead": "",
        }
    checked = citations_check(
        shared, {"answer": "\n".join(lines), "sources": sources}, origin="fallback", lead=False
    )
    unique = {(s["page_id"], s["clause"]): s for s in checked["sources"]}
    parts = [head, checked["lead"], f"Найдено до остановки:\n{checked['answer']}"]
    return {
        **checked,
        "answer": "\n\n".join(part for part in parts if part),
        "sources": list(unique.values()),
    }
