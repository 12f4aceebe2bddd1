"""The LLM client: the openai SDK on core.http, with one retry policy (its own).

A server trickling one byte a second is cut at the request's deadline, a 20 MB answer is
refused at the cap, the error names the model server; retries happen once (neither the
SDK nor core.http adds its own); the SDK stays off the MCP server's start-up.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from normagpt.client import CallRecord, LlmClient
from normagpt.exceptions import LLM_SERVICE, LlmUnavailable
from tests.conftest import PYTHON, ROOT, subprocess_env
from tests.upstream_servers import MB, answer, huge, scripted, trickle

DEADLINE = 1
CUT_WITHIN = 20  # seconds; the trickle would hold a per-read client for two minutes
COMPLETION = json.dumps(
    {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
    }
).encode()


def client(base_url: str, *, timeout: float = DEADLINE, retries: int = 0) -> LlmClient:
    return LlmClient(
        base_url=f"{base_url}/v1",
        api_key="k",
        model="m",
        timeout=timeout,
        retries=retries,
        backoff=0.01,
        json_mode=False,
    )


def ask(llm: LlmClient, records: list[CallRecord] | None = None) -> str:
    messages = [{"role": "user", "content": "?"}]
    on_call = records.append if records is not None else None
    return llm.chat(messages, node="planner", on_call=on_call).text


def test_a_trickling_model_server_is_cut_at_the_deadline() -> None:
    with trickle() as server:
        started = time.monotonic()
        with pytest.raises(LlmUnavailable) as caught:
            ask(client(server.url))
        took = time.monotonic() - started
    assert took < CUT_WITHIN
    assert caught.value.message == (
        f"the model server failed for the planner: the request timed out after {DEADLINE} s"
    )
    assert caught.value.service == LLM_SERVICE


@pytest.mark.parametrize("declared", [True, False])
def test_a_20_mb_answer_is_refused_at_the_cap_and_not_retried(declared: bool) -> None:
    with huge(size=20 * MB, content_length=declared) as server:
        with pytest.raises(LlmUnavailable) as caught:
            ask(client(server.url, timeout=30, retries=2))
        assert len(server.requests) == 1
    assert "the language model (OPENAI_BASE_URL) answered more than 8,388,608 bytes" in (
        caught.value.message
    )
    assert caught.value.service == LLM_SERVICE


def test_retries_happen_once_and_every_attempt_is_reported() -> None:
    busy = answer(429, b'{"error": {"message": "busy"}}', headers={"Retry-After": "0"})
    ok = answer(200, COMPLETION, headers={"Content-Type": "application/json"})
    records: list[CallRecord] = []
    with scripted([busy, ok]) as server:
        assert ask(client(server.url, retries=1), records) == "ok"
        assert len(server.requests) == 2
    assert [r.ok for r in records] == [False, True]
    assert "HTTP 429" in records[0].error
    assert (records[1].prompt_tokens, records[1].completion_tokens) == (7, 2)


def test_without_retries_a_failure_is_one_request() -> None:
    """Neither the SDK nor core.http retries behind the client's back."""
    with scripted([answer(503, b"{}")]) as server:
        with pytest.raises(LlmUnavailable, match="HTTP 503"):
            ask(client(server.url, retries=0))
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"\xff\xfe\x00garbage\x80", "UnicodeDecodeError"),
        (b"<html>proxy error</html>", "JSONDecodeError"),
        (b'{"choices": 5}', "TypeError"),
    ],
)
def test_an_answer_that_is_no_chat_completion_is_a_named_failure(body: bytes, named: str) -> None:
    """Garbage from the model server fails the call naming the server and what came back,
    not «unexpected error: UnicodeDecodeError»."""
    garbage = answer(200, body, headers={"Content-Type": "application/json"})
    with scripted([garbage]) as server:
        with pytest.raises(LlmUnavailable) as caught:
            ask(client(server.url, retries=2))
        assert len(server.requests) == 1
    assert caught.value.message.startswith(
        f"the model server answered the planner with something that is not a chat completion "
        f"({named}: "
    )
    assert caught.value.service == LLM_SERVICE


def test_heavy_libraries_stay_off_the_start_up_path() -> None:
    code = (
        "import sys, django; django.setup()\n"
        "import anki_bridge.mcp_tools, normagpt.agent.runner, normagpt.client\n"
        "print(sorted(m for m in ('openai', 'PIL') if m in sys.modules))\n"
    )
    env = subprocess_env(DJANGO_SETTINGS_MODULE="config.settings", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [PYTHON, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
