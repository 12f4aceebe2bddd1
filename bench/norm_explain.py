"""Why NormaGPT's search ranks a question's clauses as it does, on the tuning corpus of
`bench/norm_rank.py`: the question as read (its phrases, the story's words, the quantity
asked, each stem's weight), the first hits with their score, whether each answers and the
query's stems it holds, and where the question's gold clause ranks.

    .venv/bin/python bench/norm_explain.py DATASET_DIR QUESTION_ID... [--keywords] [--top 6]

A question is named by its `id` in any set (`bench/norm_questions*/`); the whole question
is searched unless `--keywords`. The corpus is loaded as `bench/norm_rank.py` loads it (and
kept: the first run takes minutes, the next seconds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.norm_answers import dataset_args, dataset_parser
from bench.norm_answers_child import clause_of
from bench.norm_answers_questions import Question, questions_load
from bench.norm_rank import SETS, corpus_load, pattern

GOLD_WITHIN = 200  # ranked candidates looked through for the gold clause


def main() -> None:
    parser = dataset_parser(__doc__.split("\n\n")[0])
    parser.add_argument("questions", nargs="+", metavar="QUESTION_ID")
    parser.add_argument("--keywords", action="store_true", help="search the keywords instead")
    parser.add_argument("--top", type=int, default=6, help="hits shown")
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    args = dataset_args(parser)
    every = {q.id: q for folder in SETS.values() for q in questions_load(pattern(folder))}
    unknown = [name for name in args.questions if name not in every]
    if unknown:
        parser.error(f"no question {', '.join(unknown)} in {', '.join(SETS.values())}")
    codes = corpus_load(args.dataset, args.fresh, args.database)["codes"]
    for name in args.questions:
        question = every[name]
        explain(question, codes.get(question.id, question.document), args)


def explain(question: Question, code: str, args: argparse.Namespace) -> None:
    from normagpt import search
    from normagpt.questions import question_read

    keywords = question.keywords if args.keywords else [question.question]
    query = question_read(keywords)
    ranked: dict[str, Any] = {}

    def kept(*positional: Any, **named: Any) -> Any:
        ranked["rows"] = rows_ranked(*positional, **named)
        ranked["vocabulary"] = positional[2]
        return ranked["rows"]

    rows_ranked = search.rows_ranked
    with mock.patch.object(search, "rows_ranked", kept):
        search.clauses_search(keywords=keywords, limit=10)
    weights = ranked["vocabulary"].weights
    print(f"\n{question.id}: {' | '.join(keywords)}")
    print(f"  gold: {code or '(a trap: no document answers)'} {', '.join(question.clauses)}")
    print(f"  phrases: {query.phrases}")
    print(f"  story: {sorted(query.context)}; asked: {list(query.quantities) or '-'}")
    by_weight = sorted(weights.items(), key=lambda item: -item[1])
    print("  weights: " + ", ".join(f"{stem} {weight:.2f}" for stem, weight in by_weight))
    for line in hits_described(ranked["rows"], question, code, args.top):
        print("  " + line)


def hits_described(rows: list[Any], question: Question, code: str, top: int) -> list[str]:
    """The first `top` ranked clauses and the gold one (when ranked lower), a line each."""
    from normagpt.models import NormClause

    shown = rows[:GOLD_WITHIN]
    clauses = NormClause.objects.select_related("document").in_bulk([r.id for _, r in shown])
    lines, gold_seen = [], False
    for rank, (score, row) in enumerate(shown, start=1):
        clause = clauses[row.id]
        number = clause_of(clause)  # «таблица N» or N, as the gold is written
        gold = clause.document.code == code and number in question.gold
        gold_seen |= gold
        if rank <= top or gold:
            text = " ".join(clause.text.split())[:110]
            lines.append(
                f"{'GOLD ' if gold else ''}#{rank} {score:.2f}"
                f"{'' if row.answers else ' (does not answer)'} {clause.document.code}"
                f" {number or '(unnumbered)'}: holds {sorted(row.positions)}"
                f"{f', title {sorted(row.titled)}' if row.titled else ''} — {text}"
            )
        if rank >= top and (gold_seen or not code):
            break
    if code and not gold_seen:
        lines.append(f"the gold clause is not among the {len(shown)} candidates ranked")
    return lines


if __name__ == "__main__":
    main()
