"""The shared store of a run, and the checks on what goes into the final answer."""

from __future__ import annotations

from typing import Any

from normagpt.parsing import code_matches

Store = dict[str, Any]


def store_new(question: str) -> Store:
    """The seed's shared store, plus what the run keeps for itself (retrieved pages, review)."""
    return {
        "user_query": question,
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


def citations_check(shared: Store, output: dict[str, Any]) -> dict[str, Any]:
    """The final answer with only sources that are pages retrieved in this run.

    Dropped sources are listed under `dropped_sources`, and the answer says so, recording
    them in the scratchpad's `rejected_sources` too.
    """
    kept, dropped = [], []
    for source in output.get("sources", []):
        ref = page_match(shared, source["document"], source["page"])
        if ref is None:
            dropped.append(source)
            continue
        clause = source.get("clause", "")
        kept.append(
            {**source, "document": ref["document"], "clause": clause, "page_id": ref["page_id"]}
        )
    answer = output["answer"]
    if dropped:
        names = "; ".join(
            f"{s['document']} п. {s.get('clause') or '—'}, стр. {s['page']}" for s in dropped
        )
        answer += (
            f"\n\n> Ссылки, которых нет среди страниц, найденных в этом запуске, удалены: {names}."
        )
        shared["scratchpad"]["rejected_sources"].update(
            {f"{s['document']} стр. {s['page']}": "не найдена в этом запуске" for s in dropped}
        )
    return {
        "answer": answer,
        "sources": kept,
        "conditions": output.get("conditions", []),
        "clarifying_questions": output.get("clarifying_questions", []),
        "dropped_sources": dropped,
    }


def fallback_answer(shared: Store, reason: str) -> dict[str, Any]:
    """An answer without the model: what the steps found, cited, marked incomplete."""
    findings = findings_all(shared)
    lines = [f"**Ответ не завершён:** {reason}.", ""]
    sources = []
    if findings:
        lines.append("Найдено до остановки:")
        for f in findings:
            clause = f" п. {f['clause']}" if f.get("clause") else ""
            lines.append(f"- {f['document']}{clause}, стр. {f['page']}: «{f.get('quote', '')}»")
            sources.append(
                {"document": f["document"], "clause": f.get("clause", ""), "page": f["page"]}
            )
    else:
        lines.append("До остановки ничего подходящего не найдено.")
    checked = citations_check(shared, {"answer": "\n".join(lines), "sources": sources})
    unique = {(s["page_id"], s["clause"]): s for s in checked["sources"]}
    return {**checked, "sources": list(unique.values())}
