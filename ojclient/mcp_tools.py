"""MCP tools of the online-judge problem API client."""

from config.mcp_registry import ToolRegistry

registry = ToolRegistry(
    app="ojclient",
    title="Online judge",
    description=(
        "Competitive-programming problems from an online-judge problem API: the daily "
        "challenge, a problem by source and id, similar problems, resolving a link or a "
        "name, and the platform's status."
    ),
)
