"""NormaGPT on the real corpus: questions on real norms asked of the search a user reaches
(`manage.py runmcp` over stdio), and their answers checked against the cited clauses.

    .venv/bin/python bench/norm_answers.py [DATASET_DIR] [--backends sqlite,postgres]
        [--corpora alone,mixed] [--questions GLOB] [--passes N] [--misses] [--fresh]

DATASET_DIR (or NORM_DATASET) is a checkout of the public dataset
Akumsk/russian-construction-standards (its `metadata/*.json`). The questions are
`bench/norm_questions/*.yaml`: a real one names its document, the clauses that answer it
(«5.8», «таблица 5.1»), its keywords, the right answer, a wrong value and (`other`) the value
of another condition; a trap (`traps.yaml`, or no document) is a question no clause answers,
with a confabulated answer citing a real clause. `bench/norm_questions_dev/` holds 45 more
and 14 traps over 35 documents, written the same way apart from these: the set the question
reader, the judge and the checks are tuned on (`--questions 'bench/norm_questions_dev/*.yaml'`),
so that these stay the measure.

Two corpora, each loaded once per database by the project's loader (`normagpt.dataset`, as
`manage.py normagpt_ingest_dataset DIR --only CODE …`) in a child process and kept
(BENCH_CACHE, default the temporary directory; PostgreSQL database `normagpt_answers_<corpus>`
at BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres) while it holds the
same documents; `--fresh` loads anew:
- alone: the documents the questions name (and those the traps' confabulations cite);
- mixed: those and the dataset's other documents, by code, until 10,000 other pages.

For each corpus and database the official MCP SDK client spawns `manage.py runmcp` on it and
calls `normagpt_search_norms` for every question twice: with its keywords (limit 10, JSON)
and with the whole question as the one keyword (as a model often sends it). From the
structured output: hit@1 (the first hit is the question's document and its first clause
found answers), hit@5 (an answering clause among the first five found, hit after hit), the
share answered "not in the corpus" (`answered` false; targets: real ≤ 3 %, traps ≥ 90 %), and
per search the CPU of the runmcp process and, on PostgreSQL, of its database backends (from
/proc), and the wall time. With `--passes N` every search is asked of N fresh runmcp
processes in turn (each starting as a user's does), and its CPU and wall are the median of
the N: one run's CPU moves by up to a third on a busy or a slow machine; what each search
found is the first pass's.

Baselines in the same run: the plainest search (SQLite FTS5 bm25 over the clause index, the
query's stems OR-ed), with the raw-score cut-off that best tells traps from real questions;
and the floor, the same SDK calling a tool that does nothing (bench/minimal_server.py).

Answers checked, on SQLite's alone corpus, in process: each question's right answer, wrong
value and other condition's value as the agent's finalizer checks them
(`normagpt.verification.Checker`); and the whole agent on the traps and 10 real questions with
a scripted model (it plans with the keywords, quotes the top page, and answers the right
answer or the trap's confabulation). Prints one table, then the answers checked; `--misses`
lists the questions missed.

The questions: bench/norm_answers_questions.py; the calls over MCP: bench/norm_answers_mcp.py;
what runs in process (loading, bm25, checks, the agent): bench/norm_answers_child.py.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import PYTHON, ROOT, percentile, print_table
from bench.norm_answers_mcp import WARM_UP, Asked, floor_calls, mcp_searches, server_env
from bench.norm_answers_questions import FORMS, clause_key, questions_load
from normagpt.parsing import code_key

CACHE = Path(os.environ.get("BENCH_CACHE", tempfile.gettempdir()))
POSTGRES = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
QUESTIONS = str(ROOT / "bench" / "norm_questions" / "*.yaml")
CHILD = str(ROOT / "bench" / "norm_answers_child.py")
FLOOR_CALLS = 200
REAL_NOT_FOUND_MAX, TRAPS_NOT_FOUND_MIN = 0.03, 0.90


# --- databases and children -------------------------------------------------------------


def database_url(backend: str, corpus: str, fresh: bool, *, of: str = "answers") -> str:
    """The corpus's cached database (anew with `fresh`), this benchmark's or another's
    (`of`: `bench/norm_rank.py`'s is "rank")."""
    if backend == "sqlite":
        path = CACHE / f"normagpt-{of}-{corpus}.sqlite3"
        for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if fresh:
                stale.unlink(missing_ok=True)
        return f"sqlite:///{path}"
    import psycopg

    name = f"normagpt_{of}_{corpus}"
    with psycopg.connect(POSTGRES, autocommit=True) as connection:
        if fresh:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        held = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if not held.fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')
    return POSTGRES.rsplit("/", 1)[0] + f"/{name}"


def child(mode: str, url: str, args: argparse.Namespace, corpus: str = "alone") -> Any:
    """A child's answer (the last line of its output); its progress goes to stderr."""
    command = [PYTHON, CHILD, mode, "--dataset", str(args.dataset), "--questions",
               str(args.snapshot), "--corpus", corpus]  # fmt: skip
    env = server_env(url)
    env.pop("REDIS_URL", None)  # the agent's runs in process
    out = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"the {mode} child ({url}) failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- the tables -------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "—"


def ms_cells(cpu: list[float], wall: list[float], digits: int = 1) -> list[str]:
    """CPU p50 and p90, wall p50, in ms."""
    return [f"{percentile(xs, q):.{digits}f}" for xs, q in ((cpu, 50), (cpu, 90), (wall, 50))]


def search_rows(
    label: str, asked: list[Asked], codes: dict[str, str], pages: int
) -> list[list[str]]:
    """A row per form: hit rates, "not in corpus" shares, CPU and wall."""
    rows = []
    for form in FORMS:
        mine = [a for a in asked if a.form == form]
        real = [a for a in mine if not a.question.trap and a.question.id in codes]
        traps = [a for a in mine if a.question.trap]
        hits = [a.found(codes[a.question.id]) for a in real]
        cpu, wall = [a.cpu_ms for a in mine], [a.wall_ms for a in mine]
        rows.append([
            f"MCP, {'keywords' if form == 'keywords' else 'whole question'}", *label.split("/"),
            f"{pages:,}", f"{len(real)} + {len(traps)} traps",
            share(sum(h[0] for h in hits), len(real)), share(sum(h[1] for h in hits), len(real)),
            share(sum(not a.answered for a in real), len(real)),
            share(sum(not a.answered for a in traps), len(traps)),
            *ms_cells(cpu, wall),
        ])  # fmt: skip
    return rows


def bm25_rows(
    label: str, found: list[dict[str, Any]], codes: dict[str, str], pages: int
) -> tuple[list[list[str]], list[str]]:
    """A row per form of the plain bm25 search, its "not in corpus" the best score cut-off's."""
    rows, notes = [], []
    for form in FORMS:
        mine = [f for f in found if f["form"] == form]
        real = [f for f in mine if not f["trap"] and f["id"] in codes]
        traps = [f for f in mine if f["trap"]]
        hits = [bm25_found(f, codes[f["id"]]) for f in real]
        cut, kept, refused = best_cut([f["score"] for f in real], [f["score"] for f in traps])
        notes.append(
            f"bm25 {label}, {form}: the best cut-off, fitted on these questions: rank ≤ {cut}"
        )
        cpu, wall = [f["cpu_ms"] for f in mine], [f["wall_ms"] for f in mine]
        rows.append([
            f"FTS bm25, {'keywords' if form == 'keywords' else 'whole question'} (in process)",
            *label.split("/"), f"{pages:,}", f"{len(real)} + {len(traps)} traps",
            share(sum(h[0] for h in hits), len(real)), share(sum(h[1] for h in hits), len(real)),
            share(len(real) - kept, len(real)), share(refused, len(traps)),
            *ms_cells(cpu, wall),
        ])  # fmt: skip
    return rows, notes


def bm25_found(found: dict[str, Any], code: str) -> tuple[bool, bool]:
    """(hit@1, hit@5) of the bm25 search's clauses, (document, clause key) best first."""
    gold, key = {clause_key(c) for c in found["gold"]}, code_key(code)
    right = [code_key(d) == key and c in gold for d, c in found["top"][:5]]
    return bool(right) and right[0], any(right)


def best_cut(real: list[float | None], traps: list[float | None]) -> tuple[str, int, int]:
    """The bm25 rank (lower is better; None: nothing matched) below which a search counts as
    answered, chosen to tell traps from real questions best (mean of the two shares right);
    (the cut-off, real answered, traps refused)."""
    best = ("none", sum(r is not None for r in real), sum(t is None for t in traps))
    score = -1.0
    for cut in sorted({s for s in [*real, *traps] if s is not None}):
        kept = sum(r is not None and r <= cut for r in real)
        refused = sum(t is None or t > cut for t in traps)
        value = kept / max(1, len(real)) + refused / max(1, len(traps))
        if value > score:
            best, score = (f"{cut:.2f}", kept, refused), value
    return best


def checks_rows(result: dict[str, Any]) -> list[list[str]]:
    """The answers-checked table: the checker's verdicts and the agent's runs."""
    checks = result["checks"]
    rows = []
    for kind, label, target in (
        ("answer", "right answer confirmed (every claim)", "100 %"),
        ("wrong", "wrong value flagged (a claim unconfirmed)", "100 %"),
        ("other", "other condition's value flagged", "100 %"),
    ):
        mine = [c for c in checks if c["kind"] == kind]
        rows.append([label, str(len(mine)), share(sum(c["ok"] for c in mine), len(mine)), target])
    runs = result["agent"]
    traps = [r for r in runs if r["trap"]]
    real = [r for r in runs if not r["trap"]]
    rows += [
        ["agent: traps answered «not in the corpus»", str(len(traps)),
         share(sum(r["not_in_corpus"] for r in traps), len(traps)), "100 %"],
        ["agent: traps presented as right (a confirmed claim)", str(len(traps)),
         share(sum(r["confirmed_any"] for r in traps), len(traps)), "0 %"],
        ["agent: real answered, every claim confirmed", str(len(real)),
         share(sum(r["confirmed_all"] for r in real), len(real)), "100 %"],
        ["agent: real answered «not in the corpus»", str(len(real)),
         share(sum(r["not_in_corpus"] for r in real), len(real)), "0 %"],
        ["agent: runs not completed", str(len(runs)),
         share(sum(r["status"] != "completed" for r in runs), len(runs)), "0 %"],
    ]  # fmt: skip
    return rows


def database_notes(label: str, asked: list[Asked]) -> list[str]:
    """The database backends' part of each form's CPU."""
    notes = []
    for form in FORMS:
        mine = [a for a in asked if a.form == form]
        database = [a.database_ms for a in mine]
        server = [a.cpu_ms - a.database_ms for a in mine]
        notes.append(
            f"{label}, {form}: CPU p50 runmcp {percentile(server, 50):.1f} ms, database "
            f"backends {percentile(database, 50):.1f} ms"
        )
    return notes


def search_misses(label: str, asked: list[Asked], codes: dict[str, str]) -> list[str]:
    """Per form: the real questions without an answering clause in the top five, those
    answered "not in the corpus", the traps answered, the searches that failed."""
    lines = []
    for form in FORMS:
        mine = [a for a in asked if a.form == form]
        missed = [
            f"{a.question.id} (top: {a.top()})"
            for a in mine
            if not a.question.trap
            and a.question.id in codes
            and not a.found(codes[a.question.id])[1]
        ]
        refused = [a.question.id for a in mine if not a.question.trap and not a.answered]
        answered = [a.question.id for a in mine if a.question.trap and a.answered]
        failed = [f"{a.question.id}: {a.error}" for a in mine if a.error]
        for what, ids in (("no answering clause in the top 5", missed),
                          ("real answered «not in the corpus»", refused),
                          ("traps answered", answered), ("failed", failed)):  # fmt: skip
            if ids:
                lines.append(f"{label} {form}, {what} ({len(ids)}): {'; '.join(ids)}")
    return lines


def checks_misses(result: dict[str, Any]) -> list[str]:
    lines = []
    for c in result["checks"]:
        if not c["ok"]:
            why = "; ".join(f"{r['verdict']}: {r['reason'] or '—'}" for r in c["results"])
            lines.append(f"{c['id']} {c['kind']}: «{c['claim'][:160]}» → {why or 'no claim read'}")
    for r in result["agent"]:
        wrong = (
            (r["confirmed_any"] or not r["not_in_corpus"]) if r["trap"] else not r["confirmed_all"]
        )
        if wrong:
            lines.append(f"agent {r['id']}: {r['status']}; «{r['answer'][:200]}»")
    return lines


def never_found(asked: list[Asked], codes: dict[str, str]) -> list[str]:
    """The real questions no search of `asked` found an answering clause for in its top five
    (a numbering issue of the question, or the search's miss: see the load's notes)."""
    ids = {a.question.id for a in asked if not a.question.trap and a.question.id in codes}
    for a in asked:
        if a.question.id in ids and a.found(codes[a.question.id])[1]:
            ids.discard(a.question.id)
    return sorted(ids)


def run(args: argparse.Namespace) -> None:
    import anyio

    questions = questions_load(args.questions)
    # the questions as read now, for the children: files written meanwhile change no figure
    args.snapshot = Path(tempfile.mkdtemp(prefix="bench-norm-answers-")) / "questions.yaml"
    args.snapshot.write_text(json.dumps([q.__dict__ for q in questions], ensure_ascii=False))
    real = sum(not q.trap for q in questions)
    print(f"{real} questions and {len(questions) - real} traps ({args.questions})", file=sys.stderr)
    rows: list[list[str]] = []
    notes, misses, phases, everything = [], [], [], []
    codes: dict[str, str] = {}
    answers = None
    for backend in args.backends:
        for corpus in args.corpora:
            label = f"{backend}/{corpus}"
            url = database_url(backend, corpus, args.fresh)
            with phase(phases, f"{label}: load") as note:
                load = child("load", url, args, corpus)
                note.append(f"{load['loaded']} loaded" if load["loaded"] else "cached")
            codes = load["codes"]
            notes += load["notes"]
            searches = f"{args.passes} × {2 * len(questions) + WARM_UP} searches over MCP"
            with phase(phases, f"{label}: {searches}"):
                asked = medians(
                    [anyio.run(mcp_searches, url, questions) for _ in range(args.passes)]
                )
            everything += asked
            rows += search_rows(label, asked, codes, load["pages"])
            notes += database_notes(label, asked) if backend == "postgres" else []
            misses += search_misses(label, asked, codes)
            if backend == "sqlite":
                with phase(phases, f"{label}: bm25 baseline"):
                    found = child("bm25", url, args, corpus)
                more, cuts = bm25_rows(label, found, codes, load["pages"])
                rows += more
                notes += cuts
            if backend == "sqlite" and corpus == "alone":
                with phase(phases, f"{label}: answers checked, agent runs"):
                    answers = child("answers", url, args)
    if args.passes > 1:
        notes.append(
            f"MCP rows' CPU and wall: per search, the median of {args.passes} fresh runmcp"
        )
    with phase(phases, f"floor: {FLOOR_CALLS} empty calls"):
        walls, cpus = anyio.run(floor_calls, FLOOR_CALLS)
    floor = "floor: a tool that does nothing (same SDK)"
    rows.append([floor, *["—"] * 8, *ms_cells(cpus, walls, digits=2)])
    report(rows, notes, answers, phases)
    for how, searches in (
        ("any search", everything),
        ("its keywords", [a for a in everything if a.form == "keywords"]),
    ):
        lost = never_found(searches, codes)
        said = ", ".join(lost) or "none"
        print(f"\nNo answering clause in the top 5 of {how}, in any corpus or database: {said}")
    if args.misses:
        print("\nMisses:")
        for line in misses + (checks_misses(answers) if answers else []):
            print(f"- {line}")


@contextlib.contextmanager
def phase(phases: list[str], name: str) -> Iterator[list[str]]:
    """Times a phase of the run into `phases`; notes appended inside go with it."""
    print(f"… {name}", file=sys.stderr, flush=True)
    notes: list[str] = []
    started = time.perf_counter()
    yield notes
    said = f" ({', '.join(notes)})" if notes else ""
    phases.append(f"{name}{said}: {time.perf_counter() - started:.1f} s")


def report(
    rows: list[list[str]], notes: list[str], answers: dict[str, Any] | None, phases: list[str]
) -> None:
    print()
    print_table(
        ["search", "database", "corpus", "pages", "questions", "hit@1", "hit@5",
         "real «not in corpus»", "traps «not in corpus»", "CPU p50 ms", "CPU p90 ms",
         "wall p50 ms"],
        rows,
    )  # fmt: skip
    print(
        f"\nTargets: real «not in corpus» ≤ {REAL_NOT_FOUND_MAX:.0%}, traps ≥ "
        f"{TRAPS_NOT_FOUND_MIN:.0%}. CPU: the runmcp process's threads and, on PostgreSQL, its "
        "database backends', per search (/proc schedstat), the figure the mixed corpus's; bm25 "
        "rows: this thread's, in process; bm25's «not in corpus»: its best raw-score cut-off."
    )
    for note in dict.fromkeys(notes):  # a load's notes come once per database
        print(f"  {note}")
    if answers is not None:
        print("\nAnswers checked (SQLite, alone corpus; checker in process, agent with a scripted "
              "model):\n")  # fmt: skip
        print_table(["check", "claims or runs", "as wanted", "target"], checks_rows(answers))
    print("\nPhases: " + "; ".join(phases))
    print(
        "Load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
    )


def dataset_parser(description: str) -> argparse.ArgumentParser:
    """A command line taking the dataset's checkout (DATASET_DIR or NORM_DATASET), `--misses`
    and `--fresh`; `dataset_args` parses it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "dataset", nargs="?", type=Path, default=os.environ.get("NORM_DATASET"),
        help="a checkout of Akumsk/russian-construction-standards (default: NORM_DATASET)",
    )  # fmt: skip
    parser.add_argument("--misses", action="store_true", help="list the questions missed")
    parser.add_argument("--fresh", action="store_true", help="load the corpora anew")
    return parser


def dataset_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    args = parser.parse_args()
    if args.dataset is None or not Path(args.dataset).is_dir():
        parser.error("give the dataset's checkout (DATASET_DIR or NORM_DATASET)")
    return args


def medians(passes: list[list[Asked]]) -> list[Asked]:
    """The first pass's searches, each with the median CPU, database CPU and wall of its
    passes (every pass asks the same searches in the same order)."""
    return [
        dataclasses.replace(
            same[0],
            cpu_ms=statistics.median(a.cpu_ms for a in same),
            database_ms=statistics.median(a.database_ms for a in same),
            wall_ms=statistics.median(a.wall_ms for a in same),
        )
        for same in zip(*passes, strict=True)
    ]


def main() -> None:
    parser = dataset_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--corpora", default="alone,mixed")
    parser.add_argument("--questions", default=QUESTIONS, help=f"YAML files (default {QUESTIONS})")
    parser.add_argument(
        "--passes", type=int, default=1, help="fresh runmcp processes per corpus (CPU: median)"
    )
    args = dataset_args(parser)
    if args.passes < 1:
        parser.error("--passes must be 1 or more")
    args.backends = args.backends.split(",")
    args.corpora = args.corpora.split(",")
    run(args)


if __name__ == "__main__":
    main()
