"""The shared store of a run, and the checks on what goes into the final answer."""

from __future__ import annotations

import re
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
    """The final answer with only sources that hold: a page retrieved in this run, and a
    cited clause that is on that page (its clause list or its text).

    Sources repeat once. A dropped source is listed under `dropped_sources` with why, the
    answer says so, and a sentence that cited only dropped clauses is marked unconfirmed;
    the scratchpad's `rejected_sources` records them too.
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
    kept = list({(s["page_id"], s["clause"]): s for s in kept}.values())
    answer = _unconfirmed_marked(output["answer"], kept, dropped)
    if dropped:
        names = "; ".join(
            f"{s['document']} п. {s.get('clause') or '—'}, стр. {s['page']} ({s['reason']})"
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
    }


def clause_on_page(clause: str, ref: dict[str, Any]) -> bool:
    """Whether clause `clause` is on the retrieved page `ref` (its clause list, its text)."""
    if clause in (ref.get("clauses") or []):
        return True
    from normagpt.models import NormPage  # the page's text, for clauses the list lacks

    text = NormPage.objects.filter(pk=ref["page_id"]).values_list("text", flat=True).first()
    return _clause_pattern(clause).search(text or "") is not None


def _clause_pattern(clause: str) -> re.Pattern[str]:
    """`10.3.2` as a number of its own: not inside `110.3.2` or `10.3.21`."""
    return re.compile(rf"(?<![\d.]){re.escape(clause)}(?![\d]|\.\d)")


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[«(\"А-ЯЁA-Z*-])")


def _unconfirmed_marked(
    answer: str, kept: list[dict[str, Any]], dropped: list[dict[str, Any]]
) -> str:
    """The answer with each sentence that names a dropped clause and no kept one marked."""
    gone = [str(s.get("clause") or "") for s in dropped if s.get("clause")]
    held = [s["clause"] for s in kept if s["clause"]]
    if not gone:
        return answer
    out = []
    for line in answer.split("\n"):
        sentences = _SENTENCE_END.split(line)
        marked = []
        for sentence in sentences:
            names_gone = [c for c in gone if _clause_pattern(c).search(sentence)]
            names_held = [c for c in held if _clause_pattern(c).search(sentence)]
            if names_gone and not names_held:
                listed = ", ".join(f"п. {c}" for c in names_gone)
                sentence += f" *[не подтверждено: ссылка на {listed} удалена]*"
            marked.append(sentence)
        out.append(" ".join(marked))
    return "\n".join(out)


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
