"""The searches of `bench/norm_answers.py` over the user's transport: the official MCP SDK
client spawns `manage.py runmcp` on a corpus's database (or the minimal server, the floor)
over stdio and times each call: wall, and the CPU the server's threads and its PostgreSQL
backends ran (/proc schedstat, in ns: fine enough for one call)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import MANAGE, PYTHON, ROOT, cpu_threads
from bench.norm_answers_questions import FORMS, Question, clause_key
from normagpt.parsing import code_key

READY_WITHIN = 300.0  # seconds for runmcp to answer `initialize` (a cold PostgreSQL pool)
CALL_WITHIN = 120.0
WARM_UP = 10


def server_env(url: str) -> dict[str, str]:
    """The environment of a process on the corpus's database `url`, set as in production."""
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_LOG_LEVEL": "ERROR",
        "DJANGO_DEBUG": "0",  # as in production: no SQL kept per query
        "DJANGO_SECRET_KEY": "bench-norm-answers-not-a-secret",
        "DJANGO_MEDIA_ROOT": tempfile.mkdtemp(prefix="bench-norm-answers-"),
        "PYTHONUNBUFFERED": "1",
    }


@dataclass
class Asked:
    """One search: what it found (document, clause keys found on the hit), per hit."""

    question: Question
    form: str
    hits: list[tuple[str, list[str]]]
    answered: bool
    cpu_ms: float = 0.0  # the server's and its database backends'
    database_ms: float = 0.0  # of which the backends'
    wall_ms: float = 0.0
    error: str = ""

    def found(self, code: str) -> tuple[bool, bool]:
        """(hit@1, hit@5) for the question's document `code`."""
        gold, key = self.question.gold, code_key(code)
        first = self.hits[0] if self.hits else ("", [])
        hit1 = code_key(first[0]) == key and bool(first[1]) and first[1][0] in gold
        flat = [(code_key(d), c) for d, clauses in self.hits for c in clauses][:5]
        return hit1, any(d == key and c in gold for d, c in flat)

    def top(self) -> str:
        return f"{self.hits[0][0]} {', '.join(self.hits[0][1][:2])}" if self.hits else "nothing"


class Meter:
    """CPU run by a process's threads and its PostgreSQL backends (from /proc, in ns)."""

    def __init__(self, pid: int, url: str) -> None:
        self.pid = pid
        self.database = None
        if url.startswith("postgres"):
            import psycopg

            self.database = psycopg.connect(url, autocommit=True)

    def read(self) -> dict[tuple[str, int], int]:
        ran = {("t", tid): ns for tid, ns in cpu_threads(self.pid).items()}
        if self.database is not None:
            backends = self.database.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchall()
            for (pid,) in backends:
                ran[("b", pid)] = sum(cpu_threads(pid).values())  # one thread
        return ran

    @staticmethod
    def between(
        before: dict[tuple[str, int], int], after: dict[tuple[str, int], int]
    ) -> tuple[float, float]:
        """Milliseconds run between the readings, in all and by the database backends (a
        thread or backend new since: all it ran)."""
        ran = {key: ns - before.get(key, 0) for key, ns in after.items()}
        return sum(ran.values()) / 1e6, sum(ns for k, ns in ran.items() if k[0] == "b") / 1e6


def child_pid(known: set[int], marker: str) -> int:
    """The child of this process whose command line holds `marker` and is not in `known`."""
    for pid in children() - known:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        if marker in cmdline:
            return pid
    raise SystemExit(f"no child process running {marker}")


def children() -> set[int]:
    me, found = os.getpid(), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == me:
                found.add(int(stat.parent.name))
        except (OSError, ValueError):
            continue  # gone while read
    return found


async def mcp_searches(url: str, questions: list[Question]) -> list[Asked]:
    """Every question searched through `manage.py runmcp` on `url`, in both forms."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(
        command=PYTHON, args=[MANAGE, "runmcp"], cwd=str(ROOT), env=server_env(url)
    )
    known = children()
    async with Client(server, read_timeout_seconds=READY_WITHIN, mode="legacy") as client:
        meter = Meter(child_pid(known, "runmcp"), url)
        warm = [await search(client, meter, q, "keywords") for q in questions[:WARM_UP]]
        if all(w.error for w in warm):  # a server that cannot serve (Django did not start)
            raise SystemExit(f"runmcp on {url}: {warm[0].error}")
        return [await search(client, meter, q, form) for form in FORMS for q in questions]


async def search(client: Any, meter: Meter, q: Question, form: str) -> Asked:
    if form == "keywords":
        arguments = {"keywords": q.keywords, "limit": 10, "response_format": "json"}
    else:
        arguments = {"keywords": [q.question]}
    before = meter.read()
    started = time.perf_counter()
    result = await client.call_tool(
        "normagpt_search_norms", arguments, read_timeout_seconds=CALL_WITHIN
    )
    wall = (time.perf_counter() - started) * 1000
    cpu, database = meter.between(before, meter.read())
    data = result.structured_content or {}
    if result.is_error or not data:
        text = " ".join(getattr(block, "text", "") for block in result.content)
        return Asked(q, form, [], False, cpu, database, wall, error=text[:200])
    hits = [
        (h["document"], [clause_key(c) for c in h.get("found", h["clauses"])]) for h in data["hits"]
    ]
    return Asked(q, form, hits, bool(data.get("answered", True)), cpu, database, wall)


async def floor_calls(calls: int) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of `calls` calls of the minimal server's `greet` (a tool that does
    nothing) through the same SDK client."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    scratch = tempfile.mkdtemp(prefix="bench-norm-floor-")
    script = str(ROOT / "bench" / "minimal_server.py")
    server = StdioServerParameters(
        command=PYTHON, args=[script, "http://127.0.0.1:9", f"{scratch}/min.db"], cwd=str(ROOT)
    )
    known = children()
    walls, cpus = [], []
    async with Client(server, read_timeout_seconds=READY_WITHIN, mode="legacy") as client:
        meter = Meter(child_pid(known, "minimal_server"), "")
        for i in range(WARM_UP + calls):
            before, started = meter.read(), time.perf_counter()
            await client.call_tool("greet", {"name": f"Алиса {i}"}, read_timeout_seconds=60)
            if i >= WARM_UP:
                walls.append((time.perf_counter() - started) * 1000)
                cpus.append(meter.between(before, meter.read())[0])
    return walls, cpus
