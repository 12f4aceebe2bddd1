"""The floor for `bench/mcp_overhead.py`: a minimal server on the same SDK doing the same work.

    python bench/minimal_server.py OJ_BASE_URL SQLITE_PATH [CAPTURED.json HUB_SQLITE_PATH]

Two tools over stdio, written as plainly as the SDK allows: `greet` (the same text as the
hub's) and `get_problem` (one GET on a shared keep-alive httpx client, the body validated
into the same pydantic entity, one SQLite upsert statement on a persistent WAL connection,
the same Markdown rendering). No Django, no adapter, no error mapping.

With a capture of `bench/cached_calls.py`, two cached reads too — `sdamgia_get_problem` and
`normagpt_search_norms` — as the same SDK and the same SQL and nothing else: each runs the
statements the hub ran for that read on the hub's own SQLite file and answers the hub's text.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from mcp.server.mcpserver import MCPServer

from ojclient.entities import Problem
from ojclient.formatting import output_truncate, problems_render

BASE_URL, DB_PATH = sys.argv[1], sys.argv[2]
logging.getLogger("httpx").setLevel(logging.WARNING)  # as the hub: no line per request
http = httpx.Client(headers={"Accept": "application/json"}, timeout=30)
db = sqlite3.connect(DB_PATH, check_same_thread=False, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute(
    "CREATE TABLE IF NOT EXISTS problem (source TEXT, problem_id TEXT, title TEXT, raw TEXT, "
    "fetched_at TEXT, PRIMARY KEY (source, problem_id))"
)
server = MCPServer("minimal")


@server.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Привет, {name}! Я твой MCP-сервер."


@server.tool()
def get_problem(source: str, id: str) -> str:
    """One problem by platform and id."""
    response = http.get(f"{BASE_URL}/api/v1/problems/{quote(source, safe='')}/{quote(id, safe='')}")
    response.raise_for_status()
    problem = Problem.model_validate(response.json())
    db.execute(
        "INSERT INTO problem VALUES (?, ?, ?, ?, datetime('now')) ON CONFLICT (source, problem_id) "
        "DO UPDATE SET title=excluded.title, raw=excluded.raw, fetched_at=excluded.fetched_at",
        (source, problem.id, problem.title or "", json.dumps(problem.model_dump(mode="json"))),
    )
    return output_truncate(problems_render([problem], default_source=source))


if len(sys.argv) > 4:
    captured = json.loads(Path(sys.argv[3]).read_text(encoding="utf-8"))
    hub = sqlite3.connect(sys.argv[4], check_same_thread=False, isolation_level=None)

    def replay(name: str) -> str:
        for statement in captured[name]["sql"]:
            hub.execute(statement).fetchall()
        return str(captured[name]["text"])

    @server.tool()
    def sdamgia_get_problem(subject: str, problem_id: str, exam: str = "ege") -> str:
        """One stored problem (the hub's SQL and text)."""
        return replay("sdamgia_get_problem")

    @server.tool()
    def normagpt_search_norms(keywords: list[str]) -> str:
        """Pages of the norms corpus (the hub's SQL and text)."""
        return replay("normagpt_search_norms")


if __name__ == "__main__":
    http_port = os.environ.get("MINIMAL_HTTP_PORT")  # streamable HTTP, as `runmcp --transport http`
    if http_port:
        server.run("streamable-http", host="127.0.0.1", port=int(http_port))
    else:
        server.run("stdio")
