"""The first answers on stdio, given while Django and the apps are still loading.

A desktop client spawns `manage.py runmcp` for each session and gives up on a server that
has not answered `initialize` in time (the official TypeScript SDK waits 60 s). Loading
the SDK, Django and the apps takes most of a second on an idle machine; the first start on
a fresh data directory also migrates the embedded database, several seconds more.

So from its first instant the process reads stdin on a thread of its own, which imports
nothing but the standard library. Until the server is ready it answers `initialize`,
`ping` and `tools/list` itself (or, to a client of the handshake-free protocol of
2026-07-28, `server/discover` and `tools/list`), from the catalog (`mcp_catalog.json`
beside this file: the very answers the assembled server gives, recorded by `manage.py runmcp
--write-catalog`; a test fails while it differs from the code). Every other line is kept,
in order. When the server is ready, `hand_over` gives it the kept lines (the client's
`initialize` or `server/discover` first, under an id of its own whose answer is not
written, so the SDK's session is opened exactly as the client asked) and then stdin as
it comes. The SDK's client probes `server/discover` first and gives up on it after 10 s,
falling back to `initialize`: were the probe left to a server still migrating a fresh
database, the server would take the probe's protocol and refuse the handshake the client
went on with.

When set-up fails after `initialize` was answered (a database not migrated, a malformed
setting), the client is not left waiting: `refuse` answers every request with the reason
(a tool call as a tool error the model can read), until stdin ends.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO

from core.stdio import take_wire, write_all

logger = logging.getLogger(__name__)

CATALOG_PATH = Path(__file__).with_name("mcp_catalog.json")
# A longer line (a tool call carrying images, say) waits for the server unread: it would
# be parsed twice otherwise, and none of the messages answered here is that long.
EARLY_LINE_BYTES = 64 * 1024
BOM = "\ufeff".encode()
INTERNAL_ERROR = -32603
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
COMPACT = (",", ":")  # as the server writes its lines: no spaces, fewer of the model's tokens

_current: Early | None = None


def current() -> Early | None:
    """The early reader of this process, when `start` started one."""
    return _current


def start(argv: list[str], stdin: BinaryIO) -> Early | None:
    """Start answering on stdin for `runmcp` on stdio (`argv`), writing on the wire that
    `core.stdio` set aside; None when there is no catalog for the apps it serves (then
    the server answers everything once ready)."""
    global _current
    if stdin.isatty():
        return None  # a person at a terminal, not a client: errors end the process at once
    try:
        catalog = json.loads(CATALOG_PATH.read_bytes())
        served = catalog_served(catalog, served_apps(argv))
    except (OSError, ValueError, KeyError) as exc:
        logger.warning("no early answers on stdio (%s): the server answers once ready", exc)
        return None
    if served is None:
        return None
    _current = Early(stdin, take_wire(), catalog, *served)
    _current.start()
    return _current


def served_apps(argv: list[str]) -> list[str] | None:
    """The app labels of `--apps` in `argv` (None: every app)."""
    args = argv[2:]
    values = [a.split("=", 1)[1] for a in args if a.startswith("--apps=")]
    values += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--apps"]
    if not values:
        return None
    return [app.strip() for app in values[-1].split(",") if app.strip()] or None


def catalog_served(
    catalog: dict[str, Any], apps: list[str] | None
) -> tuple[dict[str, Any], dict[str, Any], list[Any]] | None:
    """The initialize and discover results and the tools of `apps` (None: all) in the
    catalog; None when it does not know one of them (the server's own error names it)."""
    order: list[str] = catalog["apps"]
    if apps is not None and any(app not in order for app in apps):
        return None
    served = [app for app in order if apps is None or app in apps]
    tools = [tool for app in served for tool in catalog["tools"][app]]
    key = ",".join(served)
    return catalog["initialize"][key], catalog["discover"][key], tools


class Early:
    """Reads stdin from the start; answers what the catalog can answer until `hand_over`."""

    def __init__(
        self,
        stdin: BinaryIO,
        wire: BinaryIO,
        catalog: dict[str, Any],
        initialize: dict[str, Any],
        discover: dict[str, Any],
        tools: list[Any],
    ) -> None:
        self.wire = wire
        self._stdin = stdin
        self._versions: list[str] = catalog["handshake_versions"]
        self._latest: str = catalog["latest_handshake_version"]
        self._initialize = initialize
        self._modern_versions: list[str] = catalog["modern_versions"]
        self._discover = discover
        self._modern_list: dict[str, Any] = catalog["modern_tools_list"]
        self._unsupported: dict[str, Any] = catalog["unsupported_version"]
        self.tools = tools
        self._lock = threading.Lock()
        self._kept: list[bytes] = []
        self._eof = False
        self._handed: tuple[Any, Any] | None = None  # (event loop token, send stream)
        self._refusal: str | None = None
        self._thread = threading.Thread(target=self._read, name="stdio-early", daemon=True)
        # The id under which the client's `initialize` or `server/discover` reaches the
        # server: its answer was given already, so the server's is not written.
        self.replay_id = f"tool-hub:initialize:{os.urandom(6).hex()}"
        self.initialized = False  # `initialize` answered here
        self.discovered = False  # `server/discover` answered here
        self.tools_listed = False  # `tools/list` answered here

    def start(self) -> None:
        self._thread.start()

    def hand_over(self, send: Any, token: Any) -> tuple[list[bytes], bool]:
        """From now on each line read goes to `send` (an anyio stream, on the loop of
        `token`); returns the lines kept so far, in order, and whether stdin has ended."""
        with self._lock:
            self._handed = (token, send)
            kept, self._kept = self._kept, []
            return kept, self._eof

    def refuse(self, reason: str) -> None:
        """Set-up failed: answer the requests kept and every later one with `reason`;
        returns when stdin ends."""
        with self._lock:
            self._refusal = reason
            kept, self._kept = self._kept, []
            for line in kept:
                self._answer_or_keep(line)
        self._thread.join()

    def _read(self) -> None:
        while True:
            line = self._stdin.readline()
            with self._lock:
                handed = self._handed
                if handed is None:
                    if not line:
                        self._eof = True
                        return
                    if line.strip():
                        self._answer_or_keep(line)
                    continue
            if not self._deliver(handed, line):
                return

    @staticmethod
    def _deliver(handed: tuple[Any, Any], line: bytes) -> bool:
        """Give `line` to the server (b"": stdin ended); False when reading is over."""
        import anyio.from_thread  # loaded by the server by now

        token, send = handed
        try:
            if not line:
                anyio.from_thread.run_sync(send.close, token=token)
                return False
            anyio.from_thread.run(send.send, line, token=token)
        except Exception:  # the server has stopped: nothing more to hand it
            return False
        return True

    def _answer_or_keep(self, line: bytes) -> None:
        try:
            self._answer(line)
        except Exception:  # never a client left waiting: the server answers it instead
            logger.exception("the early reader could not answer a line; the server will")
            self._kept.append(line)

    def _answer(self, line: bytes) -> None:
        """Answer `line` from the catalog, or keep it for the server (under the lock)."""
        message = _parsed(line)
        if message is None:
            self._keep(line, None)
            return
        method, message_id = message.get("method"), message.get("id")
        is_request = isinstance(message_id, str | int) and not isinstance(message_id, bool)
        opened = self.initialized or self.discovered
        if method == "initialize" and is_request and not opened:
            version = _requested_version(message.get("params"))
            if version is not None:
                self._answer_initialize(message, version)
                return
        elif method == "server/discover" and is_request and not opened:
            version = _enveloped_version(message.get("params"))
            if version is not None:
                self._answer_discover(message, version)
                return
        elif self.discovered and is_request and method == "tools/list":
            version = _enveloped_version(message.get("params"))
            if version in self._modern_versions:
                result = {**self._modern_list, "tools": self.tools}
                self._write({"jsonrpc": "2.0", "id": message_id, "result": result})
                self.tools_listed = True
                return
        elif self.initialized and is_request and method == "ping":
            self._write({"jsonrpc": "2.0", "id": message_id, "result": {}})
            return
        elif self.initialized and is_request and method == "tools/list":
            params = message.get("params") or {}
            if isinstance(params, dict) and set(params) <= {"_meta"}:
                self._write({"jsonrpc": "2.0", "id": message_id, "result": {"tools": self.tools}})
                self.tools_listed = True
                return
        self._keep(line, message)

    def _answer_initialize(self, message: dict[str, Any], version: str) -> None:
        negotiated = version if version in self._versions else self._latest
        result = {**self._initialize, "protocolVersion": negotiated}
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        self.initialized = True
        self._replay(message)

    def _answer_discover(self, message: dict[str, Any], version: str) -> None:
        """The server's discover result; for a version it does not speak, its error
        (which opens nothing: the client probes again at a version named in it)."""
        if version not in self._modern_versions:
            data = {"supported": self._modern_versions, "requested": version}
            error = {**self._unsupported, "data": data}
            self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})
            return
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": self._discover})
        self.discovered = True
        self._replay(message)

    def _replay(self, message: dict[str, Any]) -> None:
        """Keep the handshake answered here for the server, under the replay id."""
        replay = {**message, "id": self.replay_id}
        self._keep(
            json.dumps(replay, ensure_ascii=False, separators=COMPACT).encode() + b"\n", replay
        )

    def _keep(self, line: bytes, message: dict[str, Any] | None) -> None:
        if self._refusal is None:
            self._kept.append(line)
            return
        if message is None or message.get("id") in (None, self.replay_id):
            return  # a notification, or a line the server would have refused anyway
        text = f"The tool hub could not start: {self._refusal}"
        if message.get("method") == "tools/call":
            result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
            if self.discovered:  # a 2026-07-28 session: every result says it is complete
                result["resultType"] = "complete"
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        else:
            error = {"code": INTERNAL_ERROR, "message": text}
            self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})

    def _write(self, reply: dict[str, Any]) -> None:
        write_all(
            self.wire, json.dumps(reply, ensure_ascii=False, separators=COMPACT).encode() + b"\n"
        )


def _parsed(line: bytes) -> dict[str, Any] | None:
    """The JSON object on `line`, when it is short enough to read here and is one."""
    if len(line) > EARLY_LINE_BYTES:
        return None
    if line.startswith(BOM):
        line = line[len(BOM) :]
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None


def _enveloped_version(params: object) -> str | None:
    """The protocol version in the `_meta` envelope of a request of the 2026-07-28
    protocol, when the server would read the request (no parameters but the envelope,
    its required keys present, the client named as the handshake names it); else None."""
    if not isinstance(params, dict) or set(params) != {"_meta"}:
        return None
    meta = params["_meta"]
    if not isinstance(meta, dict):
        return None
    version = meta.get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str) or not isinstance(meta.get(CAPABILITIES_KEY), dict):
        return None
    if CLIENT_INFO_KEY in meta and not _named(meta[CLIENT_INFO_KEY]):
        return None
    return version


def _named(client: object) -> bool:
    """`client` names a client as `initialize` and the envelope carry it."""
    if not isinstance(client, dict):
        return False
    return isinstance(client.get("name"), str) and isinstance(client.get("version"), str)


def _requested_version(params: object) -> str | None:
    """The protocol version an `initialize` asks for, when its parameters are ones the
    server accepts (else the server answers it, with its own error)."""
    if not isinstance(params, dict):
        return None
    version, client = params.get("protocolVersion"), params.get("clientInfo")
    if not isinstance(version, str) or not isinstance(params.get("capabilities"), dict):
        return None
    return version if _named(client) else None
