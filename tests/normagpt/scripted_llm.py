"""A scripted OpenAI-compatible chat server on 127.0.0.1 that plays scenarios.

The agent names its node in the `X-Normagpt-Node` header (and step in `X-Normagpt-Step`);
the script gives, per node, the replies in order (the last one repeats). A reply is the
message content (str), or a dict: {"status": 429} / {"status": 500}, {"sleep": seconds,
"content": ...} (slower than the client's timeout: a timeout), {"hang": True} (held until
`release()`; for killing a worker mid-call), {"trickle": seconds} (the status line and
headers at once, then the JSON body one byte per `seconds`, until the client gives up or
the server closes), or a function of the `Call` returning one of those (a model that reads
its prompt). Every call is recorded: node, step, run.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    node: str
    step: int
    run: int
    messages: list[dict[str, Any]]


Reply = str | dict[str, Any] | Callable[[Call], "str | dict[str, Any]"]


class ScriptedLLM:
    def __init__(self, script: dict[str, list[Reply]] | None = None) -> None:
        self.script: dict[str, list[Reply]] = script or {}
        self.calls: list[Call] = []
        self.answered: list[Call] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self.hanging = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def play(self, **script: list[Reply]) -> None:
        self.script = script

    def restart(self, **script: list[Reply]) -> None:
        """A new script, the calls forgotten and a hang armed again (the next run's turn)."""
        with self._lock:
            self.script = script
            self.calls.clear()
            self.answered.clear()
            self.hanging.clear()
            self._release.clear()

    def count(self) -> Counter[str]:
        with self._lock:
            return Counter(call.node for call in self.calls)

    def release(self) -> None:
        self._release.set()

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, node: str) -> Reply:
        with self._lock:
            n = sum(1 for call in self.calls if call.node == node)
            replies = self.script.get(node) or ["{}"]
            return replies[min(n, len(replies) - 1)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                node = self.headers.get("X-Normagpt-Node", "?")
                reply = llm._next(node)
                call = Call(
                    node,
                    int(self.headers.get("X-Normagpt-Step", "0")),
                    int(self.headers.get("X-Normagpt-Run", "0")),
                    body["messages"],
                )
                if callable(reply):
                    try:
                        reply = reply(call)
                    except Exception:  # a script's bug: said, answered as a server error
                        traceback.print_exc()
                        reply = {"status": 500}
                with llm._lock:
                    llm.calls.append(call)
                if isinstance(reply, dict) and reply.get("hang"):
                    llm.hanging.set()
                    llm._release.wait(60)
                    return
                if isinstance(reply, dict) and "trickle" in reply:
                    self._trickle(completion(body, reply.get("content", "{}")), reply["trickle"])
                    return
                if isinstance(reply, dict) and "sleep" in reply:
                    time.sleep(reply["sleep"])
                if isinstance(reply, dict) and "status" in reply:
                    self._send(reply["status"], {"error": {"message": "scripted failure"}})
                    return
                content = reply["content"] if isinstance(reply, dict) else reply
                with llm._lock:
                    llm.answered.append(call)
                self._send(200, completion(body, content))

            def _trickle(self, payload: dict[str, Any], interval: float) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.flush()
                    for i in range(len(data)):
                        if llm._release.wait(interval):
                            return  # the server closes
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up at its deadline

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if status == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout) or died

        return Handler


def completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    """A chat completion answering `body` with `content`."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


# --- Replies of the four nodes -------------------------------------------------------------


def plan(*steps: tuple[str, list[str], list[str]], goal: str = "Найти защитный слой") -> str:
    return json.dumps(
        {
            "goal": goal,
            "query_domain": "concrete_structure_design",
            "steps": [{"action": a, "keywords": k, "expected_documents": d} for a, k, d in steps],
        },
        ensure_ascii=False,
    )


COVER_STEP = ("Найти защитный слой", ["защитный слой бетона", "плиты перекрытия"], ["СП 63.13330"])
CORROSION_STEP = ("Агрессивная среда", ["агрессивная среда", "защитный слой"], ["СП 28.13330"])


def step(*findings: tuple[str, str, int, str], summary: str = "Найдено требование.") -> str:
    return json.dumps(
        {
            "findings": [
                {"document": d, "clause": c, "page": p, "quote": q} for d, c, p, q in findings
            ],
            "summary": summary,
        },
        ensure_ascii=False,
    )


COVER_FINDING = ("СП 63.13330.2018", "10.3.2", 2, "20 мм — в закрытых помещениях")


def verdict(decision: str, reason: str = "Достаточно данных.") -> str:
    return json.dumps({"decision": decision, "reason": reason}, ensure_ascii=False)


def final(answer: str, *sources: tuple[str, str, int], conditions: list[str] | None = None) -> str:
    return json.dumps(
        {
            "answer": answer,
            "sources": [{"document": d, "clause": c, "page": p} for d, c, p in sources],
            "conditions": conditions or ["Закрытые помещения, нормальная влажность"],
            "clarifying_questions": ["Сборная или монолитная плита?"],
        },
        ensure_ascii=False,
    )


ANSWER = "**Не менее 20 мм** (п. 10.3.2 СП 63.13330.2018)."


def straight_script() -> dict[str, list[Reply]]:
    return {
        "planner": [plan(COVER_STEP)],
        "executor": [step(COVER_FINDING)],
        "judge": [verdict("FINALIZE")],
        "finalizer": [final(ANSWER, ("СП 63.13330.2018", "10.3.2", 2))],
    }
