"""MCP tools of the NormaGPT agent on Russian construction norms."""

from config.mcp_registry import ToolRegistry

registry = ToolRegistry(
    app="normagpt",
    title="NormaGPT",
    description=(
        "An agent that answers questions on Russian construction norms (ГОСТ, СП, СНиП) "
        "from a corpus of norm documents — plan, search, judge, answer — citing the "
        "clauses and pages it rests on."
    ),
)
