"""The ground every app stands on; it imports no app.

errors (`core.exceptions`), the tool registry and MCP adapter (`core.registry`,
`core.mcp_server`, `core.stdio`, `core.mcp_http`), background dispatch
(`core.background`), outbound HTTP (`core.http`), rate limits (`core.limits`), the REST
error shape (`core.api`) and the MCP helpers every app shares (`core.tooling`).
`config/` wires the apps on top of it.
"""
