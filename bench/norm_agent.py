"""End-to-end runs of the agent on the benchmark's questions, with a model that reads.

The model is scripted (the tests' OpenAI-compatible server) but answers from what the agent
shows it, as a real model must: the planner searches with the question's keywords; the
executor looks through the pages it is shown for a clause that states the asked fact and
quotes it (nothing found: it says so); the finalizer answers from that quote, citing the
clause. Three manners:

- `right`: states the value the clause holds;
- `wrong`: cites the same clause but states another value the field uses (a model that
  misreads, or remembers another edition);
- `confabulate` (traps, whose condition no clause states): takes the nearest clause that
  sets the asked quantity for another condition and states its value for the asked one.

A trap asked of the `right` model is answered "not found" unless it finds a clause that
states it (there is none). Counted: right answers with every claim confirmed, right
answers marked unconfirmed (false alarms), wrong values that pass as confirmed, traps
answered "not found", confabulations caught (the run `incomplete`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bench.norm_corpus import domains_load
from bench.norm_corpus_records import BOUND, Question
from tests.normagpt.scripted_llm import Call, ScriptedLLM, final, plan, step, verdict

_SHOWN = re.compile(r"=== Страница (\d+) — (.+?) «")
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[А-ЯЁA-Z«(])")
NOT_FOUND = "В найденных нормах требование для этого случая не найдено."


@dataclass
class Turn:
    question: Question
    manner: str  # right | wrong | confabulate
    finding: dict[str, Any] | None = None
    answer: str = ""
    notes: list[str] = field(default_factory=list)


class ReadingModel:
    """The four nodes' replies for the run in progress (runs go one at a time)."""

    def __init__(self) -> None:
        self.turn: Turn | None = None
        self.domains = {d["domain"]: d for d in domains_load()}

    def script(self) -> dict[str, list[Any]]:
        return {
            "planner": [self.planner],
            "executor": [self.executor],
            "judge": [lambda call: verdict("FINALIZE")],
            "finalizer": [self.finalizer],
        }

    def planner(self, call: Call) -> str:
        q = self._turn().question
        return plan((q.text, q.keywords, q.expected_documents), goal=q.text)

    def executor(self, call: Call) -> str:
        from django.db import connection

        try:
            return self._read(call)
        finally:
            connection.close()  # this request's thread ends: its connection goes back

    def _read(self, call: Call) -> str:
        turn = self._turn()
        shown = _SHOWN.findall(_prompt(call))
        clause = None
        for number, code in shown:
            clause = self._answering(turn, code, int(number))
            if clause is not None:
                break
        if clause is None:
            return step(summary="На показанных страницах требования нет.")
        quote = _quote(turn, clause)
        cited = f"табл. {clause.number}" if clause.kind == "table" else clause.number
        code = clause.document.code
        turn.finding = {"document": code, "clause": cited, "page": clause.page.number}
        turn.answer = self._answer(turn, clause, quote)
        return step((code, cited, clause.page.number, quote), summary="Найдено требование.")

    def finalizer(self, call: Call) -> str:
        turn = self._turn()
        if turn.finding is None or not turn.answer:
            return final(NOT_FOUND, conditions=[])
        f = turn.finding
        return final(turn.answer, (f["document"], f["clause"], f["page"]), conditions=[])

    # --- reading ---------------------------------------------------------------------------

    def _turn(self) -> Turn:
        assert self.turn is not None
        return self.turn

    def _answering(self, turn: Turn, code: str, page: int) -> Any:
        """The first clause of the shown page that states what the turn asks (or, for a
        confabulation, that sets the asked quantity at all)."""
        from normagpt.models import NormClause

        q = turn.question
        clauses = NormClause.objects.filter(document__code=code, page__number=page)
        for clause in clauses.select_related("document", "page").order_by("position"):
            if turn.manner == "confabulate":
                if clause.kind == "clause" and _value_sentence(q, clause.text, any_value=True):
                    return clause
            elif q.answered_by(code, clause.kind, clause.number, clause.text):
                return clause
        return None

    def _answer(self, turn: Turn, clause: Any, quote: str) -> str:
        q = turn.question
        code = clause.document.code
        if clause.kind == "table":
            label = q.condition_text
            title = clause.text.split("\n", 1)[0]
            unit = title.rsplit(",", 1)[1].strip() if "," in title else ""
            value = self._value(turn, q.fact.value if q.fact else "")
            return (
                f"По табл. {clause.number} {code} для условия «{label}» принимают "
                f"{value} {unit}.".replace(" .", ".")
            )
        if _paraphrases(q) and q.subject:
            return self._paraphrase(turn, clause, quote)
        sentence = quote.rstrip(".")
        if turn.manner == "confabulate":
            sentence = self._moved(turn, sentence)
        elif turn.manner == "wrong":
            held = q.fact.value if q.fact else ""
            other = self._value(turn, held)
            if not held or held not in sentence or other == held:
                return ""
            sentence = re.sub(rf"(?<![\d,]){re.escape(held)}(?![\d,])", other, sentence)
        return f"{sentence} (п. {clause.number} {code})."

    def _paraphrase(self, turn: Turn, clause: Any, quote: str) -> str:
        """The answer in the question's words (its subject and condition as asked), the value
        and unit from the clause, as a model writes it."""
        q = turn.question
        unit = str(q.prop.get("unit", ""))
        found = [
            str(v)
            for v in q.prop.get("values", [])
            if re.search(rf"(?<![\d,]){re.escape(str(v))}(?![\d,])\s*{re.escape(unit)}", quote)
        ]
        held = q.fact.value if q.fact else (found[0] if found else "")
        if not held:
            return ""
        value = self._value(turn, held)
        if turn.manner == "wrong" and value == held:
            return ""
        bound = BOUND.get(q.prop.get("bound", "exact"), "")
        name = q.prop["nom"][0].upper() + q.prop["nom"][1:]
        said = " ".join(f"{bound} {value} {unit}".split())
        return (
            f"{name} для {q.subject['gen_pl']} {q.condition_ask} — {said} "
            f"(п. {clause.number} {clause.document.code})."
        )

    def _value(self, turn: Turn, held: str) -> str:
        """`held`, or for a wrong answer another value the field uses for it."""
        if turn.manner != "wrong" or not turn.question.fact:
            return held
        q = turn.question
        domain = self.domains[q.fact.key.domain]
        if q.kind == "table":
            title = q.fact.key.prop.removeprefix("table:")
            table = next(t for t in domain["tables"] if t["title"] == title)
            values = [" ".join(str(v) for v in row[1:]) for row in table["rows"]]
        else:
            values = [str(v) for v in q.prop.get("values", [])]
        others = [v for v in values if v != held and not _same_numbers(v, held)]
        return others[len(held) % len(others)] if others else held

    def _moved(self, turn: Turn, sentence: str) -> str:
        """The sentence said of the trap's condition instead of the one it states."""
        q = turn.question
        domain = next(d for d in self.domains.values() if q.prop in d["properties"])
        for condition in domain["conditions"]:
            if condition["text"] in sentence:
                return sentence.replace(condition["text"], q.condition_text)
        return f"{sentence} {q.condition_text}"


def _paraphrases(q: Question) -> bool:
    """Half the answers are in the question's words, half the clause's (seeded by the
    question)."""
    return sum(map(ord, q.text)) % 2 == 0


def _prompt(call: Call) -> str:
    parts = []
    for message in call.messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def _same_numbers(a: str, b: str) -> bool:
    return re.findall(r"\d+(?:,\d+)?", a) == re.findall(r"\d+(?:,\d+)?", b)


def _value_sentence(q: Question, text: str, *, any_value: bool = False) -> str:
    """The sentence of `text` that states the asked value (or, `any_value`, any value of the
    asked quantity with its unit)."""
    body = re.sub(r"^\S+\s+", "", text.strip(), count=1)  # the clause's number
    values = [str(v) for v in q.prop.get("values", [])] if any_value else []
    if q.fact and not any_value:
        values = [q.fact.value]
    unit = re.escape(str(q.prop.get("unit", "")))
    for sentence in _SENTENCE.split(body):
        for value in values:
            if re.search(rf"(?<![\d,]){re.escape(value)}(?![\d,])\s*{unit}", sentence):
                return sentence.strip()
    return ""


def _quote(turn: Turn, clause: Any) -> str:
    q = turn.question
    if clause.kind == "table":
        label = q.condition_text
        row = next((line for line in clause.text.splitlines() if label in line), "")
        return " ".join(row.split())
    found = _value_sentence(q, clause.text, any_value=turn.manner == "confabulate")
    if found:
        return found
    body = re.sub(r"^\S+\s+", "", clause.text.strip(), count=1)
    return _SENTENCE.split(body)[0].strip()


def agent_runs(questions: list[Question]) -> dict[str, Any]:
    """Every question through the whole agent, in process, with the reading model."""
    from django.conf import settings

    model = ReadingModel()
    llm = ScriptedLLM(model.script())
    settings.OPENAI_BASE_URL = llm.base_url
    settings.OPENAI_API_KEY = "bench"
    tally = _Tally(model)
    try:
        for q in questions:
            if q.kind == "trap":
                tally.trap(q)
            else:
                tally.answerable(q)
    finally:
        llm.close()
    return {**tally.outcomes, "examples": tally.examples[:12]}


class _Tally:
    """The agent's runs on the questions, counted by outcome, with examples of its misses."""

    def __init__(self, model: ReadingModel) -> None:
        self.model = model
        self.outcomes: dict[str, int] = dict.fromkeys(
            ("answerable", "confirmed", "false_alarms", "unfound", "wrong", "wrong_passed",
             "traps", "traps_not_found", "confabulations", "confabulations_caught",
             "not_completed"), 0,
        )  # fmt: skip
        self.examples: list[str] = []

    def ask(self, q: Question, manner: str) -> tuple[Turn, Any]:
        from core import background
        from normagpt import services

        turn = Turn(q, manner)
        self.model.turn = turn
        with background.using_broker(False):
            run = services.run_create(question=q.text)
            background.drain()
        run.refresh_from_db()
        self.outcomes["not_completed"] += run.status != "completed"
        return turn, run

    def trap(self, q: Question) -> None:
        """A trap asked twice: the model finds nothing, and the model confabulates."""
        outcomes = self.outcomes
        outcomes["traps"] += 1
        turn, run = self.ask(q, "right")
        outcomes["traps_not_found"] += not _confirmed(run)
        outcomes["confabulations"] += 1
        turn, run = self.ask(q, "confabulate")
        caught = run.incomplete or not _confirmed(run)
        outcomes["confabulations_caught"] += caught
        if not caught:
            self.examples.append(f"confabulation passed: {turn.answer}")

    def answerable(self, q: Question) -> None:
        """A question with an answer asked twice: the model states the right value, and
        (where there is one) a wrong one."""
        outcomes = self.outcomes
        outcomes["answerable"] += 1
        turn, run = self.ask(q, "right")
        if turn.finding is None:
            outcomes["unfound"] += 1
            return
        if _confirmed(run) and not run.incomplete:
            outcomes["confirmed"] += 1
        else:
            outcomes["false_alarms"] += 1
            why = run.checks.exclude(verdict="confirmed").values_list("reason", flat=True)
            self.examples.append(f"false alarm: {turn.answer} → {'; '.join(why)}")
        turn, run = self.ask(q, "wrong")
        if not turn.answer:
            return  # no other value to state
        outcomes["wrong"] += 1
        if not run.incomplete:
            outcomes["wrong_passed"] += 1
            self.examples.append(f"wrong passed: {turn.answer}")


def _confirmed(run: Any) -> bool:
    """The run states something every check of which is confirmed."""
    checks = list(run.checks.filter(origin="answer").values_list("verdict", flat=True))
    return bool(checks) and all(v == "confirmed" for v in checks)
