"""Over raw stdio every request gets a reply, even a line the SDK cannot read."""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Iterator

import pytest
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer

from core.stdio_transport import find_top_level_id, rejection
from tests.conftest import MANAGE, PYTHON, ROOT, STARTUP_DEADLINE, raw_initialize, subprocess_env

REPLY_WITHIN = 2.0  # seconds a client may wait for any reply (the bound)

INITIALIZE = raw_initialize("raw")


def call(message_id: int | str, name: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": message_id,
            "method": "tools/call",
            "params": {"name": "greet", "arguments": {"name": name}},
        }
    )


def greet_with(message_id: int, raw_name: str) -> str:
    """A tools/call line whose name argument is `raw_name`, written as raw JSON text."""
    return (
        f'{{"jsonrpc":"2.0","id":{message_id},"method":"tools/call",'
        f'"params":{{"name":"greet","arguments":{{"name":{raw_name}}}}}}}'
    )


BAD_LINES = {
    "lone surrogate": (7, greet_with(7, '"\\ud800"')),
    "nesting 10,000 deep": (8, greet_with(8, "[" * 10_000 + "]" * 10_000)),
    "5,000-digit number": (9, greet_with(9, "9" * 5_000)),
    "not JSON": (None, "hello, server"),
    "a JSON number": (None, "42"),
    "truncated object": (None, '{"jsonrpc":"2.0","id":'),
}


class RawStdio:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = REPLY_WITHIN) -> dict[str, object]:
        """The next line on stdout, parsed; fails when none arrives within `timeout`."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            pytest.fail(f"no reply within {timeout} s")
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout"
        data = json.loads(line)  # nothing but JSON-RPC reaches stdout
        assert data["jsonrpc"] == "2.0"
        return data  # type: ignore[no-any-return]

    def reply_array(self, timeout: float = REPLY_WITHIN) -> list[dict[str, object]]:
        """The next line on stdout, a JSON array (a batch's reply)."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            pytest.fail(f"no reply within {timeout} s")
        data = json.loads(self.proc.stdout.readline())
        assert isinstance(data, list)
        return data

    def no_reply(self, timeout: float = 0.5) -> bool:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return not ready


@pytest.fixture(scope="module")
def server() -> Iterator[RawStdio]:
    proc = subprocess.Popen(
        [PYTHON, MANAGE, "runmcp", "--apps", "anki_bridge"],
        cwd=ROOT,
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    raw = RawStdio(proc)
    try:
        raw.send(json.dumps(INITIALIZE))
        assert "result" in raw.reply(timeout=STARTUP_DEADLINE)
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        # `initialize` is answered while the server starts (core/stdio_early.py): the
        # first tool call's answer says it is up, and from then on REPLY_WITHIN holds.
        raw.send(call("ready", "Алиса"))
        assert raw.reply(timeout=STARTUP_DEADLINE)["id"] == "ready"
        yield raw
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize("case", list(BAD_LINES))
def test_an_unreadable_line_gets_an_error_reply_and_the_next_call_works(
    server: RawStdio, case: str
) -> None:
    expected_id, line = BAD_LINES[case]
    server.send(line)
    error = server.reply()
    assert error["id"] == expected_id
    code = error["error"]["code"]  # type: ignore[index]
    assert code in (-32700, -32600, -32602)
    if case == "not JSON":
        assert code == -32700
    if case == "lone surrogate":  # JSON, but text the rule refuses: where it is, named
        assert code == -32602
        assert "params.arguments.name: text contains a lone surrogate" in error["error"]["message"]  # type: ignore[index]

    server.send(call(100, "Алиса"))
    ok = server.reply()
    assert ok["id"] == 100
    assert ok["result"]["content"][0]["text"] == "Привет, Алиса! Я твой MCP-сервер."  # type: ignore[index]


def test_a_batch_gets_an_error_for_each_request_in_it(server: RawStdio) -> None:
    """MCP has no batches since 2025-06-18: JSON-RPC's batch reply, an array with an error
    per request (none for its notification), each naming the rule."""
    batch = [
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/x"},
        {"jsonrpc": "2.0", "id": "s", "method": "ping"},
    ]
    server.send(json.dumps(batch))
    errors = server.reply_array()
    assert [e["id"] for e in errors] == [5, "s"]
    assert all("batches are not part of MCP" in e["error"]["message"] for e in errors)
    server.send("[1, 2, 3]")  # not requests at all: an error for each, with no id
    assert [e["id"] for e in server.reply_array()] == [None, None, None]
    server.send("[]")
    assert server.reply()["error"]["code"] == -32600  # type: ignore[index]
    server.send(call(101, "Ева"))
    assert server.reply()["id"] == 101


def test_a_byte_order_mark_and_a_huge_id_are_answered(server: RawStdio) -> None:
    server.send("\ufeff" + call(102, "Ида"))
    assert server.reply()["id"] == 102
    huge = int("7" * 400)
    server.send(f'{{"jsonrpc":"2.0","id":{huge},"method":"ping"}}')
    assert server.reply()["id"] == huge


def test_blank_lines_and_bad_notifications_get_no_reply_and_break_nothing(
    server: RawStdio,
) -> None:
    server.send("")
    server.send("   ")
    server.send(
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"x":' + "9" * 5000 + "}}"
    )
    assert server.no_reply()
    server.send(call("s-1", "Боб"))
    assert server.reply()["id"] == "s-1"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"jsonrpc":"2.0","id":5,"method":"x"}', 5),
        ('{"id": "abc", "method":"x"}', "abc"),
        ('{"params":{"id":3},"id":4}', 4),  # a nested id is not the request's
        ('{"params":{"id":3}}', None),
        ('{"method":"x","params":"\\"id\\": 2"}', None),  # inside a string
        ('{"id":' + "1" * 40 + "}", None),  # not a usable id
        ('{"id":1.5}', None),
        ('[{"id":1}]', None),
        ('{"id":"unterminated', None),
        ('{"a":[' + "[" * 5000 + "]" * 5000 + '],"id":12}', 12),
    ],
)
def test_the_request_id_is_found_without_parsing_the_line(line: str, expected: object) -> None:
    assert find_top_level_id(line) == expected


def test_a_valid_message_is_left_to_the_sdk() -> None:
    assert rejection(call(1, "x")) is None
    assert rejection('{"jsonrpc":"2.0","method":"notifications/initialized"}') is None


def test_a_lone_surrogate_in_an_argument_is_refused_naming_where_it_is() -> None:
    """JSON may escape a lone surrogate («\\ud800»); the SDK's parser refuses the whole
    line. The reply names the argument and the rule, as the text rule does for a tool."""
    line = (
        '{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":'
        '"normagpt_search_norms","arguments":{"keywords":["ab\\ud800cd"]}}}'
    )
    reply = json.loads(rejection(line) or "{}")
    assert reply["id"] == 77
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"] == (
        "Invalid params: params.arguments.keywords.0: text contains a lone surrogate "
        "(\\ud800–\\udfff)"
    )


def test_the_sdk_attribute_the_transport_relies_on_is_still_there() -> None:
    """Pin: `serve_stdio` runs `MCPServer._lowlevel_server` on our streams (mcp 2.3)."""
    server = MCPServer("pin")
    assert isinstance(server._lowlevel_server, Server)
    assert callable(server._lowlevel_server.create_initialization_options)


def test_requests_sent_before_stdin_closes_are_all_answered(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A client that writes its requests and closes stdin (a script, a pipe) still gets
    every reply: the end of stdin waits for the requests in flight."""
    search = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "normagpt_search_norms", "arguments": {"keywords": ["бетон"]}},
    }
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(2, "Ада"),
        json.dumps(search),
    ]
    done = subprocess.run(
        [PYTHON, MANAGE, "runmcp"],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", REDIS_URL=None),
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=STARTUP_DEADLINE,  # a fresh database is migrated and given the sample norms
    )
    replies = {json.loads(line)["id"]: json.loads(line) for line in done.stdout.splitlines()}
    assert set(replies) == {1, 2, 3}, done.stderr.decode()[-2000:]
    assert replies[3]["result"]["isError"] is False
    assert done.returncode == 0
