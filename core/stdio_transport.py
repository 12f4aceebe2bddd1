"""MCP over stdio where every line gets an answer, and only protocol lines reach stdout.

The SDK's stdio transport is used as it is, given two streams of ours: the stdin lines it
can read (`AnsweringStdin` answers the others) and a locked writer on the wire that the
diversion in `core.stdio` set aside (descriptor 1 keeps pointing at stderr throughout).
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types
from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from core.stdio import take_wire

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
_ERROR_TEXT_CHARS = 300


class Ledger:
    """The client's requests not answered yet, so that stdin's end does not drop them."""

    def __init__(self) -> None:
        self._pending: set[str | int] = set()
        self._drained = anyio.Event()
        self._drained.set()

    def asked(self, message_id: str | int) -> None:
        self._pending.add(message_id)
        if self._drained.is_set():
            self._drained = anyio.Event()

    def settled(self, message_id: object) -> None:
        """`message_id` was answered, or cancelled by the client (then no answer comes)."""
        if isinstance(message_id, str | int):
            self._pending.discard(message_id)
        if not self._pending:
            self._drained.set()

    async def drained(self, seconds: float) -> int:
        """Wait until every request is answered, at most `seconds`; how many are left."""
        with anyio.move_on_after(seconds):
            await self._drained.wait()
        return len(self._pending)


class WireWriter:
    """Writes whole protocol lines to the wire, one writer at a time.

    Shared by the SDK's writer task and the answers to lines the SDK cannot read; the
    lock keeps two messages from interleaving on the pipe. Each reply settles its request
    in the ledger.
    """

    def __init__(self, wire: BinaryIO, ledger: Ledger | None = None) -> None:
        self._wire = wire
        self._lock = anyio.Lock()
        self.ledger = ledger or Ledger()

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        async with self._lock:
            await anyio.to_thread.run_sync(self._wire.write, data)
        members = top_level_members(text)
        if "id" in members and "method" not in members:
            self.ledger.settled(find_top_level_id(text))

    async def flush(self) -> None:
        return None  # the wire is unbuffered


class AnsweringStdin:
    """The lines of stdin the SDK can read; every other line is answered here.

    The SDK's stdio reader hands a line it cannot validate to the session as an
    exception, and the client waiting on that request never hears back. Here such a line
    gets a JSON-RPC error instead: -32700 when it is not JSON, -32600 when it is JSON but
    not a message the server accepts (nesting too deep, a number too long, a lone
    surrogate, ...), with the request's id when the line carries one. A notification
    (no id) is not answered, as JSON-RPC requires; blank lines are skipped.

    At the end of stdin (the client asks the server to shut down) the requests already
    read are still answered, for at most `drain_seconds`, before the SDK sees the end.
    """

    def __init__(
        self, lines: AsyncIterable[str], wire: WireWriter, *, drain_seconds: float = 0
    ) -> None:
        self._lines = lines
        self._wire = wire
        self._drain_seconds = drain_seconds

    async def __aiter__(self) -> AsyncIterator[str]:
        ledger = self._wire.ledger
        async for line in self._lines:
            if not line.strip():
                continue
            reply = rejection(line)
            if reply is None:
                note_request(line, ledger)
                yield line
            elif reply:
                await self._wire.write(reply + "\n")
        left = await ledger.drained(self._drain_seconds)
        if left:
            logger.warning("stdin closed: %d request(s) left unanswered after the drain", left)


def note_request(line: str, ledger: Ledger) -> None:
    """Record a request `line` (valid JSON-RPC) awaiting its reply; a cancellation settles
    the request it names (the server then sends no reply)."""
    members = top_level_members(line)
    if "method" not in members:
        return
    if "id" in members:
        message_id = _id_value(line.lstrip(), members["id"])  # one scan of a long line
        if message_id is not None:
            ledger.asked(message_id)
        return
    message = json.loads(line)
    if message.get("method") == "notifications/cancelled":
        ledger.settled((message.get("params") or {}).get("requestId"))


def rejection(line: str) -> str | None:
    """None when the SDK accepts `line`; else the error reply ("" for a notification)."""
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        reason = exc
    else:
        return None
    members = top_level_members(line)
    if "method" in members and "id" not in members:
        logger.warning("dropped an unreadable notification: %s", short(str(reason)))
        return ""  # JSON-RPC: a notification is never answered
    message_id = find_top_level_id(line)
    try:
        json.loads(line)  # only to tell invalid JSON from an invalid message
    except RecursionError:
        code, text = INVALID_REQUEST, "Invalid Request: JSON nested too deep"
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            code, text = PARSE_ERROR, f"Parse error: not valid JSON ({exc.msg})"
        else:
            code, text = INVALID_REQUEST, f"Invalid Request: {exc}"
    else:
        code, text = INVALID_REQUEST, f"Invalid Request: {first_error(reason)}"
    logger.warning("answered an unreadable line with %s: %s", code, short(text))
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": message_id,
            "error": {"code": code, "message": short(text)},
        },
        ensure_ascii=False,
    )


def first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        if errors:
            return str(errors[0]["msg"])
    return str(exc)


def short(text: str) -> str:
    return text if len(text) <= _ERROR_TEXT_CHARS else text[: _ERROR_TEXT_CHARS - 1] + "…"


_ID_NUMBER = re.compile(r"-?\d{1,18}")


def find_top_level_id(line: str) -> str | int | None:
    """The `id` member of a top-level JSON object, read without parsing the whole line.

    None when there is no readable id (not an object, no id, an id that is neither a
    short string nor an integer).
    """
    members = top_level_members(line)
    return _id_value(line.lstrip(), members["id"]) if "id" in members else None


_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)  # a whole JSON string, at C speed
_STRUCTURE = re.compile(r'["{}\[\],]')  # what the scan stops at: the rest is skipped


def top_level_members(line: str) -> dict[str, int]:
    """The keys of a top-level JSON object, each with where its value starts.

    A scan that tracks string state and depth, so it works on lines no parser accepts
    (nesting too deep, numbers too long, lone surrogates). It jumps from one structural
    character to the next and over whole strings by regular expression: a 100 MB line of
    base64 images takes milliseconds, not a Python step per character.
    """
    text = line.lstrip()
    members: dict[str, int] = {}
    if not text.startswith("{"):
        return members
    depth = 0
    expect_key = False
    found = _STRUCTURE.search(text)
    while found is not None:
        i = found.start()
        ch = text[i]
        if ch == '"':
            end = _string_end(text, i)
            if end < 0:
                break
            if depth == 1 and expect_key:
                rest = text[end + 1 : end + 65].lstrip(" \t\r\n")
                if rest.startswith(":"):
                    colon = text.index(":", end + 1)
                    members.setdefault(text[i + 1 : end], colon + 1)
            expect_key = False
            found = _STRUCTURE.search(text, end + 1)
            continue
        if ch in "{[":
            depth += 1
            expect_key = ch == "{" and depth == 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 1:
            expect_key = True
        found = _STRUCTURE.search(text, i + 1)
    return members


def _string_end(text: str, start: int) -> int:
    """Index of the quote closing the string that opens at `start`, or -1."""
    match = _STRING.match(text, start)
    return match.end() - 1 if match else -1


def _id_value(text: str, start: int) -> str | int | None:
    rest = text[start:].lstrip()
    if rest.startswith('"'):
        end = _string_end(rest, 0)
        if end < 0 or end > 256:
            return None
        try:
            value = json.loads(rest[: end + 1])
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    match = _ID_NUMBER.match(rest)
    if match and (len(rest) == match.end() or rest[match.end()] in " \t\r\n,}"):
        return int(match.group())
    return None


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` on stdin/stdout, answering every line (see `AnsweringStdin`).

    Relies on `MCPServer._lowlevel_server` (mcp 2.3; pinned by tests/test_mcp_stdio_robust.py):
    the SDK's `run_stdio_async` offers no way to hand it streams.
    """
    wire = WireWriter(take_wire())
    source = anyio.wrap_file(
        io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="\n")
    )
    stdin = AnsweringStdin(source, wire, drain_seconds=settings.MCP_STDIO_DRAIN_SECONDS)
    lowlevel = server._lowlevel_server
    async with stdio_server(stdin=stdin, stdout=wire) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
