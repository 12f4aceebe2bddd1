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
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

from core.mcp_server import build_server, load_registries
from core.stdio_early import CATALOG_PATH
from core.tool_reference import reference_write

CLIENT = {"name": "tool-hub catalog", "version": "1"}


def catalog_record() -> dict[str, Any]:
    """The catalog: the versions the handshake negotiates; the initialize result (its
    protocol version left null, in its place) of each set of apps a server may serve
    (their capabilities differ), keyed by their labels in app order; and each app's tools
    as `tools/list` gives them. For clients of the handshake-free protocol (2026-07-28):
    its versions, the `server/discover` result of each set of apps, the `tools/list`
    result around the tools (`tools` null, in its place) and the error that refuses a
    version the server does not speak."""
    apps = [registry.app for registry in load_registries()]
    initialize: dict[str, Any] = {}
    discover: dict[str, Any] = {}
    modern_list: dict[str, Any] | None = None
    tools: dict[str, list[dict[str, Any]]] = {}
    for size in range(1, len(apps) + 1):
        for served in itertools.combinations(apps, size):
            answers = anyio.run(_answers, build_server(list(served), recorded=False))
            answers["initialize"]["protocolVersion"] = None  # the client's, when the SDK has it
            initialize[",".join(served)] = answers["initialize"]
            modern = anyio.run(_modern_answers, build_server(list(served), recorded=False))
            discover[",".join(served)] = modern["discover"]
            listed = {**modern["tools/list"], "tools": None}
            if modern_list not in (None, listed):
                raise RuntimeError(f"tools/list of {served} is not wrapped as the others")
            modern_list = listed
            if size == 1:
                tools[served[0]] = answers["tools"]
            elif answers["tools"] != [tool for app in served for tool in tools[app]]:
                raise RuntimeError(f"the tools of {served} are not their apps' tools in order")
    refused = anyio.run(_modern_answers, build_server(apps[:1], recorded=False), "1999-01-01")[
        "discover"
    ]
    return {
        "handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "latest_handshake_version": LATEST_HANDSHAKE_VERSION,
        "initialize": initialize,
        "modern_versions": list(MODERN_PROTOCOL_VERSIONS),
        "discover": discover,
        "modern_tools_list": modern_list,
        "unsupported_version": {"code": refused["code"], "message": refused["message"]},
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
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}
    results, lines = await _asked(
        server,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ],
    )
    initialized, listed = results["initialize"], results["tools/list"]
    if set(listed) != {"tools"}:
        raise RuntimeError(f"tools/list answered more than its tools: {sorted(listed)}")
    return {"initialize": initialized, "tools": listed["tools"], "lines": lines}


def envelope(version: str) -> dict[str, Any]:
    """The `_meta` every request of the 2026-07-28 protocol carries (no handshake)."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


async def _modern_answers(
    server: MCPServer[Any], version: str = LATEST_MODERN_VERSION
) -> dict[str, Any]:
    """What `server` answers a client of the handshake-free protocol (2026-07-28): the
    `server/discover` it probes with (asking for `version`; a version the server does
    not speak is answered with an error) and the `tools/list` after it; the lines it
    wrote for them (ids 1 and 2)."""
    params = {"_meta": envelope(version)}
    results, lines = await _asked(
        server,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": params},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params},
        ],
    )
    return {"discover": results["server/discover"], "tools/list": results["tools/list"],
            "lines": lines}  # fmt: skip


async def _asked(
    server: MCPServer[Any], messages: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """`messages` sent to `server` over the SDK's own session, as a client on stdio
    sends them: each request's result (its error, when refused) and the line the server
    wrote for it, by method."""
    to_server, server_reads = create_context_streams[SessionMessage | Exception](4)
    server_writes, from_server = create_context_streams[SessionMessage](4)
    lowlevel = server._lowlevel_server
    results: dict[str, Any] = {}
    lines: dict[str, str] = {}
    async with anyio.create_task_group() as tasks:
        options = lowlevel.create_initialization_options()
        tasks.start_soon(lowlevel.run, server_reads, server_writes, options)
        for message in messages:
            parsed = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
            await to_server.send(SessionMessage(parsed))
            if "id" not in message:
                continue
            reply = await from_server.receive()
            line = reply.message.model_dump_json(by_alias=True, exclude_unset=True)
            answer = json.loads(line)
            lines[message["method"]] = line
            results[message["method"]] = answer.get("result", answer.get("error"))
        await to_server.aclose()
        tasks.cancel_scope.cancel()
    return results, lines
