"""A large tool call over stdio: the transport reads it without a Python step per
character, and the call it carries is answered right."""

from __future__ import annotations

import base64
import gc
import json
import os
import subprocess
import sys

import pytest

from core.stdio_transport import find_top_level_id, message_read, top_level_members
from tests.conftest import MANAGE, PYTHON, ROOT, free_port, raw_initialize, subprocess_env

DEADLINE = 120.0  # seconds for the spawned server on a busy machine


def big_call(images: int, image_bytes: int) -> str:
    """An `anki.add_from_model` request carrying `images` base64 payloads."""
    payload = base64.b64encode(os.urandom(image_bytes)).decode()
    items = [
        {"Prompt": f"Вопрос {i}", "images": [{"image_base64": payload, "target_field": "Prompt"}]}
        for i in range(images)
    ]
    request = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "anki.add_from_model", "arguments": {"items": items, "deck": "Big"}},
    }
    return json.dumps(request, ensure_ascii=False)


def python_lines_run(fn, *args):  # type: ignore[no-untyped-def]
    """How many Python lines `fn(*args)` executes (its own and those it calls)."""
    count = 0

    def trace(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if event == "line":
            count += 1
        return trace

    gc.collect()  # no finalizer of an earlier test's objects runs (and counts) inside
    gc.disable()
    sys.settrace(trace)
    try:
        result = fn(*args)
    finally:
        sys.settrace(None)
        gc.enable()
    return count, result


def test_the_scan_of_a_line_does_not_step_through_its_characters() -> None:
    """A 2 MB line and a 4 MB one cost the scan the same few Python steps: strings are
    skipped by regular expression, whatever their length."""
    small, large = big_call(4, 375_000), big_call(8, 375_000)
    steps_small, members = python_lines_run(top_level_members, small)
    steps_large, _ = python_lines_run(top_level_members, large)
    assert set(members) == {"jsonrpc", "id", "method", "params"}
    assert steps_large < 2 * steps_small < 2_000  # by structure, not by size
    assert find_top_level_id(large) == 2


def test_a_readable_line_is_parsed_once_with_no_python_step_per_character() -> None:
    """The read path hands the bytes to the SDK's validator: a 4 MB line costs the same
    few Python steps as a 2 MB one, and the message comes back whole."""
    small, large = big_call(4, 375_000).encode(), big_call(8, 375_000).encode()
    steps_small, _ = python_lines_run(message_read, small)
    steps_large, message = python_lines_run(message_read, large)
    assert steps_large <= steps_small < 50
    assert message.id == 2
    assert len(message.params["arguments"]["items"]) == 8


@pytest.mark.django_db(transaction=True)
def test_a_large_call_over_stdio_is_answered_right(subprocess_db_env) -> None:  # type: ignore[no-untyped-def]
    """30 MB of images in one `anki.add_from_model` line, Anki closed: every note queued."""
    env = subprocess_env(
        **subprocess_db_env, ANKI_CONNECT_URL=f"http://127.0.0.1:{free_port()}/"
    )  # nothing listens: queued
    server = subprocess.Popen(
        [PYTHON, MANAGE, "runmcp", "--apps", "anki_bridge"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        lines = [
            json.dumps(raw_initialize("large")),
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            big_call(80, 280_000),
        ]
        out, _ = server.communicate(("\n".join(lines) + "\n").encode(), timeout=DEADLINE)
    finally:
        server.kill()
    replies = {reply["id"]: reply for reply in map(json.loads, out.splitlines())}
    result = replies[2]["result"]
    assert not result.get("isError"), result
    details = result["structuredContent"]["details"]
    assert [d["status"] for d in details] == ["queued"] * 80
