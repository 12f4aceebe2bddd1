"""MCP tools of the online-judge problem API client (contract: seed 003).

Five tools, each answering Markdown text. Validation failures, API errors and a missing
configuration come back as tool errors with the contract's fixed messages; nothing is
requested when an argument is invalid.
"""

from __future__ import annotations

import logging
from typing import Annotated, Literal

from django.conf import settings
from pydantic import Field

from core.mcp_content import prompt_step, prompt_text
from core.registry import CliOption, ToolRegistry
from ojclient import services
from ojclient.formatting import (
    daily_fetching_render,
    output_truncate,
    problems_render,
    similar_render,
    status_render,
)

logger = logging.getLogger(__name__)


def log_upstream() -> None:
    """The API the tools will call, and whether a token is set (never the token itself)."""
    from ojclient.conf import base_url_normalize  # valid here: the system checks passed

    base_url = settings.OJ_API_BASE_URL
    logger.info(
        "OJ API: %s (token: %s)",
        base_url_normalize(base_url) if base_url.strip() else "not configured",
        "configured" if settings.OJ_API_TOKEN.strip() else "not configured",
    )


registry = ToolRegistry(
    app="ojclient",
    options=[
        CliOption(
            "--oj-base-url",
            "OJ_API_BASE_URL",
            "Online-judge API origin (overrides OJ_API_BASE_URL), e.g. https://oj.example.com.",
        ),
        CliOption("--oj-token", "OJ_API_TOKEN", "Online-judge API token (overrides OJ_API_TOKEN)."),
    ],
    on_serve=log_upstream,
    title="Online judge",
    description=(
        "Competitive-programming problems from an online-judge problem API: the daily "
        "challenge, a problem by source and id, similar problems, resolving a link or a "
        "name, and the platform's status."
    ),
)


def problems_text(result: services.ProblemsResult) -> str:
    text = problems_render(result.problems, default_source=result.default_source)
    if result.stored_at is not None:
        stamp = result.stored_at.strftime("%Y-%m-%d %H:%M UTC")
        text = f"(stored copy from {stamp}; the API is unreachable)\n\n{text}"
    return output_truncate(text)


@registry.tool(
    name="get_daily_challenge",
    title="Daily challenge",
    read_only=True,
    open_world=True,
    structured_output=False,
)
def get_daily_challenge(
    domain: Annotated[
        Literal["com", "cn"],
        Field(description="leetcode.com or leetcode.cn."),
    ] = "com",
    date: Annotated[
        str | None,
        Field(
            description="A UTC day; default today.",
            json_schema_extra={"pattern": r"^\d{4}-\d{2}-\d{2}$"},
        ),
    ] = None,
) -> str:
    """The LeetCode daily challenge of a day: metadata and the statement as Markdown; while the backend still fetches it, when to retry."""
    daily = services.daily_get(domain=domain, date=date)
    if daily.fetching or daily.result is None:
        return daily_fetching_render(daily.retry_after)
    if not daily.result.problems:
        return f"No daily challenge for {daily.date} ({daily.domain})."
    return problems_text(daily.result)


@registry.tool(
    name="get_problem",
    title="Get a problem",
    read_only=True,
    open_world=True,
    structured_output=False,
)
def get_problem(
    source: Annotated[
        str,
        Field(description="Platform, e.g. `leetcode`, `codeforces`, `atcoder`, `luogu`."),
    ],
    id: Annotated[
        str,
        Field(description="E.g. `1`, `1A`, `abc300_a`, `P1001`."),
    ],
) -> str:
    """One problem by platform and id: metadata header and the full statement as Markdown."""
    return problems_text(services.problem_get(source=source, problem_id=id))


@registry.tool(
    name="find_similar_problems",
    title="Find similar problems",
    read_only=True,
    open_world=True,
    structured_output=False,
)
def find_similar_problems(
    source: Annotated[
        str | None,
        Field(description="Platform of the reference problem (with `id`)."),
    ] = None,
    id: Annotated[
        str | None,
        Field(description="Id of the reference problem (with `source`)."),
    ] = None,
    query: Annotated[
        str | None,
        Field(
            description="Free text to search by, instead of source + id.",
            json_schema_extra={"minLength": 3, "maxLength": 2000},
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Field(
            description="How many results.",
            json_schema_extra={"minimum": 1, "maximum": 50, "default": 10},
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        Field(
            description="Minimum similarity.",
            json_schema_extra={"minimum": 0, "maximum": 1, "default": 0},
        ),
    ] = None,
    source_filter: Annotated[
        str | None,
        Field(description="Only these platforms, comma-separated, e.g. `leetcode,codeforces`."),
    ] = None,
) -> str:
    """Problems similar to one (source + id) or to a text (query), with similarity in percent."""
    result = services.similar_find(
        query=query,
        source=source,
        problem_id=id,
        limit=limit,
        threshold=threshold,
        source_filter=source_filter,
    )
    return output_truncate(similar_render(result.query, result.results))


@registry.tool(
    name="resolve_problem",
    title="Resolve a problem",
    read_only=True,
    open_world=True,
    structured_output=False,
)
def resolve_problem(
    query: Annotated[
        str,
        Field(
            description=("A problem URL, slug or prefixed id, e.g. `two-sum`, `cf1A`, `abc300_a`.")
        ),
    ],
) -> str:
    """The problem a link, slug or id refers to, on any platform, shown as get_problem shows it."""
    return problems_text(services.problem_resolve(query=query))


@registry.tool(
    name="get_platform_status",
    title="Platform status",
    read_only=True,
    open_world=True,
    structured_output=False,
)
def get_platform_status() -> str:
    """Per platform: problems held, lacking content, not embedded. Needs the API token."""
    return output_truncate(status_render(services.platform_status_get()))


@registry.prompt(name="daily_challenge_brief", title="Daily challenge brief")
def daily_challenge_brief(date: str = "", domain: str = "com", language: str = "ru") -> str:
    """A short brief of the LeetCode daily challenge: what it asks, how hard, a hint
    without the solution. Arguments: date (YYYY-MM-DD, today by default), domain (com/cn),
    language (ru/en)."""
    arguments: dict[str, object] = {"domain": domain or "com"}
    if date:
        arguments["date"] = date
    return prompt_text(
        language,
        ru="Подготовь краткий обзор ежедневной задачи. Шаги (инструменты и их аргументы):",
        en="Brief the daily challenge. Steps (tools and their arguments):",
        steps=[prompt_step("get_daily_challenge", arguments)],
        end_ru="Напиши название, сложность, теги и ссылку; в трёх предложениях объясни, что "
        "требуется, и дай одну подсказку, не решение.",
        end_en="Give the title, difficulty, tags and link; explain in three sentences what is "
        "asked, and give one hint, not the solution.",
    )
