"""The server's own answers to `initialize` and `tools/list`, recorded for the early reader.

`core.stdio_early` answers a client's first messages while Django and the apps load; it
answers with what the assembled server answers, recorded here by driving that server
in-process, one app at a time and all apps together. `manage.py runmcp --write-catalog`
(`make catalog`) writes the file; tests/test_mcp_catalog.py fails while the file differs
from what the code gives, naming that command.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from core.mcp_server import build_server, load_registries
from core.stdio_early import CATALOG_PATH
from core.tool_reference import reference_write

CLIENT = {"name": "tool-hub catalog", "version": "1"}


def catalog_record() -> dict[str, Any]:
    """The catalog: the versions the handshake negotiates; the initialize result (its
    protocol version left null, in its place) of each set of apps a server may serve
    (their capabilities differ), keyed by their labels in app order; and each app's tools
    as `tools/list` gives them."""
    apps = [registry.app for registry in load_registries()]
    initialize: dict[str, Any] = {}
    tools: dict[str, list[dict[str, Any]]] = {}
    for size in range(1, len(apps) + 1):
        for served in itertools.combinations(apps, size):
            answers = anyio.run(_answers, build_server(list(served)))
            del answers["lines"]
            answers["initialize"]["protocolVersion"] = None  # the client's, when the SDK has it
            initialize[",".join(served)] = answers["initialize"]
            if size == 1:
                tools[served[0]] = answers["tools"]
            elif answers["tools"] != [tool for app in served for tool in tools[app]]:
                raise RuntimeError(f"the tools of {served} are not their apps' tools in order")
    return {
        "handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "latest_handshake_version": LATEST_HANDSHAKE_VERSION,
        "initialize": initialize,
        "apps": apps,
        "tools": tools,
    }


def catalog_text(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, ensure_ascii=False, indent=1) + "\n"  # keys in the server's order


def catalog_write(path: Path = CATALOG_PATH) -> Path:
    """Write the catalog, and in a checkout docs/tools.md, the reference made from it."""
    catalog = catalog_record()
    path.write_text(catalog_text(catalog), encoding="utf-8")
    reference_write(catalog)
    return path


async def _answers(
    server: MCPServer[Any], version: str = LATEST_HANDSHAKE_VERSION
) -> dict[str, Any]:
    """The results of `initialize` (asking for `version`) and `tools/list`, asked of
    `server` over the SDK's own session, as a client on stdio would ask them, and the
    lines the server wrote for them (ids 1 and 2)."""
    to_server, server_reads = create_context_streams[SessionMessage | Exception](4)
    server_writes, from_server = create_context_streams[SessionMessage](4)
    lowlevel = server._lowlevel_server

    lines: dict[str, str] = {}

    async def ask(message: dict[str, Any]) -> dict[str, Any] | None:
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        await to_server.send(SessionMessage(parsed))
        if "id" not in message:
            return None
        reply = await from_server.receive()
        lines[message["method"]] = reply.message.model_dump_json(by_alias=True, exclude_unset=True)
        return json.loads(lines[message["method"]])["result"]

    async with anyio.create_task_group() as tasks:
        options = lowlevel.create_initialization_options()
        tasks.start_soon(lowlevel.run, server_reads, server_writes, options)
        params = {"protocolVersion": version, "capabilities": {}}
        initialized = await ask(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {**params, "clientInfo": CLIENT},
            }
        )
        await ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = await ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        await to_server.aclose()
        tasks.cancel_scope.cancel()
    if initialized is None or listed is None:
        raise RuntimeError("the server did not answer initialize and tools/list")
    if set(listed) != {"tools"}:
        raise RuntimeError(f"tools/list answered more than its tools: {sorted(listed)}")
    return {"initialize": initialized, "tools": listed["tools"], "lines": lines}
