"""The exact Markdown of the five tools (seed 003 and rules 6–10 of the issue). Pure functions."""

from __future__ import annotations

import functools
import html
import logging
import re
from collections.abc import Sequence
from typing import Any

from ojclient.entities import PlatformStatus, Problem, SimilarItem

logger = logging.getLogger(__name__)

NA = "N/A"
MAX_OUTPUT_BYTES = 102_400
TRUNCATED = "\n\n... (truncated)"
NO_DESCRIPTION = "No description available."

# Content is HTML when it holds one of the tags LeetCode-style statements use (the
# issue's list, plus the inline b/i/sup/sub the seed's `<b>bold</b>` property needs);
# Markdown from Codeforces, AtCoder or Luogu (`$…$` LaTeX, bare `a < b`) passes unchanged.
_HTML_TAG = re.compile(
    r"<(?:p|div|ul|ol|li|table|br|h[1-6]|pre|code|strong|em|span|img|a|b|i|sup|sub)"
    r"(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)


@functools.cache
def _converter() -> Any:
    """markdownify with exponents kept readable: `10<sup>4</sup>` → `10^4`, not `104`.

    Made on first use: markdownify brings BeautifulSoup and soupsieve (43 ms of a start)."""
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        def convert_sup(self, el, text, parent_tags):  # type: ignore[no-untyped-def]
            return f"^{text.strip()}" if text.strip() else ""

        def convert_sub(self, el, text, parent_tags):  # type: ignore[no-untyped-def]
            return f"_{text.strip()}" if text.strip() else ""

    return Converter(heading_style="ATX", bullets="-", code_language="", escape_misc=False)


def is_html(content: str) -> bool:
    return _HTML_TAG.search(content) is not None


@functools.lru_cache(maxsize=512)
def content_to_markdown(content: str | None) -> str:
    """Statement text as Markdown: HTML converted, Markdown kept, never raw HTML."""
    if content is None or not content.strip():
        return NO_DESCRIPTION
    if not is_html(content):
        return content
    try:
        converted = _converter().convert(content).replace("\xa0", " ").strip()
    except Exception:  # markdownify on hostile HTML: fall back, never fail the call
        logger.warning("HTML to Markdown conversion failed; escaping instead", exc_info=True)
        converted = ""
    if not converted:
        return html.escape(content, quote=True)
    return converted


def _shown(value: object) -> str:
    if value is None:
        return NA
    text = str(value)
    return text if text.strip() else NA


def problem_title(problem: Problem) -> str:
    for candidate in (problem.title, problem.title_cn, problem.slug):
        if candidate is not None and candidate.strip():
            return candidate
    return NA


def problem_render(problem: Problem, *, default_source: str | None = None) -> str:
    """The metadata header, a rule and the statement — exactly, with no trailing newline."""
    source = problem.source or default_source
    tags = ", ".join(problem.tags) if problem.tags else NA
    ac_rate = NA if problem.ac_rate is None else f"{problem.ac_rate:.1f}%"
    return (
        f"# {problem_title(problem)}\n"
        "\n"
        f"- Source: {_shown(source)} | ID: {_shown(problem.id)} | "
        f"Difficulty: {_shown(problem.difficulty)}\n"
        f"- Tags: {tags}\n"
        f"- Link: {_shown(problem.link)}\n"
        f"- AC Rate: {ac_rate}\n"
        "\n"
        "---\n"
        "\n"
        f"{content_to_markdown(problem.content)}"
    )


def problems_render(problems: Sequence[Problem], *, default_source: str | None = None) -> str:
    """Several problems (the v0.3 daily shape), each rendered, separated by a blank line."""
    return "\n\n".join(problem_render(p, default_source=default_source) for p in problems)


def daily_fetching_render(retry_after: int | None) -> str:
    when = f"after {retry_after} seconds" if retry_after is not None else "later"
    return f"The daily challenge is currently being fetched. Please retry {when}."


def _cell(value: object) -> str:
    text = _shown(value)
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def similarity_render(value: float | None) -> str:
    return NA if value is None else f"{value * 100:.1f}%"


def similar_render(query: str, results: Sequence[SimilarItem]) -> str:
    lines = [
        "# Similar Problems",
        "",
        f"Query: {query}",
        "",
        "| # | Source | ID | Title | Difficulty | Similarity | Link |",
        "|---|--------|----|-------|------------|------------|------|",
    ]
    for number, item in enumerate(results, start=1):
        cells = [
            str(number),
            _cell(item.source),
            _cell(item.id),
            _cell(item.title),
            _cell(item.difficulty),
            similarity_render(item.similarity),
            _cell(item.link),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def status_render(status: PlatformStatus) -> str:
    lines = [
        f"# OJ Platform Status (v{status.version})",
        "",
        "| Platform | Problems | Missing Content | Not Embedded |",
        "|----------|----------|-----------------|--------------|",
    ]
    for platform in status.platforms:
        lines.append(
            f"| {_cell(platform.source)} | {platform.total:,} | "
            f"{platform.missing_content:,} | {platform.not_embedded:,} |"
        )
    return "\n".join(lines)


def output_truncate(text: str, limit: int = MAX_OUTPUT_BYTES) -> str:
    """Text over `limit` UTF-8 bytes cut at a character boundary, marked as truncated."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + TRUNCATED
