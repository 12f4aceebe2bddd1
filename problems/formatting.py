"""Problems as the model reads them: Markdown (default) or JSON-ready dicts.

The same dicts back the MCP tools' structured output and the REST API.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from problems import selectors
from problems.client import problem_page_url
from problems.differences import Difference
from problems.models import Problem, Test, Topic
from problems.outcomes import (
    BatchItem,
    CategoryOutcome,
    FuzzyMatch,
    FuzzyOutcome,
    PhotoOutcome,
    SearchOutcome,
)
from problems.stored import RETRYING, Staleness, fetched_when
from problems.subjects import Site


def problem_url(problem: Problem) -> str:
    site = Site(subject=problem.subject, exam=problem.exam)
    return problem_page_url(site, problem.problem_id)


_when = fetched_when


def stale_warning(stale: Staleness) -> str:
    """The warning of an answer served from the stored copy: why, and how old it is."""
    return stale.warning()


def stale_as_dict(stale: Staleness | None) -> dict[str, Any]:
    """`stale` and `warnings` of an answer (`fetched_at` is the answer's own)."""
    return {"stale": stale is not None, "warnings": [stale_warning(stale)] if stale else []}


def stale_markdown(stale: Staleness | None) -> list[str]:
    """The lines that open a stored copy's Markdown (none for the site's own answer)."""
    if stale is None:
        return []
    when = _when(stale.fetched_at)
    if stale.refresh:
        line = (
            f"> **Warning**: `refresh: true` failed ({stale.reason}); this is the stored "
            f"copy, fetched {when}, and may be out of date."
        )
    else:
        line = (
            f"> **Stored copy**, fetched {when}: the site could not be read "
            f"({stale.reason}). It may be out of date."
        )
    if stale.retrying:
        line += f" (Meanwhile {RETRYING}.)"
    return [line, ""]


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def problem_as_dict(problem: Problem, stale: Staleness | None = None) -> dict[str, Any]:
    return {
        "id": problem.problem_id,
        "subject": problem.subject,
        "exam": problem.exam,
        "type_number": problem.type_number,
        "url": problem_url(problem),
        "condition": {
            "text": problem.condition_text,
            "html": problem.condition_html,
            "figures": problem.figures,
            "formulas": problem.formulas,
        },
        "source_text": problem.source_text,
        "solution": {
            "text": problem.solution_text,
            "html": problem.solution_html,
            "figures": problem.solution_figures,
            "kind": problem.solution_kind,
        },
        "answer": problem.answer,
        "answers": problem.answers,
        "analogs": problem.analogs,
        "codifier": problem.codifier,
        "categories": selectors.problem_category_ids(problem) if problem.pk else [],
        "fetched_at": problem.fetched_at.isoformat(),
        **stale_as_dict(stale),
    }


KEY_HIDDEN = "hidden"  # solution.kind of a problem given without its answer and solution
KEY_HIDDEN_NOTE = (
    "*(hidden: check the learner's answer with sdamgia_check_answer, or ask again with "
    "reveal=true)*"
)


def problem_hidden(problem: Problem) -> Problem:
    """`problem` as a learner may see it: no answer and no solution (solution.kind "hidden"),
    the same shape otherwise. A copy, never saved."""
    hidden = copy.copy(problem)
    hidden.answer, hidden.answers = "", []
    hidden.solution_text, hidden.solution_html, hidden.solution_figures = "", "", []
    hidden.solution_kind = KEY_HIDDEN
    return hidden


SOLUTION_NOTES = {
    "prototype": "*(the site shows the solution of the prototype problem)*",
    "missing": "*(the site has no solution for this problem yet)*",
}


def problem_markdown(
    problem: Problem, *, heading: str = "#", stale: Staleness | None = None
) -> str:
    lines = [f"{heading} Problem {problem.problem_id} ({problem.subject}-{problem.exam})", ""]
    lines += stale_markdown(stale)
    meta = [f"**Type**: {problem.type_number}"] if problem.type_number else []
    meta.append(f"**URL**: {problem_url(problem)}")
    lines += [" · ".join(meta), ""]
    if problem.source_text:
        lines += [f"{heading}# Source text", problem.source_text, ""]
    lines += [f"{heading}# Condition", problem.condition_text or "*(empty)*"]
    lines += [f"![figure]({url})" for url in problem.figures]
    lines.append("")
    if problem.solution_kind == KEY_HIDDEN:
        lines += [f"{heading}# Answer and solution", KEY_HIDDEN_NOTE]
    else:
        lines += [f"{heading}# Solution", SOLUTION_NOTES.get(problem.solution_kind, "")]
        if problem.solution_text:
            lines.append(problem.solution_text)
        lines += ["", f"{heading}# Answer", problem.answer or "*(no short answer on the site)*"]
        if len(problem.answers) > 1:
            lines.append("Accepted alternatives: " + " | ".join(problem.answers))
    if problem.analogs:
        lines += ["", f"**Analogs**: {', '.join(problem.analogs)}"]
    if problem.codifier:
        codes = ", ".join(f"{c['code']} {c['title']}" for c in problem.codifier)
        lines.append(f"**Codifier**: {codes}")
    return "\n".join(line for line in lines if line is not None).strip()


def batch_as_dict(items: list[BatchItem]) -> dict[str, Any]:
    return {
        "problems": [problem_as_dict(i.problem, i.stale) for i in items if i.problem is not None],
        "errors": [
            {"id": i.problem_id, "code": i.error_code, "message": i.error} for i in items if i.error
        ],
        "requested": len(items),
        "stale": any(i.stale for i in items),
    }


def batch_markdown(items: list[BatchItem]) -> str:
    found = sum(1 for i in items if i.problem is not None)
    parts = [f"# {found} of {len(items)} problems", ""]
    for item in items:
        if item.problem is not None:
            block = problem_markdown(item.problem, heading="##", stale=item.stale)
            parts += [block, "", "---", ""]
        else:
            parts += [f"## Problem {item.problem_id}: error", item.error, "", "---", ""]
    return "\n".join(parts).strip()


def search_as_dict(outcome: SearchOutcome, *, offset: int) -> dict[str, Any]:
    return {
        "query": outcome.query,
        "ids": outcome.ids,
        "offset": offset,
        "total_found": outcome.total_found,
        "exhausted": outcome.exhausted,
        "offline": outcome.offline,
        "fetched_at": _iso(outcome.stale.fetched_at) if outcome.stale else None,
        **stale_as_dict(outcome.stale),
    }


def search_markdown(outcome: SearchOutcome, *, offset: int) -> str:
    offline = _offline_markdown(outcome)
    if not outcome.ids:
        nothing = "No stored problem holds every keyword of" if offline else "No problems found for"
        return "\n".join([*offline, f"{nothing} «{outcome.query}» (offset {offset})."])
    more = "" if outcome.exhausted else " (more may follow: raise offset)"
    lines = [f"# Search «{outcome.query}»: {len(outcome.ids)} ids from offset {offset}{more}", ""]
    lines += offline
    lines += [f"{offset + n}. {pid}" for n, pid in enumerate(outcome.ids, start=1)]
    return "\n".join(lines)


def _offline_markdown(outcome: SearchOutcome) -> list[str]:
    """The line that opens a keyword search answered from the stored problems."""
    if outcome.stale is None:
        return []
    oldest = outcome.stale.fetched_at
    line = (
        f"> **Offline**: the site's search could not be asked ({outcome.stale.reason}). "
        "These are the stored problems holding every keyword (a local search, not the site's)"
    )
    line += f"; the oldest of them was fetched {_when(oldest)}." if oldest else "."
    return [line, ""]


def fuzzy_as_dict(outcome: FuzzyOutcome) -> dict[str, Any]:
    return {
        "matches": [
            {
                "id": m.problem.problem_id,
                "score": m.score,
                "verdict": m.verdict,
                "differences": [
                    {"kind": d.kind, "query": d.query, "problem": d.problem, "of": d.of}
                    for d in m.differences
                ],
                "snippet": m.snippet,
                "url": problem_url(m.problem),
            }
            for m in outcome.matches
        ],
        "fits": outcome.fits,
        "phrases": outcome.phrases,
        "site_candidates": outcome.site_candidates,
        "fetched": outcome.fetched,
        "local_candidates": outcome.local_candidates,
        "fetch_errors": outcome.fetch_errors,
        "warnings": outcome.warnings,
        "offline": outcome.offline,
        "site_asked": outcome.site_asked,
    }


def photo_as_dict(outcome: PhotoOutcome) -> dict[str, Any]:
    return {**fuzzy_as_dict(outcome.search), "recognized_text": outcome.recognized_text}


def photo_markdown(outcome: PhotoOutcome) -> str:
    text = outcome.recognized_text
    shown = text if len(text) <= 600 else text[:597].rstrip() + "…"
    return f"Recognised text (OCR): «{shown}»\n\n{fuzzy_markdown(outcome.search)}"


def fuzzy_markdown(outcome: FuzzyOutcome) -> str:
    head = (
        f"# {len(outcome.matches)} matching problems "
        f"({outcome.local_candidates} compared; {outcome.fetched} fetched from the site)"
    )
    if outcome.offline:
        head += " — offline: the site could not be reached, answered from stored problems"
    elif not outcome.site_asked:
        head += " — a stored problem matched confidently; `refresh: true` asks the site too"
    lines = [head, ""]
    if outcome.fits > 1:
        lines += [
            f"> **Ambiguous**: {outcome.fits} problems hold the query and it does not tell "
            "them apart; none of them is known to be the problem asked. Ask for the whole "
            "condition.",
            "",
        ]
    for n, match in enumerate(outcome.matches, start=1):
        lines.append(f"{n}. **{match.problem.problem_id}** — {_match_line(match)}")
    if not outcome.matches:
        lines.append("No problem reached the threshold; lower `threshold` or check the text.")
    for warning in outcome.warnings + [f"{k}: {v}" for k, v in outcome.fetch_errors.items()]:
        lines.append(f"- warning: {warning}")
    return "\n".join(lines)


DIFFERENCE_NAMES = {
    "asked": "asks for another thing",
    "unit": "another unit or form of the answer",
    "number": "other numbers",
    "label": "other labels",
    "word": "other words",
}


def _match_line(match: FuzzyMatch) -> str:
    """A match as the model must read it: every difference first, then the verdict."""
    score = f"score {match.score:.2f}: {match.snippet}"
    differs = differences_line(match.differences)
    if match.verdict == "same":
        return f"same text and values, {score}"
    if match.verdict == "ambiguous":
        return f"holds the query, as other problems do — AMBIGUOUS, {score}"
    if match.verdict == "same_prototype":
        return f"{differs} — NOT the problem asked (its text, other values), {score}"
    return f"{differs} — NOT the problem asked, {score}" if differs else f"another problem, {score}"


def differences_line(differences: list[Difference]) -> str:
    """«asks for another thing: угол CAD, not дугу CAD; other numbers: BC = 7, not 8»:
    every difference, by kind."""
    parts = []
    for kind, name in DIFFERENCE_NAMES.items():
        pairs = [
            (f"{d.of} = " if d.of else "") + f"{d.problem}, not {d.query}"
            for d in differences
            if d.kind == kind
        ]
        if pairs:
            parts.append(f"{name}: {' and '.join(pairs)}")
    return "; ".join(parts)


def catalog_as_dict(topics: list[Topic], stale: Staleness | None = None) -> dict[str, Any]:
    return {
        "topics": [
            {
                "number": t.number,
                "title": t.title,
                "count": t.count,
                "is_additional": t.is_additional,
                "categories": [
                    {"id": c.category_id, "title": c.title, "count": c.count}
                    for c in t.categories.all()
                ],
            }
            for t in topics
        ],
        "fetched_at": _iso(min((t.fetched_at for t in topics), default=None)),
        **stale_as_dict(stale),
    }


def catalog_markdown(topics: list[Topic], site: Site, stale: Staleness | None = None) -> str:
    lines = [f"# Catalog of {site.label}.sdamgia.ru ({site.name})", ""]
    lines += stale_markdown(stale)
    for topic in topics:
        extra = " *(additional)*" if topic.is_additional else ""
        count = f" — {topic.count}" if topic.count is not None else ""
        lines.append(f"## {topic}{count}{extra}")
        for category in topic.categories.all():
            n = f" ({category.count})" if category.count is not None else ""
            lines.append(f"- `{category.category_id}` {category.title}{n}")
        lines.append("")
    return "\n".join(lines).strip()


def category_as_dict(
    outcome: CategoryOutcome, *, offset: int, stale: Staleness | None = None
) -> dict[str, Any]:
    return {
        "category_id": outcome.category.category_id,
        "title": outcome.category.title,
        "ids": outcome.ids,
        "offset": offset,
        "total": outcome.total,
        "fetched_at": _iso(outcome.category.listing_fetched_at),
        **stale_as_dict(stale),
    }


def category_markdown(
    outcome: CategoryOutcome, *, offset: int, stale: Staleness | None = None
) -> str:
    title = outcome.category.title or f"category {outcome.category.category_id}"
    lines = [f"# {title}: {len(outcome.ids)} of {outcome.total} problems from offset {offset}", ""]
    lines += stale_markdown(stale)
    lines += [f"{offset + n}. {pid}" for n, pid in enumerate(outcome.ids, start=1)]
    return "\n".join(lines)


HIDDEN = "problem numbers hidden by the test's author"


def exam_test_as_dict(test: Test, stale: Staleness | None = None) -> dict[str, Any]:
    return {
        "test_id": test.test_id,
        "title": test.title,
        "ids": test.problem_ids,
        "ids_hidden": test.ids_hidden,
        "problem_count": test.problem_count,
        "note": HIDDEN if test.ids_hidden else "",
        "fetched_at": test.fetched_at.isoformat(),
        **stale_as_dict(stale),
    }


def exam_test_markdown(test: Test, stale: Staleness | None = None) -> str:
    lines = [f"# Test {test.test_id}" + (f": {test.title}" if test.title else ""), ""]
    lines += stale_markdown(stale)
    if test.ids_hidden:
        lines.append(f"{test.problem_count} problems; {HIDDEN}.")
    else:
        lines += [f"{n}. {pid}" for n, pid in enumerate(test.problem_ids, start=1)]
    return "\n".join(lines)
