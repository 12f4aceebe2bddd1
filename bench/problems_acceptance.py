"""Issue 50's acceptance table for `bench/problems.py`: each measure of this run beside its
target, the figure the issue was filed with, and the peer's."""

from __future__ import annotations

from bench import problems_twins
from bench.common import print_table


def print_acceptance(
    twins: dict[str, problems_twins.Tally], warm: list[list[str]], cold: list[list[str]]
) -> None:
    """Issue 50's acceptance: each measure, its target, and the figure the issue was filed
    with (measured by the session that filed it, over MCP stdio, with its own twins)."""
    print("\n7. Issue 50: the acceptance, beside the figures it was filed with\n")
    exact, fragments, damaged = twins["exact"], twins["fragments"], twins["damaged"]

    def share(part: int, whole: int) -> str:
        return f"{part} of {whole} ({100 * part / whole:.1f} %)" if whole else "-"

    peer = {k: twins[f"peer {k}"] for k in ("exact", "fragments", "damaged")}
    confident = exact.confident + fragments.confident + damaged.confident
    wrong = exact.confident_wrong + fragments.confident_wrong + damaged.confident_wrong
    peer_confident = sum(t.confident for t in peer.values())
    peer_wrong = sum(t.confident_wrong for t in peer.values())
    rows = [
        ["`same` for another problem (`Reading`): exact queries",
         f"{exact.same_wrong} of {exact.differ} ({exact.same_wrong_text} of "
         f"{exact.differ_text} by text)", "0", "58 of 58 asked, 60 of 60 unit twins",
         f"{peer['exact'].same_wrong} of {peer['exact'].queries} queries"],
        ["… a reworded copy of the problem `same`", f"{exact.reworded_same} of {exact.reworded}",
         "-", "-", "-"],
        ["… damaged queries", f"{damaged.same_wrong} of {damaged.differ}", "0", "-",
         f"{peer['damaged'].same_wrong} of {peer['damaged'].queries} queries"],
        ["confident-wrong", f"{wrong} of {confident} confident", "0",
         "9 of 30 variants stored nowhere", f"{peer_wrong} of {peer_confident} (all confident)"],
        ["every difference named: `differences`", share(exact.named, exact.changes), "100 %",
         "461 of 473 (12 name only the word)", "none named"],
        ["… the Markdown", share(exact.said, exact.changes), "100 %", "-", "-"],
        ["ambiguous fragments `ambiguous` (none `same`, the site asked)",
         share(fragments.fragments_right, fragments.queries), "100 %", "1 of 46 (45 `same`)",
         share(peer["fragments"].fragments_right, peer["fragments"].queries)],
        ["damaged-query accuracy, warm (top-1)",
         ", ".join(f"{row[6]} at {row[0]}" for row in warm if row[1] == "default")
         + f"; {share(damaged.top1, damaged.queries)} with the twins stored",
         "≥ 98 %", "97 of 100",
         f"{share(peer['damaged'].top1, peer['damaged'].queries)} with the twins stored"],
        ["damaged-query accuracy, cold (top-1)",
         ", ".join(f"{row[2]} ({row[0]})" for row in cold), "≥ 97 %", "96 of 100",
         "the site's search: " + ", ".join(f"{row[7]} ({row[0]})" for row in cold)],
    ]  # fmt: skip
    print_table(
        [
            "measure",
            "this run",
            "target",
            "as filed (issue 50)",
            f"peer ({problems_twins.Peer.NAME})",
        ],
        rows,
    )
