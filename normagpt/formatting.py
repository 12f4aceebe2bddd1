"""Runs and search results as dicts (API, structured tool output) and Markdown (the model)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.urls import NoReverseMatch, get_script_prefix, get_urlconf
from django.utils.safestring import SafeString, mark_safe

from core.links import absolute_url, link_path, links_urlconf
from normagpt.editions import amendment_label
from normagpt.models import AgentRun, ClaimCheck, NormClause, NormPage, Thread
from normagpt.parsing import clause_label
from normagpt.questions import question_read
from normagpt.search import SearchHit
from normagpt.threads import runs_of


def url_or_none(name: str, *args: Any) -> str | None:
    """The path of a normagpt page, or None while the pages are not mounted.

    Paths of whole-number ids are filled into a pattern reversed once per URLconf (a search
    links every hit twice: resolving each link was 15 % of its cost)."""
    if args and all(type(arg) is int for arg in args):
        pattern = _path_pattern(name, len(args), settings.ROOT_URLCONF, get_urlconf(),
                                links_urlconf(), get_script_prefix())  # fmt: skip
        if pattern is None:
            return None
        for i, arg in enumerate(args):
            pattern = pattern.replace(str(_MARK + i), str(arg), 1)
        return pattern
    try:
        return link_path(name, *args)
    except NoReverseMatch:
        return None


_MARK = 7_000_000_001  # an id no path otherwise holds; replaced by the real ids


@functools.lru_cache(maxsize=64)
def _path_pattern(name: str, count: int, *urlconf: object) -> str | None:
    """`name`'s path with marker ids (the URLconf and script prefix key the cache)."""
    try:
        return link_path(name, *[_MARK + i for i in range(count)])
    except NoReverseMatch:
        return None


def link(name: str, *args: Any) -> str | None:
    """The absolute URL of a normagpt page (see `core.links`), or None while not mounted."""
    path = url_or_none(name, *args)
    return absolute_url(path) if path is not None else None


def page_url(page_id: int, clause: str = "") -> str | None:
    """The page's URL; with `clause`, the page opens with that clause marked."""
    url = link("normagpt:page", page_id)
    return f"{url}?{urlencode({'clause': clause})}#cited" if url and clause else url


def page_urls() -> Callable[[int], str | None]:
    """`page_url` (no clause) for the pages of one answer: the URLconf, script prefix and
    site are read once, not per page (each read goes through a context-local)."""
    template = link("normagpt:page", _MARK)
    if template is None:
        return lambda page_id: None
    return lambda page_id: template.replace(str(_MARK), str(page_id), 1)


def check_as_dict(check: ClaimCheck) -> dict[str, Any]:
    return {
        "origin": check.origin,
        "claim": check.claim,
        "verdict": check.verdict,
        "reason": check.reason,
        "document": check.document_code,
        "clause": check.clause_number,
        "page": check.page_number,
        "url": page_url(check.page_id, check.clause_number) if check.page_id else None,
    }


def page_image_url(page: NormPage) -> str | None:
    if not page.image:
        return None
    return link("normagpt:page-image", page.pk) or absolute_url(page.image.url)


def run_as_dict(run: AgentRun, *, with_steps: bool = True) -> dict[str, Any]:
    answer = run.answer or {}
    data: dict[str, Any] = {
        "run_id": run.public_id,
        "thread": run.thread.public_id if run.thread is not None else None,
        "as_of": run.as_of.isoformat() if run.as_of else None,
        "status": run.status,
        "question": run.question,
        "incomplete": run.incomplete,
        "incomplete_reason": run.incomplete_reason,
        "answer": run.final_answer,
        "sources": [{**s, "url": page_url(s["page_id"], s.get("clause", ""))} for s in run.sources],
        "checks": [check_as_dict(check) for check in run.checks.all()],
        "conditions": answer.get("conditions", []),
        "clarifying_questions": (
            run.questions  # awaiting the asker's reply: the questions asked
            if run.status == AgentRun.Status.AWAITING_INPUT
            else answer.get("clarifying_questions", [])
        ),
        "dropped_sources": answer.get("dropped_sources", []),
        "review_reason": run.review_reason if run.status == AgentRun.Status.NEEDS_REVIEW else "",
        "error": run.error,
        "tokens": run.tokens,
        "llm_calls": run.llm_calls,
        "cost_estimate_usd": float(run.cost_estimate),
        "url": link("normagpt:run", run.public_id),
        "working_on": run.next_node if run.status == AgentRun.Status.RUNNING else "",
        "events": [
            {
                "at": event.created_at.isoformat(),
                "kind": event.kind,
                "node": event.node,
                "message": event.message,
            }
            for event in run.events.all()
        ],
    }
    if with_steps:
        data["steps"] = [
            {
                "index": step.index,
                "node": step.node,
                "input": step.input_summary,
                "decision": step.decision,
                "duration": round(step.duration, 3),
                "finished_at": step.created_at.isoformat(),
                "tokens": step.prompt_tokens + step.completion_tokens,
            }
            for step in run.steps.all()
        ]
    return data


def thread_as_dict(thread: Thread, *, with_runs: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "thread": thread.public_id,
        "title": thread.title,
        "created_at": thread.created_at.isoformat(),
        "updated_at": thread.updated_at.isoformat(),
        "url": link("normagpt:thread", thread.public_id),
    }
    if with_runs:
        runs = runs_of(thread).select_related("thread").prefetch_related("checks", "events")
        data["runs"] = [run_as_dict(run, with_steps=False) for run in runs]
    return data


def run_markdown(run: AgentRun) -> str:
    """What the model reads: the answer with its sources, or the run's state."""
    head = f"Run {run.public_id} — {run.status}"
    if run.status == AgentRun.Status.COMPLETED:
        lines = [
            f"{head}{' (incomplete: ' + run.incomplete_reason + ')' if run.incomplete else ''}",
            "",
        ]
        lines += [run.final_answer, ""]
        if run.sources:
            lines.append("Sources:")
            lines += [
                f"- {s['document']}"
                + (f" ({s['edition']})" if s.get("edition") else "")
                + f", {clause_label(s['clause'])}"
                + (f" в ред.: {s['amendment']}" if s.get("amendment") else "")
                + f", стр. {s['page']}"
                + (f" — {url}" if (url := page_url(s["page_id"], s["clause"])) else "")
                for s in run.sources
            ]
        lines += checks_markdown(run)
        answer = run.answer or {}
        if answer.get("conditions"):
            lines += ["", "Conditions:", *(f"- {c}" for c in answer["conditions"])]
        if answer.get("clarifying_questions"):
            lines += [
                "",
                "Clarifying questions:",
                *(f"- {q}" for q in answer["clarifying_questions"]),
            ]
        return "\n".join(lines).strip()
    if run.status == AgentRun.Status.AWAITING_INPUT:
        asked = "\n".join(f"{n}. {q}" for n, q in enumerate(run.questions, start=1))
        return (
            f"{head}: the agent needs your answer to go on:\n{asked}\n"
            f'Reply with normagpt_reply(run_id="{run.public_id}", answer=...). Left unanswered '
            f"for {duration(settings.NORMAGPT_INPUT_TIMEOUT)}, it answers with what it found."
        )
    if run.status == AgentRun.Status.NEEDS_REVIEW:
        return (
            f"{head}: the agent asks a person to review. Reason: {run.review_reason}\n"
            f'Resume with normagpt_resume(run_id="{run.public_id}", note=...).'
        )
    events = [f"- {e.created_at:%H:%M:%S} {e.kind}: {e.message}" for e in run.events.all()]
    if run.status == AgentRun.Status.FAILED:
        found = f"\n\nFound before the failure:\n{run.final_answer}" if run.final_answer else ""
        found += "\n".join(checks_markdown(run))
        return f"{head}: {run.error}{found}" + ("\n\nEvents:\n" + "\n".join(events[-10:]))
    done = ", ".join(f"{s.node}{'→' + s.decision if s.decision else ''}" for s in run.steps.all())
    working = f" Working on: {run.next_node}." if run.status == AgentRun.Status.RUNNING else ""
    return (
        f"{head}; {run.step_count} node(s) done{': ' + done if done else ''}.{working} "
        f'Check again with normagpt_get_run(run_id="{run.public_id}").'
        + ("\nEvents:\n" + "\n".join(events[-10:]) if events else "")
    )


def duration(seconds: int) -> str:
    """«24 h», «90 min», «45 s»: the largest whole unit."""
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def checks_markdown(run: AgentRun) -> list[str]:
    """The claim checks for the model: how many hold, and each that does not, with why."""
    checks = [c for c in run.checks.all() if c.origin != ClaimCheck.Origin.FINDING]
    if not checks:
        return []
    wrong = [c for c in checks if c.verdict != ClaimCheck.Verdict.CONFIRMED]
    held = len(checks) - len(wrong)
    lines = ["", f"Claims checked against the clause text: {held} of {len(checks)} confirmed."]
    lines += [f"- UNCONFIRMED «{c.claim[:200]}»: {c.reason}" for c in wrong]
    return lines


def hit_as_dict(hit: SearchHit) -> dict[str, Any]:
    page, document = hit.page, hit.page.document
    snippet, best = hit.snippet, hit.clauses[0].clause if hit.clauses else None
    if best is not None and best.amendment is not None:  # the snippet is that amendment's text
        snippet = f"[{amendment_label(best.amendment)}] {snippet}"
    if hit.clauses and hit.clauses[0].mark:  # the text an amendment in force changes, unmade
        snippet = f"[{hit.clauses[0].mark}] {snippet}"
    return {
        "page_id": page.pk,
        "document": document.code,
        "title": document.title,
        "replaced": hit.replaced,
        "replaced_by": document.replaced_by.code if document.replaced_by else None,
        "page": page.number,
        "pages_after": [p.number for p in hit.pages_after],
        "clauses": page.clauses,
        "snippet": snippet,
        "image_url": page_image_url(page),
        "expected": hit.expected,
        "rank": hit.rank,
        "found": list(
            dict.fromkeys(label for found in hit.clauses if (label := _found_label(found.clause)))
        ),
        "answers": hit.answers,
        "lacks": list(dict.fromkeys(w for found in hit.clauses[:1] for w in found.lacks)),
    }


def _found_label(clause: NormClause) -> str:
    """A clause found as a hit names it («5.8», «таблица 5.1»); "" for a part with no
    number (a page's text before its first clause, a table with no caption): not named."""
    if not clause.number:
        return ""
    return f"таблица {clause.number}" if clause.kind == NormClause.Kind.TABLE else clause.number


def search_as_dict(
    keywords: list[str], expected_documents: list[str], hits: list[SearchHit]
) -> dict[str, Any]:
    """A search's result as the tool and the API give it: whether the corpus answers (a hit
    holds what is asked: `judging.Judge`), what was searched for, the hits."""
    query = question_read(keywords)
    return {
        "keywords": keywords,
        "expected_documents": expected_documents,
        "answered": any(hit.answers for hit in hits),
        "searched": [query.words.get(term, term) for term in query.terms],
        "whole_question": query.sentence,
        "hits": [hit_as_dict(hit) for hit in hits],
    }


def search_markdown(
    hits: list[dict[str, Any]],
    *,
    corpus_empty: bool = False,
    searched: dict[str, Any] | None = None,
) -> str:
    """The search's text: `hits` as `hit_as_dict` gives them (the closest, when none
    answers: said first); `searched` (`search_as_dict`'s) says when a whole question was
    searched, and what for."""
    if corpus_empty:
        return (
            "The norms corpus is empty: nothing to search yet. Its owner adds documents with "
            "`manage.py normagpt_ingest` (or sample pages with `manage.py normagpt_demo`)."
        )
    if not hits:
        return "No page of the corpus matches these keywords."
    lines, url_of = [], page_urls()
    if searched and searched["whole_question"]:
        words = " ".join(searched["searched"])
        lines.append(
            f"Read as a whole question: searched for «{words}». Keywords in the norms' own "
            "words (the quantity and what it is of, e.g. «высота жилых комнат», «уклон "
            "трубопроводов канализации») find the clause more often and tell better when "
            "the corpus has none."
        )
    if not any(data["answers"] for data in hits):
        lines.append(
            "NOT IN THE CORPUS: no clause holds what these keywords ask (the words, the "
            "quantity asked, together). The closest pages below do not answer it: do not "
            "cite them as the answer; say the corpus has no clause on it, or search again "
            "with the norms' own words."
        )
    for i, data in enumerate(hits, start=1):
        mark = (
            (f" (REPLACED by {data['replaced_by']})" if data["replaced_by"] else " (NOT IN FORCE)")
            if data["replaced"]  # not in force on the search's day: replaced, or not yet
            else ""
        )
        clauses = ", ".join(data["clauses"][:12]) or "—"
        if not data["answers"] and data["lacks"]:
            mark += " — does not answer: lacks " + ", ".join(data["lacks"][:6])
        found = ", ".join(data["found"][:4])
        after = ", ".join(map(str, data.get("pages_after") or []))  # a clause found goes on
        lines.append(
            f"{i}. {data['document']}{mark}, page {data['page']}"
            + (f" (continues on page {after})" if after else "")
            + f" (page_id {data['page_id']}); "
            f"clauses: {clauses}"
            + (f"; found: {found}" if found else "")
            + f"\n   {data['snippet']}"
            + (f"\n   {url}" if (url := url_of(data["page_id"])) else "")
        )
    return "\n".join(lines)


def _http_only(url: str) -> bool:
    """Only an http(s) address is made a link; any other stays the text it was."""
    return url.strip().lower().startswith(("http://", "https://"))


def _answer_tags(state: Any) -> None:
    """An answer's headings sit under the page's own (h4 and below); its links leave the
    site as strangers (`rel`)."""
    for token in state.tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1:]) + 3)}"
        for child in token.children or ():
            if child.type == "link_open":
                child.attrSet("rel", "nofollow noopener")


@functools.cache
def _markdown() -> Any:
    """CommonMark with tables and strikethrough; no raw HTML (escaped as text), a line
    break kept as one (a model's answer breaks its lines as it means them), and no images:
    an answer steered by a document's text could load any address from the reader's
    browser (an image becomes a link to it). Made on first use: a process that renders no
    answer (an MCP server) does not import the parser."""
    from markdown_it import MarkdownIt

    parser = (
        MarkdownIt("commonmark", {"html": False, "breaks": True})
        .enable(["table", "strikethrough"])
        .disable("image")
    )
    parser.validateLink = _http_only  # type: ignore[method-assign]
    parser.core.ruler.push("answer_tags", _answer_tags)
    return parser


def markdown_html(text: str) -> SafeString:
    """A model's answer in Markdown (CommonMark, with tables) as HTML: every text escaped,
    raw HTML shown as text, only http(s) links made."""
    return mark_safe(_markdown().render(text))  # noqa: S308 (html off: every text is escaped)
