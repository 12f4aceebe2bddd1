"""MCP over stdio where every line gets an answer, and only protocol lines reach stdout.

The SDK's server runs on two streams of ours: the messages read from stdin
(`lines_serve` answers the lines it cannot read) and a locked writer on the wire that the
diversion in `core.stdio` set aside (descriptor 1 keeps pointing at stderr throughout).
Each line is parsed once, from its bytes, by the SDK's own message validator; an outgoing
message is serialized once by pydantic. Nothing steps through a line character by
character in Python, so a 100 MB tool call moves at the speed of the parser.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream
from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.shared._context_streams import (
    ContextReceiveStream,
    ContextSendStream,
    create_context_streams,
)
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

from core.stdio import take_wire, write_all
from core.stdio_early import Early
from core.text_rule import text_fault

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
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

    Shared by the writer of the server's messages and the answers to lines the server
    cannot read; the lock keeps two messages from interleaving on the pipe. Each reply
    settles its request in the ledger.
    """

    def __init__(
        self, wire: BinaryIO, ledger: Ledger | None = None, *, unwritten: str | None = None
    ) -> None:
        self._wire = wire
        self._lock = anyio.Lock()
        self.ledger = ledger or Ledger()
        self._unwritten = unwritten  # the id whose answer was given early (core.stdio_early)

    async def send(self, data: bytes, *, answers: tuple[object, ...] = ()) -> None:
        """Write one line (`data` ends with a newline); `answers`: the ids it replies to."""
        async with self._lock:
            await anyio.to_thread.run_sync(write_all, self._wire, data)
        for message_id in answers:
            self.ledger.settled(message_id)

    async def message(self, message: JSONRPCMessage) -> None:
        """Write a message of the server's, serialized by pydantic (not scanned here)."""
        data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        replied = isinstance(message, JSONRPCResponse | JSONRPCError)
        if replied and self._unwritten is not None and message.id == self._unwritten:  # type: ignore[union-attr]
            if isinstance(message, JSONRPCError):
                logger.error("the server refused the handshake answered early: %s", data[:300])
            self.ledger.settled(message.id)  # type: ignore[union-attr]
            return
        await self.send(data, answers=(message.id,) if replied else ())  # type: ignore[union-attr]

    async def answer(self, reply: Answer) -> None:
        """Write an answer made here to a line the server could not read."""
        await self.send(reply.text.encode("utf-8") + b"\n", answers=reply.ids)


@dataclass(frozen=True)
class Answer:
    """The reply to a line the server cannot read, and the ids it settles."""

    text: str
    ids: tuple[str | int, ...] = ()


BOM = "\ufeff".encode()


def message_read(line: bytes) -> JSONRPCMessage | Answer | None:
    """The message on one line of stdin, or the answer that refuses it (None: no answer).

    Parsed once, from the bytes as they came (a 100 MB line is not copied into a str
    first); bytes that are not UTF-8 are read with replacement characters, as a text
    stream would read them. A byte-order mark before the message is skipped, as JSON
    parsers may skip it.
    """
    if line.startswith(BOM):
        line = line[len(BOM) :]
    try:
        return mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        reason: Exception = exc
    text = line.decode("utf-8", errors="replace")
    if text.encode("utf-8") != line:  # not UTF-8: read as a text stream reads it
        try:
            return mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValueError as exc:
            reason = exc
    return refusal(text, reason)


def message_note(message: JSONRPCMessage, ledger: Ledger) -> None:
    """Record a request awaiting its reply; a cancellation settles the request it names
    (the server then sends no reply)."""
    if isinstance(message, JSONRPCRequest):
        ledger.asked(message.id)
    elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
        ledger.settled((message.params or {}).get("requestId"))


async def lines_serve(
    lines: AsyncIterable[bytes],
    wire: WireWriter,
    messages: ContextSendStream[SessionMessage | Exception],
    *,
    drain_seconds: float = 0,
) -> None:
    """Hand every message of stdin to the server; answer the lines it cannot read.

    The SDK's own stdio reader hands a line it cannot validate to the session as an
    exception, and the client waiting on that request never hears back. Here such a line
    gets a JSON-RPC error instead: -32700 when it is not JSON, -32600 when it is JSON but
    not a message the server accepts (a batch, nesting too deep, a lone surrogate, an id
    that is neither a string nor an integer, ...), with the request's id when the line
    carries one. A notification (no id) is not answered, as JSON-RPC requires; blank
    lines are skipped.

    At the end of stdin (the client asks the server to shut down) the requests already
    read are still answered, for at most `drain_seconds`, before the server sees the end.
    """
    async with messages:
        async for line in lines:
            if not line or line.isspace():
                continue
            found = message_read(line)
            if isinstance(found, Answer):
                await wire.answer(found)
            elif found is not None:
                message_note(found, wire.ledger)
                await messages.send(SessionMessage(found))
        left = await wire.ledger.drained(drain_seconds)
        if left:
            logger.warning("stdin closed: %d request(s) left unanswered after the drain", left)


async def messages_write(messages: ContextReceiveStream[SessionMessage], wire: WireWriter) -> None:
    """Write the server's messages to the wire until the server closes its stream."""
    async with messages:
        async for session_message in messages:
            await wire.message(session_message.message)


def rejection(line: str) -> str | None:
    """None when the server accepts `line`; else the error reply ("" for a notification)."""
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        answer = refusal(line, exc)
        return answer.text if answer else ""
    return None


def refusal(line: str, reason: Exception) -> Answer | None:
    """The answer to `line`, which failed validation for `reason` (None: a notification)."""
    if line.lstrip().startswith("["):
        return batch_refusal(line)
    members = top_level_members(line)
    if "method" in members and "id" not in members:
        logger.warning("dropped an unreadable notification: %s", short(str(reason)))
        return None  # JSON-RPC: a notification is never answered
    message_id = find_top_level_id(line)
    try:
        parsed = json.loads(line)  # only to tell invalid JSON from an invalid message
    except RecursionError:
        code, text = INVALID_REQUEST, "Invalid Request: JSON nested too deep"
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            code, text = PARSE_ERROR, f"Parse error: not valid JSON ({exc.msg})"
        else:
            code, text = INVALID_REQUEST, f"Invalid Request: {exc}"
    else:
        # a lone surrogate escaped in a string («\ud800») is JSON the SDK's parser refuses:
        # the text rule names where it is, as it does for a tool's argument
        fault = text_fault(parsed) if parsed is not None else None
        if fault is not None and fault.rule == "text_surrogate":
            code, text = INVALID_PARAMS, f"Invalid params: {fault.field}: {fault.message}"
        else:
            code, text = INVALID_REQUEST, f"Invalid Request: {first_error(reason)}"
    logger.warning("answered an unreadable line with %s: %s", code, short(text))
    return Answer(
        error_text(message_id, code, text), (message_id,) if message_id is not None else ()
    )


def error_text(message_id: str | int | None, code: int, text: str) -> str:
    error = {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": short(text)}}
    return json.dumps(error, ensure_ascii=False)


BATCH_TEXT = (
    "Invalid Request: JSON-RPC batches are not part of MCP (since 2025-06-18): "
    "send each message on its own line"
)


def batch_refusal(line: str) -> Answer | None:
    """A batch (a JSON array): an array with an error for each request in it (JSON-RPC's
    batch reply), one error when none can be told apart, nothing when it holds only
    notifications."""
    try:
        batch = json.loads(line)
    except RecursionError:
        return Answer(error_text(None, INVALID_REQUEST, "Invalid Request: JSON nested too deep"))
    except ValueError as exc:
        text = f"Parse error: not valid JSON ({getattr(exc, 'msg', exc)})"
        return Answer(error_text(None, PARSE_ERROR, text))
    if not isinstance(batch, list) or not batch:
        return Answer(error_text(None, INVALID_REQUEST, BATCH_TEXT))
    ids = [m.get("id") if isinstance(m, dict) else None for m in batch]
    notifications = [isinstance(m, dict) and "method" in m and "id" not in m for m in batch]
    if all(notifications):
        logger.warning("dropped a batch of %d notification(s)", len(batch))
        return None
    usable = tuple(i for i in ids if isinstance(i, str | int) and not isinstance(i, bool))
    errors = [
        {"jsonrpc": "2.0", "id": i, "error": {"code": INVALID_REQUEST, "message": BATCH_TEXT}}
        for i, notification in zip(ids, notifications, strict=True)
        if not notification
    ]
    logger.warning("answered a batch of %d message(s) with errors", len(batch))
    return Answer(json.dumps(errors, ensure_ascii=False), usable)


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


async def serve_stdio(server: MCPServer[Any], early: Early | None = None) -> None:
    """Serve `server` on stdin/stdout, answering every line (see `lines_serve`); with
    `early`, the lines it kept come first, then those its reader goes on reading.

    Relies on `MCPServer._lowlevel_server` and the SDK's context streams (mcp 2.3; pinned
    by tests/test_mcp_stdio_robust.py): the SDK's `run_stdio_async` offers no way to hand
    it streams, and its stdio reader validates every line a second time.
    """
    lines: AsyncIterable[bytes]
    if early is None:
        wire = WireWriter(take_wire())
        lines = anyio.wrap_file(sys.stdin.buffer)
    else:
        wire = WireWriter(early.wire, unwritten=early.replay_id)
        send, receive = anyio.create_memory_object_stream[bytes](0)
        kept, ended = early.hand_over(send, anyio.lowlevel.current_token())
        if ended:  # stdin ended before: the reader has stopped, and no line will come
            send.close()
        lines = handed_lines(kept, ended, receive)
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    lowlevel = server._lowlevel_server
    drain = settings.MCP_STDIO_DRAIN_SECONDS
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: lines_serve(lines, wire, read_writer, drain_seconds=drain))
        tasks.start_soon(messages_write, write_reader, wire)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        await write_stream.aclose()


async def handed_lines(
    kept: list[bytes], ended: bool, rest: MemoryObjectReceiveStream[bytes]
) -> AsyncIterator[bytes]:
    """The lines the early reader kept, then those it hands over as it reads them."""
    async with rest:
        for line in kept:
            yield line
        if ended:
            return
        async for line in rest:
            yield line
