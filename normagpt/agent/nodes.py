"""The four nodes of the seed, each prep → exec → post over the shared store.

prep reads what the node needs from the store; exec does the work (the model, search) and
returns a JSON-ready output; post writes the output into the store and returns the action
that picks the next node. Only exec has side effects outside the store.
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from core.exceptions import InvalidInput
from normagpt.agent.context import NodeContext
from normagpt.agent.store import Store, citations_check, findings_all, findings_checked
from normagpt.calculate import expression_evaluate
from normagpt.models import NormDocument, NormPage
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
        documents = [
            f"{d.code} — {d.title}" + (" [заменён]" if d.status == "replaced" else "")
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
        return f"вопрос: {prep['user_query'][:200]}"


class Executor(Node):
    name = "executor"

    def prep(self, shared: Store) -> dict[str, Any]:
        plan = shared["plan"]
        step = plan["steps"][plan["current_step_index"]]
        return {"user_query": shared["user_query"], "step": step}

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
            )
        except InvalidInput:
            hits = []
        pages = [page_ref(hit) for hit in hits]
        if not hits:
            words = ", ".join(step["keywords"])
            return {
                "findings": [],
                "summary": f"Поиск не нашёл страниц по словам: {words}.",
                "pages": [],
            }
        values = {"user_query": prep["user_query"], "step": step["action"], "pages": ""}
        if ctx.vision:
            values["pages"] = "\n".join(page_heading(h.page) for h in hits) + "\n(изображения ниже)"
            attachments = [a for hit in hits for a in page_image_parts(hit.page)]
        else:
            values["pages"] = "\n\n".join(page_as_text(hit.page) for hit in hits)
            attachments = []
        result = ctx.ask(node=self.name, schema=StepResult, values=values, attachments=attachments)
        return {**result.model_dump(), "pages": pages}

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
        step = prep["step"]
        what = (
            f"расчёт {step['calculate']}" if step.get("calculate") else ", ".join(step["keywords"])
        )
        return f"шаг {step['step_number']}: {step['action'][:150]} [{what}]"


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
        shared["status"] = {
            "CONTINUE": "executing",
            "REPLAN": "planning",
            "FINALIZE": "finalizing",
            "HUMAN_REVIEW": "needs_review",
            "ASK": "awaiting_input",
        }[decision]
        return str(decision)

    def summary(self, prep: dict[str, Any]) -> str:
        return f"шагов выполнено: {len(prep['step_results'])}, осталось: {prep['remaining_steps']}"


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
        }

    def exec(self, prep: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        values = {k: v for k, v in prep.items() if k != "checked"}
        return ctx.ask(node=self.name, schema=FinalAnswer, values=values).model_dump()

    def post(self, shared: Store, prep: dict[str, Any], output: dict[str, Any]) -> str:
        shared["final_answer"] = citations_check(shared, output, checked=prep["checked"])
        shared["status"] = "completed"
        return DEFAULT

    def summary(self, prep: dict[str, Any]) -> str:
        return f"находок: {len(prep['findings'])}"


NODES: dict[str, Node] = {node.name: node for node in (Planner(), Executor(), Judge(), Finalizer())}


def notes(shared: Store) -> list[str]:
    """What a new plan should know: earlier plans, step outcomes, decisions, reviewer notes."""
    lines = [f"{h['node']}: {h['summary']}" for h in shared["execution_history"][-12:]]
    lines += [f"рецензент: {note}" for note in shared["scratchpad"]["reviewer_notes"]]
    return lines


def page_ref(hit: SearchHit) -> dict[str, Any]:
    page = hit.page
    return {
        "page_id": page.pk,
        "document": page.document.code,
        "page": page.number,
        "clauses": page.clauses,
        "replaced": hit.replaced,
    }


def page_heading(page: NormPage) -> str:
    document = page.document
    status = ""
    if document.status == NormDocument.Status.REPLACED:
        successor = document.replaced_by.code if document.replaced_by else "?"
        status = f" [заменён: действует {successor}]"
    return f"Страница {page.number} — {document.code} «{document.title}»{status}"


def page_as_text(page: NormPage) -> str:
    return f"=== {page_heading(page)} ===\n{page.text[:PAGE_TEXT_CHARS]}"


def page_image_parts(page: NormPage) -> list[dict[str, Any]]:
    """The page's heading and its image as an OpenAI vision content part (text if no image)."""
    if not page.image:
        return [{"type": "text", "text": page_as_text(page)}]
    with page.image.open("rb") as handle:
        encoded = base64.b64encode(handle.read()).decode("ascii")
    return [
        {"type": "text", "text": page_heading(page)},
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{encoded}"}},
    ]
