"""The four nodes of the seed, each prep → exec → post over the shared store.

prep reads what the node needs from the store; exec does the work (the model, search) and
returns a JSON-ready output; post writes the output into the store and returns the action
that picks the next node. Only exec has side effects outside the store.
"""

from __future__ import annotations

import base64
from datetime import date
from typing import Any, ClassVar

from django.conf import settings
from django.utils import timezone

from core.exceptions import InvalidInput
from core.rows import fields_load
from normagpt.agent.context import NodeContext
from normagpt.agent.store import Store, citations_check, findings_all, findings_checked, run_day
from normagpt.calculate import expression_evaluate
from normagpt.editions import amendment_label, clause_marks, edition_status
from normagpt.models import NormClause, NormDocument, NormPage
from normagpt.parsing import clause_label
from normagpt.schemas import FinalAnswer, Plan, StepResult, Verdict
from normagpt.search import SearchHit, pages_search

DEFAULT = "default"
DOCUMENTS_IN_PROMPT = 200
PAGE_TEXT_CHARS = 6000


class Node:
    name: ClassVar[str]

    def prep(self, shared: Store) -> dict[str, Any]:
        raise NotImplementedError

    def exec(self, prep: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        raise NotImplementedError

    def post(self, shared: Store, prep: dict[str, Any], output: dict[str, Any]) -> str:
        raise NotImplementedError

    def summary(self, prep: dict[str, Any]) -> str:
        """One line on what the node worked on (AgentStep.input_summary)."""
        return ""


class Planner(Node):
    name = "planner"

    def prep(self, shared: Store) -> dict[str, Any]:
        day = run_day(shared)
        documents = [
            f"{d.code} — {d.title}" + ("" if d.in_force_on(day) else " [не действует]")
            for d in NormDocument.objects.order_by("code")[:DOCUMENTS_IN_PROMPT]
        ]
        return {"user_query": shared["user_query"], "documents": documents, "notes": notes(shared)}

    def exec(self, prep: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        return ctx.ask(node=self.name, schema=Plan, values=prep).model_dump()

    def post(self, shared: Store, prep: dict[str, Any], output: dict[str, Any]) -> str:
        steps = [{"step_number": i, **step} for i, step in enumerate(output["steps"], start=1)]
        shared["plan"] = {"goal": output["goal"], "steps": steps, "current_step_index": 0}
        pad = shared["scratchpad"]
        pad["query_domain"] = output.get("query_domain", "")
        expected = [doc for step in steps for doc in step["expected_documents"]]
        pad["priority_documents"] = list(dict.fromkeys(pad["priority_documents"] + expected))
        pad["plans"] = pad.get("plans", 0) + 1
        shared["status"] = "executing"
        return DEFAULT

    def summary(self, prep: dict[str, Any]) -> str:
        return f"question: {prep['user_query'][:200]}"


class Executor(Node):
    name = "executor"

    def prep(self, shared: Store) -> dict[str, Any]:
        plan = shared["plan"]
        step = plan["steps"][plan["current_step_index"]]
        return {"user_query": shared["user_query"], "step": step, "as_of": run_day(shared)}

    def exec(self, prep: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        step = prep["step"]
        if step.get("calculate"):  # arithmetic on found values: no search, no model call
            calculation = expression_evaluate(step["calculate"])
            return {
                "findings": [],
                "summary": calculation.summary,
                "pages": [],
                "calculation": {
                    "expression": calculation.expression,
                    "result": calculation.result,
                    "error": calculation.error,
                },
            }
        try:
            hits = pages_search(
                keywords=step["keywords"],
                expected_documents=step["expected_documents"],
                limit=ctx.pages_per_step,
                as_of=prep["as_of"],
            )
        except InvalidInput:
            hits = []
        pages = [ref for hit in hits for ref in page_refs(hit)]
        words = ", ".join(step["keywords"])
        if not hits:
            return {
                "findings": [],
                "summary": f"Поиск не нашёл страниц по словам: {words}.",
                "pages": [],
                "answered": False,
            }
        if not any(hit.answers for hit in hits):  # the closest do not hold what is asked
            closest = "; ".join(hit_label(hit) for hit in hits[:3])
            return {
                "findings": [],
                "summary": (
                    f"В корпусе нет пункта, отвечающего на запрос «{words}»: ни один найденный "
                    f"пункт не содержит того, о чём спрошено. Ближайшие (не отвечают): {closest}."
                ),
                "pages": [],
                "answered": False,
                "closest": [hit_label(hit) for hit in hits[:3]],
            }
        values = {"user_query": prep["user_query"], "step": step["action"], "pages": ""}
        day = prep["as_of"]
        shown = list({p.pk: p for hit in hits for p in (hit.page, *hit.pages_after)}.values())
        # the search leaves the pages' text unread: those read here come in one query
        fields_load([p for p in shown if not (ctx.vision and p.image)], "text")
        if ctx.vision:
            values["pages"] = "\n".join(
                page_heading(page, day) + amended_on_page(page, day) for page in shown
            )
            values["pages"] += "\n(изображения ниже)"
            attachments = [a for page in shown for a in page_image_parts(page, day)]
        else:
            values["pages"] = "\n\n".join(page_as_text(page, day) for page in shown)
            attachments = []
        result = ctx.ask(node=self.name, schema=StepResult, values=values, attachments=attachments)
        return {**result.model_dump(), "pages": pages, "answered": True}

    def post(self, shared: Store, prep: dict[str, Any], output: dict[str, Any]) -> str:
        step = prep["step"]
        number = len(shared["step_results"]) + 1
        shared["step_results"][str(number)] = {
            "action": step["action"],
            "keywords": step["keywords"],
            "expected_documents": step["expected_documents"],
            **output,
        }
        known = {p["page_id"] for p in shared["retrieved_pages"]}
        shared["retrieved_pages"] += [p for p in output["pages"] if p["page_id"] not in known]
        if step["keywords"]:
            shared["scratchpad"]["search_hypotheses"].append(", ".join(step["keywords"]))
        shared["plan"]["current_step_index"] += 1
        shared["status"] = "judging"
        return DEFAULT

    def summary(self, prep: dict[str, Any]) -> str:
        step = prep["step"]  # (prep["as_of"] is the run's day: in the question already)
        what = (
            f"calculation {step['calculate']}"
            if step.get("calculate")
            else ", ".join(step["keywords"])
        )
        return f"step {step['step_number']}: {step['action'][:150]} [{what}]"


class Judge(Node):
    name = "judge"

    def prep(self, shared: Store) -> dict[str, Any]:
        plan = shared["plan"]
        results = {
            key: {"action": r["action"], "summary": r["summary"], "findings": r["findings"]}
            for key, r in shared["step_results"].items()
        }
        return {
            "user_query": shared["user_query"],
            "plan": {"goal": plan["goal"], "steps": [s["action"] for s in plan["steps"]]},
            "remaining_steps": len(plan["steps"]) - plan["current_step_index"],
            "step_results": results,
            "history": notes(shared),
        }

    def exec(self, prep: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        return ctx.ask(node=self.name, schema=Verdict, values=prep).model_dump()

    def post(self, shared: Store, prep: dict[str, Any], output: dict[str, Any]) -> str:
        decision = output["decision"]
        if decision == "CONTINUE" and prep["remaining_steps"] <= 0:
            decision = "FINALIZE"  # nothing left to execute: answer with what was found
            output["note"] = "no plan steps left: CONTINUE taken as FINALIZE"
        asked = shared["scratchpad"].get("asks", 0)
        if decision == "ASK" and asked >= settings.NORMAGPT_MAX_ASKS:
            decision = "FINALIZE"  # asked enough: the answer gives its conditions
            output["note"] = f"asked {asked} time(s) already: ASK taken as FINALIZE"
        elif decision == "ASK":
            shared["scratchpad"]["asks"] = asked + 1
        shared["status"] = {
            "CONTINUE": "executing",
            "REPLAN": "planning",
            "FINALIZE": "finalizing",
            "HUMAN_REVIEW": "needs_review",
            "ASK": "awaiting_input",
        }[decision]
        return str(decision)

    def summary(self, prep: dict[str, Any]) -> str:
        return f"steps done: {len(prep['step_results'])}, left: {prep['remaining_steps']}"


class Finalizer(Node):
    name = "finalizer"

    def prep(self, shared: Store) -> dict[str, Any]:
        extra = [shared["incomplete_reason"]] if shared.get("incomplete_reason") else []
        extra += [
            result["summary"]
            for result in shared["step_results"].values()
            if result.get("calculation")  # the calculate steps' results, for the answer
        ]
        findings = findings_all(shared)
        checked = findings_checked(shared, findings)
        return {
            "user_query": shared["user_query"],
            "findings": [
                {**f, "проверка": "подтверждена" if r["verdict"] == "confirmed" else r["reason"]}
                for f, r in zip(findings, checked, strict=True)
            ],
            "notes": extra + shared["scratchpad"]["reviewer_notes"],
            "checked": checked,
            "unanswered": None if findings else not_in_corpus(shared),
        }

    def exec(self, prep: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        if prep["unanswered"] is not None:  # no search found a clause holding what is asked
            return prep["unanswered"]
        values = {k: v for k, v in prep.items() if k not in ("checked", "unanswered")}
        return ctx.ask(node=self.name, schema=FinalAnswer, values=values).model_dump()

    def post(self, shared: Store, prep: dict[str, Any], output: dict[str, Any]) -> str:
        if prep["unanswered"] is not None:  # claims nothing: the clauses it names do not answer
            shared["final_answer"] = {
                **output,
                "dropped_sources": [],
                "checks": [],
                "unconfirmed": "",
                "lead": "",
            }
        else:
            shared["final_answer"] = citations_check(shared, output, checked=prep["checked"])
        shared["status"] = "completed"
        return DEFAULT

    def summary(self, prep: dict[str, Any]) -> str:
        return f"findings: {len(prep['findings'])}"


NOT_IN_CORPUS = "В корпусе нет пункта, отвечающего на вопрос."


def not_in_corpus(shared: Store) -> dict[str, Any] | None:
    """The final answer when no search of the run found a clause holding what is asked (and
    no finding was made): that the corpus has none, what was searched, the closest clauses
    as not answering; no source. None when a search answered, or nothing was searched."""
    results = [r for r in shared["step_results"].values() if r.get("keywords")]
    if not results or any(r.get("answered", True) for r in results):
        return None
    searched = "; ".join(f"«{', '.join(r['keywords'])}»" for r in results)
    closest = list(dict.fromkeys(label for r in results for label in r.get("closest", [])))
    lines = [f"**{NOT_IN_CORPUS}**", "", f"Искали: {searched}."]
    if closest:
        lines.append(
            "Ближайшие найденные пункты на вопрос не отвечают: " + "; ".join(closest[:5]) + "."
        )
    return {"answer": "\n".join(lines), "sources": [], "conditions": [], "clarifying_questions": []}


def hit_label(hit: SearchHit) -> str:
    """A search hit as a reader names it: «СП 54.13330.2016, п. 5.8, стр. 14»."""
    found = hit.clauses[0].clause if hit.clauses else None
    what = ""
    if found is not None and found.number:
        what = ", " + clause_label(found.number, table=found.kind == NormClause.Kind.TABLE)
    return f"{hit.page.document.code}{what}, стр. {hit.page.number}"


NODES: dict[str, Node] = {node.name: node for node in (Planner(), Executor(), Judge(), Finalizer())}


def notes(shared: Store) -> list[str]:
    """What a new plan should know: earlier plans, step outcomes, decisions, reviewer notes."""
    lines = [f"{h['node']}: {h['summary']}" for h in shared["execution_history"][-12:]]
    lines += [f"рецензент: {note}" for note in shared["scratchpad"]["reviewer_notes"]]
    return lines


def page_refs(hit: SearchHit) -> list[dict[str, Any]]:
    """The page found and the pages its clauses run on to, as the run keeps them (the agent
    reads every page of a clause it reads, and may cite any of them)."""
    return [
        {
            "page_id": page.pk,
            "document": page.document.code,
            "page": page.number,
            "clauses": page.clauses,
            "replaced": hit.replaced,
        }
        for page in (hit.page, *hit.pages_after)
    ]


def page_heading(page: NormPage, day: date | None = None) -> str:
    """The page's document with its edition's status on `day` (default today)."""
    document = page.document
    status = f" [{edition_status(document, day or timezone.localdate())}]"
    if status == " [действует]":
        status = ""  # an edition in force, with no dates known: nothing to say
    return f"Страница {page.number} — {document.code} «{document.title}»{status}"


def amended_on_page(page: NormPage, day: date) -> str:
    """The clauses of the page an amendment changed by `day`: their text then (the page
    shows the edition's own), and the marks of those an amendment in force names but could
    not change; '' when none."""
    versions = [
        v
        for v in NormClause.objects.select_related("amendment")
        .filter(page=page, amendment__isnull=False, valid_from__lte=day)
        .order_by("position", "id")
        if v.valid_to is None or day < v.valid_to
    ]
    replaced = NormClause.objects.filter(page=page, amendment=None, valid_to__lte=day).values_list(
        "number", flat=True
    )
    lines = [
        f"\n[{amendment_label(v.amendment)}: {v.number} в новой редакции] {v.text}"  # type: ignore[arg-type]
        for v in versions
    ]
    gone = sorted(set(replaced) - {v.number for v in versions})
    if gone:
        lines.append(f"\n[Пункты {', '.join(gone)} этой страницы исключены изменениями]")
    # a clause an amendment in force names but could not change: its text here is not the
    # amended one, and the reader is told so
    own = list(
        NormClause.objects.filter(page=page, amendment=None)
        .exclude(number="")
        .values_list("kind", "number")
    )
    for kind in ("clause", "table"):
        numbers = [number for k, number in own if k == kind]
        marks = clause_marks(document_id=page.document_id, numbers=numbers, day=day, kind=kind)
        lines += [f"\n[{number}: {mark}]" for number, mark in marks.items()]
    return "".join(lines)


def page_as_text(page: NormPage, day: date | None = None) -> str:
    day = day or timezone.localdate()
    text = page.text[:PAGE_TEXT_CHARS]
    return f"=== {page_heading(page, day)} ===\n{text}{amended_on_page(page, day)}"


def page_image_parts(page: NormPage, day: date | None = None) -> list[dict[str, Any]]:
    """The page's heading and its image as an OpenAI vision content part (text if no image)."""
    day = day or timezone.localdate()
    if not page.image:
        return [{"type": "text", "text": page_as_text(page, day)}]
    with page.image.open("rb") as handle:
        encoded = base64.b64encode(handle.read()).decode("ascii")
    return [
        {"type": "text", "text": page_heading(page, day) + amended_on_page(page, day)},
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{encoded}"}},
    ]
