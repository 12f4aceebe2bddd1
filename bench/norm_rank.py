"""NormaGPT's search on the real corpus, every question set at once, in process: the table
to tune ranking and the "not in the corpus" judgement by (`bench/norm_answers.py` is the
measure: through MCP stdio, on SQLite and PostgreSQL, with the answers checked).

    .venv/bin/python bench/norm_rank.py [DATASET_DIR] [--sets benchmark,dev,dev2,holdout,holdout2]
        [--database sqlite|postgres] [--misses] [--fresh]

One corpus (on SQLite in BENCH_CACHE, default the temporary directory:
`normagpt-rank-mixed.sqlite3`; on PostgreSQL the database `normagpt_rank_mixed` of
BENCH_POSTGRES_URL's server; kept while it holds the same documents) is loaded by the
project's loader, as `bench/norm_answers.py` loads its mixed corpus: the documents every set's
questions name (and those the traps' confabulations cite), mixed with the dataset's other
documents until 10,000 other pages. Each set's questions are searched the way the tool
`normagpt_search_norms` searches (`services.pages_search`, then the tool's own structured
result), with their keywords (limit 10) and with the whole question as the one keyword.

Per set and form: hit@1, hit@5 (as `bench/norm_answers.py` counts them), real questions
answered "not in the corpus" (target ≤ 3 %), traps answered so (target ≥ 90 %), and this
thread's CPU per search (p50; in process, no transport: the MCP figure is the measure).
`--misses` lists, per set, the real questions whose first hit is not their clause and the
traps answered as found.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, percentile, print_table
from bench.norm_answers import (
    REAL_NOT_FOUND_MAX,
    TRAPS_NOT_FOUND_MIN,
    database_url,
    dataset_args,
    dataset_parser,
    share,
)
from bench.norm_answers_mcp import Asked
from bench.norm_answers_questions import FORMS, Question, clause_key, questions_load

CACHE = Path(os.environ.get("BENCH_CACHE", tempfile.gettempdir()))
SETS = {
    "benchmark": "norm_questions",
    "dev": "norm_questions_dev",
    "dev2": "norm_questions_dev2",
    "holdout": "norm_questions_holdout",
    "holdout2": "norm_questions_holdout2",
}


def pattern(folder: str) -> str:
    return str(ROOT / "bench" / folder / "*.yaml")


def corpus_load(dataset: Path, fresh: bool, database: str = "sqlite") -> dict[str, Any]:
    """The corpus of every set (see the module's text) in `database`; the load's result."""
    from bench import norm_answers_child as child

    os.environ["DATABASE_URL"] = database_url(database, "mixed", fresh, of="rank")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-norm-rank-not-a-secret")
    os.environ["DJANGO_DEBUG"] = "0"  # as in production: no SQL kept per query
    os.environ.pop("REDIS_URL", None)
    child.django_setup()
    every = str(ROOT / "bench" / "norm_question*" / "*.yaml")
    args = argparse.Namespace(dataset=dataset, questions=every, corpus="mixed")
    return child.load(args)


def searched(q: Question, form: str) -> Asked:
    """`q` searched as the tool searches it; this thread's CPU in `cpu_ms`."""
    from normagpt import formatting, services

    keywords = q.keywords if form == "keywords" else [q.question]
    cpu, wall = time.thread_time(), time.perf_counter()
    found = services.pages_search(keywords=keywords, expected_documents=[], limit=10, as_of=None)
    data = formatting.search_as_dict(keywords, [], found)
    cpu_ms = (time.thread_time() - cpu) * 1000
    wall_ms = (time.perf_counter() - wall) * 1000
    hits = [
        (h["document"], [clause_key(c) for c in h.get("found", h["clauses"])]) for h in data["hits"]
    ]
    answered = bool(data.get("answered", True))
    return Asked(q, form, hits, answered, cpu_ms=cpu_ms, wall_ms=wall_ms)


def set_rows(name: str, asked: list[Asked], codes: dict[str, str]) -> list[list[str]]:
    rows = []
    for form in FORMS:
        mine = [a for a in asked if a.form == form]
        real = [a for a in mine if not a.question.trap]
        traps = [a for a in mine if a.question.trap]
        found = [a.found(codes[a.question.id]) for a in real if a.question.id in codes]
        rows.append([
            name, form, f"{len(real)}+{len(traps)}",
            share(sum(h1 for h1, _ in found), len(real)),
            share(sum(h5 for _, h5 in found), len(real)),
            share(sum(not a.answered for a in real), len(real)),
            share(sum(not a.answered for a in traps), len(traps)),
            f"{percentile([a.cpu_ms for a in mine], 50):.1f}",
        ])  # fmt: skip
    return rows


def set_misses(name: str, asked: list[Asked], codes: dict[str, str]) -> list[str]:
    lines = []
    for a in asked:
        q = a.question
        if q.trap:
            if a.answered:
                lines.append(f"{name} {a.form} {q.id} (trap) answered: {a.top()}")
            continue
        hit1, hit5 = a.found(codes.get(q.id, q.document))
        if not hit1 or not a.answered:
            said = "" if a.answered else " «not in corpus»"
            where = "in top 5" if hit5 else "not in top 5"
            lines.append(
                f"{name} {a.form} {q.id} ({q.document} {', '.join(q.clauses)}, {where}){said}:"
                f" {a.top()}"
            )
    return lines


def main() -> None:
    parser = dataset_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"of {', '.join(SETS)}")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    args = dataset_args(parser)
    unknown = [s for s in args.sets.split(",") if s not in SETS]
    if unknown:
        parser.error(f"--sets: {', '.join(unknown)} not of {', '.join(SETS)}")
    loaded = corpus_load(args.dataset, args.fresh, args.database)
    codes = loaded["codes"]
    rows, misses = [], []
    for name in args.sets.split(","):
        questions = questions_load(pattern(SETS[name]))
        for q in questions[:5]:
            searched(q, "keywords")  # the stemmer, the statistics, the connection
        asked = [searched(q, form) for form in FORMS for q in questions]
        rows += set_rows(name, asked, codes)
        misses += set_misses(name, asked, codes)
    print()
    print_table(
        ["set", "search", "questions", "hit@1", "hit@5", "real «not in corpus»",
         "traps «not in corpus»", "CPU p50 ms"],
        rows,
    )  # fmt: skip
    print(
        f"\n{loaded['pages']} pages, {loaded['documents']} documents ({args.database}). "
        f"Targets: hit@1 ≥ 85 %, hit@5 ≥ 97 %, real «not in corpus» ≤ "
        f"{REAL_NOT_FOUND_MAX:.0%}, traps ≥ {TRAPS_NOT_FOUND_MIN:.0%}. "
        "CPU: this thread's, in process (no transport)."
    )
    if args.misses:
        print("\nMissed:")
        for line in misses:
            print(f"  {line}")


if __name__ == "__main__":
    main()
