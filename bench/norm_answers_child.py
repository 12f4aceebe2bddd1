"""The in-process half of `bench/norm_answers.py`, which runs it as a child process with
DATABASE_URL set to the corpus's database:

    python bench/norm_answers_child.py {load,bm25,answers} --dataset DIR --questions GLOB
        --corpus {alone,mixed}

- load: the corpus's documents stored through the project's loader (`normagpt.dataset`: a
  document held already from the same file is kept; one the corpus no longer holds is
  deleted), the questions' documents resolved to their codes, and the gold clauses the
  reader did not make a clause or table of;
- bm25: every question searched the plainest way: SQLite FTS5 `bm25` over the clause
  index, the query's stems OR-ed, five clauses;
- answers: each real question's right answer, wrong value and other condition's value
  checked as the agent's finalizer checks an answer, and the whole agent run on the traps
  and a sample of real questions with a scripted model.

Prints its result as one JSON line; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.norm_answers_questions import FORMS, Question, clause_key, questions_load

OTHER_PAGES = 10_000  # the mixed corpus: at least so many pages besides the questions'
SAMPLE, SEED = 10, 49  # real questions run through the whole agent
NOT_IN_CORPUS = "в корпусе нет пункта"
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def django_setup() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


# --- load -------------------------------------------------------------------------------


def dataset_documents(directory: Path) -> dict[str, Any]:
    """The dataset's documents by code, a code read twice taken from its first file (as
    `normagpt_ingest_dataset` does)."""
    from core.exceptions import InvalidInput
    from normagpt.dataset import dataset_document_read, dataset_files

    documents: dict[str, Any] = {}
    for path in dataset_files(directory):
        try:
            document = dataset_document_read(path)
        except InvalidInput:
            continue
        documents.setdefault(document.code, document)
    return documents


def code_resolved(name: str, codes: list[str]) -> str | None:
    """The dataset's code a question names: the same code, else the one it is a prefix of."""
    from normagpt.parsing import code_key, code_matches

    same = [code for code in codes if code_key(code) == code_key(name)]
    close = [code for code in codes if code_matches(name, code)]
    return same[0] if same else close[0] if len(close) == 1 else None


def corpus_documents(
    corpus: str, documents: dict[str, Any], questions: list[Question]
) -> tuple[list[Any], dict[str, str], list[str]]:
    """The corpus's documents, each real question's document code, and the questions whose
    document the dataset lacks. The questions name their documents, and the traps those
    their confabulations cite (so that a confabulation is checked against its clause)."""
    from normagpt.claims import references_find

    codes, unresolved, cited = {}, [], []
    for q in questions:
        named = [r.document for r in references_find(q.wrong) if r.document] if q.trap else []
        for name in [q.document] if not q.trap else named:
            code = code_resolved(name, list(documents))
            if code is None:
                unresolved.append(f"{q.id} ({name})")
            elif q.trap:
                cited.append(code)
            else:
                codes[q.id] = code
    named = list(dict.fromkeys([*codes.values(), *cited]))
    wanted = [documents[code] for code in named]
    other = 0
    for code in sorted(documents) if corpus == "mixed" else []:
        if other >= OTHER_PAGES:
            break
        if code not in named:
            wanted.append(documents[code])
            other += len(documents[code].pages)
    return wanted, codes, unresolved


def load(args: argparse.Namespace) -> dict[str, Any]:
    from normagpt.dataset import dataset_document_load
    from normagpt.ingest import corpus_analyze
    from normagpt.models import NormDocument, NormPage

    questions = questions_load(args.questions)
    wanted, codes, unresolved = corpus_documents(
        args.corpus, dataset_documents(args.dataset), questions
    )
    NormDocument.objects.exclude(code__in=[d.code for d in wanted]).delete()
    loaded = 0
    for number, document in enumerate(wanted, 1):
        started = time.perf_counter()
        _, now = dataset_document_load(document=document)
        loaded += now
        if now:
            took = time.perf_counter() - started
            said = f"{len(document.pages)} pages, {took:.1f} s"
            print(f"  {number}/{len(wanted)} {document.code}: {said}", file=sys.stderr, flush=True)
    if loaded:
        corpus_analyze()  # the planner's statistics after a bulk load (PostgreSQL)
    notes = [f"document not in the dataset (or not one): {u}" for u in unresolved]
    absent = gold_absent(questions, codes)
    notes += [
        f"{q.id}: {', '.join(labels)} not read as a part of {codes[q.id]} (question's numbering?)"
        for q, labels in absent
    ]
    if not absent:
        notes.append("every gold clause or table is a part the reader made of its document")
    return {
        "pages": NormPage.objects.count(),
        "documents": len(wanted),
        "codes": codes,
        "loaded": loaded,
        "notes": notes if args.corpus == "alone" else [],
    }


def gold_absent(
    questions: list[Question], codes: dict[str, str]
) -> list[tuple[Question, list[str]]]:
    """The real questions with a gold clause or table their document has no part of."""
    from normagpt.models import NormClause

    absent = []
    for q in questions:
        if q.id not in codes:
            continue
        held = NormClause.objects.filter(document__code=codes[q.id]).values_list("kind", "number")
        keys = {clause_key(f"таблица {n}" if kind == "table" else n) for kind, n in held}
        missing = [label for label in q.clauses if clause_key(label) not in keys]
        if missing:
            absent.append((q, missing))
    return absent


# --- bm25 -------------------------------------------------------------------------------


def bm25(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every question in both forms: the five best clauses by bm25 (document, clause key),
    the best raw rank (None: no clause matched), CPU and wall ms."""
    questions = questions_load(args.questions)
    for q in questions[:10]:
        bm25_search(" ".join(q.keywords))  # the connection, the stemmer, the pages cached
    found = []
    for form in FORMS:
        for q in questions:
            text = " ".join(q.keywords) if form == "keywords" else q.question
            wall, cpu = time.perf_counter(), time.thread_time()
            top, score = bm25_search(text)
            found.append({
                "id": q.id, "form": form, "trap": q.trap, "gold": q.clauses, "top": top,
                "score": score, "cpu_ms": (time.thread_time() - cpu) * 1000,
                "wall_ms": (time.perf_counter() - wall) * 1000,
            })  # fmt: skip
    return found


def bm25_search(text: str) -> tuple[list[tuple[str, str]], float | None]:
    from normagpt.models import NormClause
    from normagpt.parsing import search_stems
    from normagpt.search_candidates import _sqlite_match_ranked

    stems = list(dict.fromkeys(search_stems(text)))
    if not stems:
        return [], None
    ranked = _sqlite_match_ranked(" OR ".join(f'"{s}"' for s in stems), None, 5)
    clauses = NormClause.objects.select_related("document").in_bulk([pk for _, pk in ranked])
    top = [(clauses[pk].document.code, clause_of(clauses[pk])) for _, pk in ranked]
    return top, (ranked[0][0] if ranked else None)


def clause_of(clause: Any) -> str:
    if not clause.number:
        return ""
    return clause_key(f"таблица {clause.number}" if clause.kind == "table" else clause.number)


# --- answers ----------------------------------------------------------------------------


def answers(args: argparse.Namespace) -> dict[str, Any]:
    from normagpt.models import AgentRun

    AgentRun.objects.all().delete()  # the runs of an earlier bench on this cached corpus
    questions = questions_load(args.questions)
    real = [q for q in questions if not q.trap]
    checks = [claim_check(q, kind, text) for q in real for kind, text in claims_of(q) if text]
    sample = sorted(random.Random(SEED).sample(range(len(real)), min(SAMPLE, len(real))))
    runs = agent_runs([q for q in questions if q.trap] + [real[i] for i in sample])
    return {"checks": checks, "agent": runs}


def claims_of(q: Question) -> list[tuple[str, str]]:
    return [("answer", q.answer), ("wrong", q.wrong), ("other", other_claim(q))]


def other_claim(q: Question) -> str:
    """The other condition's value said of the asked condition: `other` as written when it
    cites a clause, else the right answer with its value replaced by `other`."""
    from normagpt.claims import references_find

    if not q.other or references_find(q.other):
        return q.other
    if q.value and q.value in q.answer:
        return q.answer.replace(q.value, q.other, 1)
    said, other = _NUMBER.findall(q.value), _NUMBER.findall(q.other)
    if said and other and said[0] in q.answer:
        return re.sub(rf"(?<![\d,.]){re.escape(said[0])}(?![\d,])", other[0], q.answer, count=1)
    return ""


def claim_check(q: Question, kind: str, text: str) -> dict[str, Any]:
    """`text` checked as the finalizer checks an answer (`citations_check`): with no sources
    and no pages retrieved, its references name their documents. Right when the right answer
    has every claim confirmed, or another has a claim unconfirmed."""
    from normagpt.verification import Checker

    results = Checker(sources=[], pages=[]).answer(text)
    confirmed = bool(results) and all(r.confirmed for r in results)
    ok = confirmed if kind == "answer" else any(not r.confirmed for r in results)
    said = [{"verdict": r.verdict, "reason": r.reason} for r in results]
    return {"id": q.id, "kind": kind, "claim": text, "ok": ok, "results": said}


class Reader:
    """The scripted model's four nodes for the run in progress (runs go one at a time): the
    planner searches with the question's keywords, the executor quotes the top page's
    answering clause (its first clause when none answers), the judge finalizes, the
    finalizer writes the question's right answer, or a trap's confabulation."""

    def __init__(self) -> None:
        self.question: Question | None = None
        self.finding: tuple[str, str, int] | None = None

    def script(self) -> dict[str, list[Any]]:
        from tests.normagpt.scripted_llm import verdict

        return {
            "planner": [self.planner],
            "executor": [self.executor],
            "judge": [lambda call: verdict("FINALIZE")],
            "finalizer": [self.finalizer],
        }

    def planner(self, call: Any) -> str:
        from tests.normagpt.scripted_llm import plan

        q = self._question()
        return plan((q.question[:500], q.keywords[:12], []), goal=q.question[:1000])

    def executor(self, call: Any) -> str:
        from django.db import connection

        try:
            return self._read(call)
        finally:
            connection.close()  # this request's thread ends: its connection goes with it

    def _read(self, call: Any) -> str:
        from bench.norm_agent import _SHOWN, _prompt
        from tests.normagpt.scripted_llm import step

        shown = _SHOWN.findall(_prompt(call))
        clause = self._clause(shown[0][1], int(shown[0][0])) if shown else None
        if clause is None:
            return step(summary="На показанных страницах пунктов нет.")
        label = f"табл. {clause.number}" if clause.kind == "table" else clause.number
        self.finding = (clause.document.code, label, clause.page.number)
        body = re.sub(r"^\S+\s+", "", clause.text.strip(), count=1)
        return step((*self.finding, body.split(". ")[0][:300]), summary="Найдено требование.")

    def _clause(self, code: str, page: int) -> Any:
        from normagpt.models import NormClause

        clauses = list(
            NormClause.objects.filter(document__code=code, page__number=page, amendment=None)
            .exclude(number="")
            .select_related("document", "page")
            .order_by("position")
        )
        gold = self._question().gold
        return next((c for c in clauses if clause_of(c) in gold), clauses[0] if clauses else None)

    def finalizer(self, call: Any) -> str:
        from tests.normagpt.scripted_llm import final

        q = self._question()
        text = q.wrong if q.trap else q.answer
        return final(text, *([self.finding] if self.finding else []), conditions=[])

    def _question(self) -> Question:
        assert self.question is not None
        return self.question


def agent_runs(questions: list[Question]) -> list[dict[str, Any]]:
    """Each question through the whole agent, in process, with the scripted `Reader`."""
    from django.conf import settings

    from core import background
    from normagpt import services
    from tests.normagpt.scripted_llm import ScriptedLLM

    reader = Reader()
    llm = ScriptedLLM(reader.script())
    settings.OPENAI_BASE_URL = llm.base_url
    settings.OPENAI_API_KEY = "bench"
    runs = []
    try:
        for q in questions:
            reader.question, reader.finding = q, None
            with background.using_broker(False):
                run = services.run_create(question=q.question)
                background.drain()
            run.refresh_from_db()
            verdicts = list(run.checks.filter(origin="answer").values_list("verdict", flat=True))
            runs.append({
                "id": q.id, "trap": q.trap, "status": run.status, "answer": run.final_answer,
                "not_in_corpus": NOT_IN_CORPUS in run.final_answer.lower(),
                "confirmed_any": "confirmed" in verdicts,
                "confirmed_all": bool(verdicts) and set(verdicts) == {"confirmed"}
                and not run.incomplete,
            })  # fmt: skip
    finally:
        llm.close()
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["load", "bm25", "answers"])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--corpus", choices=["alone", "mixed"], default="alone")
    args = parser.parse_args()
    django_setup()
    result = {"load": load, "bm25": bm25, "answers": answers}[args.mode](args)
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
