"""Problem bank benchmark: parsing, cold and warm fuzzy search, fuzzy-search quality, twins
(bench/problems_twins.py), a new MCP process's first search over stdio, and the acceptance
of issue 50 (the twins, warm and cold accuracy on damaged queries, beside their targets).

    .venv/bin/python bench/problems.py [--quick]
        [--twins | --warm | --cold | --start | --acceptance]

Uses a temporary SQLite database unless DATABASE_URL is set, and a local СДАМ ГИА stand-in
on 127.0.0.1 (tests/problems/fake_site.py). The Celery row needs REDIS_URL. Prints tables.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-problems-")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/bench.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
REAL = ROOT / "tests" / "fixtures" / "sdamgia" / "math-ege_type1_problem_blocks_2023-01.json"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench import problems_twins  # noqa: E402
from bench.common import celery_worker_command, percentile, print_table  # noqa: E402
from bench.damage import damage, damage_kept, holds_every  # noqa: E402
from core import background  # noqa: E402
from problems import fuzzy, matching  # noqa: E402
from problems.entities import ParsedProblem  # noqa: E402
from problems.models import Problem  # noqa: E402
from problems.parsing import parse_problem_block  # noqa: E402
from problems.services import problems_store  # noqa: E402
from problems.subjects import Site  # noqa: E402
from tests.problems.blocks import block, id_only, search_results  # noqa: E402
from tests.problems.fake_site import FakeSite, serve  # noqa: E402

MATH = Site("math", "ege")
BASE = "https://math-ege.sdamgia.ru"


def real_blocks() -> dict[str, str]:
    if not REAL.exists():
        raise SystemExit(f"{REAL} is absent: the benchmark runs on the real problem blocks")
    items = json.loads(REAL.read_text(encoding="utf-8"))["items"]
    return {str(i["problem_id"]): i["block_html"] for i in items}


def bench_parsing(blocks: dict[str, str], rounds: int) -> list[str]:
    html = list(blocks.values())
    started = time.perf_counter()
    for _ in range(rounds):
        for item in html:
            parse_problem_block(item, base_url=BASE)
    elapsed = time.perf_counter() - started
    n = rounds * len(html)
    return [f"{n} blocks", f"{elapsed:.2f} s", f"{n / elapsed:.0f} blocks/s"]


def cold_search(
    conditions: dict[str, str], *, workers: bool, concurrency: int, interval: float
) -> list[str]:
    Problem.objects.all().delete()
    fake = FakeSite(latency=0.1)
    server, template = serve(fake)
    ids = list(conditions)[:30]
    for pid in ids:
        fake.add_problem("math-ege", pid, block(pid, conditions[pid]))
    page = "<html><body>" + search_results([id_only(pid) for pid in ids]) + "</body></html>"
    original = fake.respond
    fake.respond = lambda site, path, params: (
        (200, page) if path == "/search" else original(site, path, params)
    )  # type: ignore[method-assign]
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = interval
    settings.SDAMGIA_MAX_CONCURRENCY_PER_HOST = concurrency
    procs = []
    if workers:
        env = {
            **os.environ,
            "SDAMGIA_URL_TEMPLATE": template,
            "SDAMGIA_MIN_INTERVAL": str(interval),
            "SDAMGIA_MAX_CONCURRENCY_PER_HOST": str(concurrency),
        }
        for name in ("b1", "b2"):
            procs.append(
                subprocess.Popen(
                    celery_worker_command(name, "--loglevel", "WARNING"),
                    cwd=ROOT,
                    env=env,
                    stderr=subprocess.DEVNULL,
                )
            )
        time.sleep(4)  # both workers connect
    try:
        with background.using_broker(workers):
            if workers and not background.workers_wait(30):
                raise SystemExit("the Celery workers did not answer within 30 s")
            started = time.perf_counter()
            outcome = fuzzy.problems_search_fuzzy(
                site=MATH, condition_text=conditions[ids[7]], threshold=0.5, limit=5
            )
            wall = time.perf_counter() - started
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
        server.shutdown()
    effective = min(concurrency, 10)
    # The ideal: rounds of `effective` requests at 100 ms each. With a minimum
    # interval between request starts the floor is every start spaced by it.
    ideal = (1 + math.ceil(30 / effective)) * 0.1
    floor = max(ideal, (len(fake.requests) - 1) * interval + 0.1)
    assert outcome.fetched == 30, (
        outcome.fetched,
        outcome.site_candidates,
        outcome.warnings,
        outcome.fetch_errors,
    )
    assert outcome.matches[0].problem.problem_id == ids[7]
    mode = "2 Celery workers (Redis)" if workers else "in-process"
    return [
        mode,
        f"{effective} / {interval:g} s",
        f"{wall * 1000:.0f} ms",
        str(len(fake.requests)),
        f"{ideal * 1000:.0f} ms",
        f"{wall / ideal:.2f}×",
        f"{floor * 1000:.0f} ms",
    ]


def populate(blocks: dict[str, str], conditions: dict[str, str], size: int, fake: FakeSite) -> None:
    """`size` problems, stored here and on the site: the real ones, then siblings of theirs
    with the numbers varied (as a prototype's problems differ), each a whole block."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Problem._meta.db_table}")  # noqa: S608 (our table)
    fake.blocks.clear()
    rng = random.Random(size)
    parsed = []
    real = list(conditions.items())
    for i in range(size):
        pid, text = real[i % len(real)]
        if i < len(real):
            parsed.append(parse_problem_block(blocks[pid], base_url=BASE))
            fake.add_problem("math-ege", pid, blocks[pid])
            continue
        text = " ".join(str(rng.randint(2, 99)) if w.isdigit() else w for w in text.split(" "))
        pid = str(1_000_000 + i)
        fake.add_problem("math-ege", pid, block(pid, text))
        parsed.append(ParsedProblem(problem_id=pid, condition_text=text))
    for start in range(0, len(parsed), 2000):
        problems_store(site=MATH, parsed=parsed[start : start + 2000])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # what autovacuum does within a minute of a load
            cursor.execute(f"VACUUM ANALYZE {Problem._meta.db_table}")


def warm_search(
    blocks: dict[str, str], conditions: dict[str, str], size: int, queries: int, latency: float
) -> list[list[str]]:
    """Damaged queries of stored problems, on a site whose search pages carry whole problems
    (what they show is stored: the index changes under the queries); by default, then with
    `refresh: true` (every query asks the site) as the baseline."""
    fake = FakeSite(latency=latency, search_engine=True)
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0
    populate(blocks, conditions, size, fake)
    rows = []
    for refresh in (False, True):
        rng = random.Random(1)
        samples, cpu, hits, asked, requests = [], [], 0, 0, 0
        for _ in range(queries):
            pid = rng.choice(list(conditions))
            query, kept = damage_kept(conditions[pid], rng)
            before = len(fake.requests)
            started, thread_cpu = time.perf_counter(), time.thread_time()
            outcome = fuzzy.problems_search_fuzzy(
                site=MATH, condition_text=query[:1000], limit=5, refresh=refresh
            )
            samples.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - thread_cpu)
            first = outcome.matches[0].problem.condition_text if outcome.matches else ""
            hits += holds_every(first, kept)
            asked += outcome.site_asked
            requests += len(fake.requests) - before
        ms = [x * 1000 for x in samples]
        rows.append(
            [
                f"{size:,}",
                "refresh: true (baseline)" if refresh else "default",
                str(queries),
                f"{percentile(ms, 50):.1f}",
                f"{percentile(ms, 95):.1f}",
                f"{statistics.fmean(cpu) * 1000:.1f}",
                f"{100 * hits / queries:.0f}%",
                f"{100 * asked / queries:.0f}%",
                f"{requests / queries:.1f}",
            ]
        )
    server.shutdown()
    return rows


def cold_recall(
    blocks: dict[str, str],
    conditions: dict[str, str],
    queries: int,
    latency: float,
    formulas: bool = True,
) -> list[str]:
    """Damaged queries with an empty database before each, on the word-matching site
    (`formulas=False`: a site whose search does not see the text of formulas)."""
    fake = FakeSite(latency=latency, search_engine=True, search_formulas=formulas)
    for pid, html in blocks.items():
        fake.add_problem("math-ege", pid, html)
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0
    rng = random.Random(7)
    hits, walls, requests, phrases, peer = 0, [], 0, 0, 0
    for _ in range(queries):
        pid = rng.choice(sorted(conditions))
        query, kept = damage_kept(conditions[pid], rng)
        peer += holds_every(_site_first(fake, query[:1000], conditions), kept)
        Problem.objects.all().delete()
        before = len(fake.requests)
        started = time.perf_counter()
        outcome = fuzzy.problems_search_fuzzy(site=MATH, condition_text=query[:1000], limit=5)
        walls.append(time.perf_counter() - started)
        requests += len(fake.requests) - before
        phrases += len(outcome.phrases)
        first = outcome.matches[0].problem.condition_text if outcome.matches else ""
        hits += holds_every(first, kept)
    server.shutdown()
    ms = [w * 1000 for w in walls]
    return [
        "formulas searched" if formulas else "formulas not searched (harsher)",
        str(queries),
        f"{100 * hits / queries:.0f}%",
        f"{percentile(ms, 50):.0f}",
        f"{percentile(ms, 95):.0f}",
        f"{requests / queries:.1f}",
        f"{phrases / queries:.1f}",
        f"{100 * peer / queries:.0f}%",
    ]


def _site_first(fake: FakeSite, query: str, conditions: dict[str, str]) -> str:
    """The peer of a cold search: the site's own search given the whole query, its first
    result taken as the problem (what a user pasting the text into the site's box sees)."""
    from problems.parsing import parse_search_page

    page = parse_search_page(fake.search("math-ege", query, 1), base_url=BASE)
    return conditions.get(page.ids[0], "") if page.ids else ""


def quality(conditions: dict[str, str], reps: int) -> list[str]:
    normalized = {pid: matching.normalize(text) for pid, text in conditions.items()}
    candidates = [matching.Candidate.from_normalized(pid, n) for pid, n in normalized.items()]
    rng = random.Random(2026)
    top1 = top5 = total = 0
    for _ in range(reps):
        for pid, text in conditions.items():
            query = damage(text, rng)
            ranked = matching.rank(
                matching.Query.from_text(query), candidates, threshold=0, limit=5
            )
            keys = [c.key for c, _ in ranked]
            top1 += bool(keys) and keys[0] == pid
            top5 += pid in keys
            total += 1
    return [
        str(len(conditions)),
        str(total),
        f"{100 * top1 / total:.2f}%",
        f"{100 * top5 / total:.2f}%",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description="Problem bank benchmark")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (for a smoke run)")
    parser.add_argument("--twins", action="store_true", help="the twins part only")
    parser.add_argument("--warm", action="store_true", help="the warm search part only")
    parser.add_argument("--start", action="store_true", help="the process start part only")
    parser.add_argument("--cold", action="store_true", help="the cold search accuracy only")
    parser.add_argument(
        "--acceptance", action="store_true", help="issue 50: twins, warm and cold accuracy"
    )
    args = parser.parse_args()
    quick = args.quick
    call_command("migrate", verbosity=0)
    blocks = real_blocks()
    conditions = {
        pid: parse_problem_block(html, base_url=BASE).condition_text for pid, html in blocks.items()
    }

    if args.twins:
        print_twins(conditions, quick)
        return
    if args.acceptance:
        twins = print_twins(conditions, quick)
        print_acceptance(
            twins, print_warm(blocks, conditions, quick), print_cold(blocks, conditions, quick)
        )
        return
    if args.warm:
        print_warm(blocks, conditions, quick)
        return
    if args.start:
        print_start(blocks, conditions, quick)
        return
    if args.cold:
        print_cold(blocks, conditions, quick)
        return

    print("1. Parsing the real problem blocks\n")
    print_table(["blocks", "time", "rate"], [bench_parsing(blocks, 2 if quick else 10)])

    print("\n2. Cold sdamgia_search_by_text: 30 uncached candidates, site latency 100 ms\n")
    rows = [
        cold_search(conditions, workers=False, concurrency=10, interval=0),
        cold_search(conditions, workers=False, concurrency=4, interval=0.25),
    ]
    if os.environ.get("REDIS_URL"):
        rows.append(cold_search(conditions, workers=True, concurrency=10, interval=0))
    else:
        rows.append(["2 Celery workers (Redis)", "-", "skipped: REDIS_URL unset", *["-"] * 4])
    print_table(
        [
            "mode",
            "concurrency / interval",
            "wall",
            "requests",
            "ideal",
            "vs ideal",
            "interval floor",
        ],
        rows,
    )

    warm = print_warm(blocks, conditions, quick)
    cold = print_cold(blocks, conditions, quick)

    print("\n4. Quality: damaged queries over the real problems (all siblings present)\n")
    print_table(
        ["problems", "queries", "top-1", "top-5"], [quality(conditions, 3 if quick else 10)]
    )

    print_acceptance(print_twins(conditions, quick), warm, cold)


def process_start(
    blocks: dict[str, str], conditions: dict[str, str], size: int, calls: int
) -> list[str]:
    """A new `manage.py runmcp` process over stdio, driven by a raw JSON-RPC client, at
    `size` stored problems: its start (spawn → `initialize` answered), its first search and
    the next ones (damaged queries of stored problems; the stand-in site answers in 100 ms
    when asked), its resident memory after them. The baseline: a fresh connection reading
    every stored row and scoring them with rapidfuzz, as a naive client would."""
    fake = FakeSite(latency=0.1, search_engine=True)
    server, template = serve(fake)
    populate(blocks, conditions, size, fake)
    fake.search("math-ege", "найдите площадь", 1)  # the stand-in reads its blocks' words once
    env = {
        **os.environ,
        "SDAMGIA_URL_TEMPLATE": template,
        "SDAMGIA_MIN_INTERVAL": "0",
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    rng = random.Random(size)
    queries = [damage_kept(conditions[rng.choice(sorted(conditions))], rng) for _ in range(calls)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "runmcp", "--apps", "problems"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = _RawStdio(proc)
    client.call("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    })  # fmt: skip
    start = time.perf_counter() - started
    client.notify("notifications/initialized")
    walls, hits, asked, first_asked = [], 0, 0, False
    for query, kept in queries:
        t0 = time.perf_counter()
        reply = client.call("tools/call", {
            "name": "sdamgia_search_by_text",
            "arguments": {
                "condition_text": query[:1000], "subject": "math", "limit": 5,
                "response_format": "json",
            },
        })  # fmt: skip
        walls.append(time.perf_counter() - t0)
        if reply["result"].get("isError"):
            raise SystemExit(f"sdamgia_search_by_text failed: {reply['result']['content']}")
        answer = reply["result"].get("structuredContent") or {}
        matches = answer.get("matches") or []
        first = _condition(matches[0]["id"]) if matches else ""
        hits += holds_every(first, kept)
        asked += bool(answer.get("site_asked", True))
        first_asked = first_asked if len(walls) > 1 else bool(answer.get("site_asked", True))
    rss_kb = _rss_kb(proc.pid)
    proc.stdin.close()  # type: ignore[union-attr]
    proc.wait(timeout=30)
    server.shutdown()
    naive = _naive_first_search(queries[0][0])
    floor = _floor_first_search(queries[0][0])
    return [
        f"{size:,}",
        f"{start:.2f} s",
        f"{walls[0]:.2f} s" + (" (site asked)" if first_asked else ""),
        f"{statistics.median(walls[1:]) * 1000:.0f} ms" if len(walls) > 1 else "-",
        f"{asked}/{calls}",
        f"{hits}/{calls}",
        f"{rss_kb / 1024:.0f} MB",
        f"{floor * 1000:.0f} ms",
        f"{naive:.2f} s",
    ]


class _RawStdio:
    """JSON-RPC over a process's stdin/stdout, one line each way, as any MCP client sends."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0

    def notify(self, method: str, params: dict | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit(f"the MCP server exited before answering {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def _send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]


def _condition(problem_id: str) -> str:
    row = Problem.objects.filter(subject=MATH.subject, exam=MATH.exam, problem_id=problem_id)
    return row.values_list("condition_text", flat=True).first() or ""


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _floor_first_search(query: str) -> float:
    """The floor: the candidates' SQL and their exact score alone, over a new connection."""
    from problems import index

    connection.close()
    started = time.perf_counter()
    index.search(MATH, matching.Query.from_text(query), threshold=0, limit=5)
    return time.perf_counter() - started


def _naive_first_search(query: str) -> float:
    """Every stored row read over a new connection and scored by rapidfuzz (top 5)."""
    from rapidfuzz import fuzz, process

    connection.close()
    started = time.perf_counter()
    texts = list(
        Problem.objects.filter(subject=MATH.subject, exam=MATH.exam).values_list(
            "search_text", flat=True
        )
    )
    process.extract(matching.normalize(query), texts, scorer=fuzz.token_set_ratio, limit=5)
    return time.perf_counter() - started


def print_warm(blocks: dict[str, str], conditions: dict[str, str], quick: bool) -> list[list[str]]:
    print(
        "\n3. Warm sdamgia_search_by_text: damaged queries of stored problems; the site's "
        "search pages carry whole problems (stored as they pass); 100 ms per site request\n"
    )
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 50_000]
    rows = []
    for size in sizes:
        rows += warm_search(blocks, conditions, size, 20 if quick else 100, latency=0.1)
    print_table(
        ["problems", "mode", "queries", "p50 ms", "p95 ms", "CPU ms", "top-1", "site asked",
         "requests"],
        rows,
    )  # fmt: skip
    return rows


def print_start(blocks: dict[str, str], conditions: dict[str, str], quick: bool) -> None:
    print(
        "\n6. A new process: `manage.py runmcp` over stdio (a raw JSON-RPC client), its "
        "first sdamgia_search_by_text and the next ones; damaged queries of stored problems; "
        "the site answers in 100 ms when asked\n"
    )
    sizes = [1_000, 10_000] if quick else [1_000, 10_000, 50_000, 200_000]
    rows = [process_start(blocks, conditions, size, 5 if quick else 10) for size in sizes]
    print_table(
        ["stored", "start", "first search", "next (p50)", "site asked", "top-1",
         "memory (RSS)", "floor: candidates' SQL + score", "baseline: read all + rapidfuzz"],
        rows,
    )  # fmt: skip
    base = int(rows[0][6].split()[0])
    for row in rows[1:]:
        grown = (int(row[6].split()[0]) - base) * 1024 / (int(row[0].replace(",", "")) - 1_000)
        print(f"memory grown past 1,000 stored, per stored problem at {row[0]}: {grown:.2f} KB")


def print_twins(conditions: dict[str, str], quick: bool) -> dict[str, problems_twins.Tally]:
    print(
        "\n5. Twins (bench/problems_twins.py): the real problems and a twin of each stored "
        "(another number, label, word of the data, asked quantity, unit); queried as stored, "
        "with variants stored nowhere (one change or several), fragments two problems or "
        "more hold, damaged copies\n"
    )
    fake = FakeSite(latency=0, search_engine=True)
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0
    Problem.objects.all().delete()
    try:
        limit = 40 if quick else len(conditions)
        rows, misses, totals = problems_twins.run(conditions, limit, 30 if quick else 100, fake)
    finally:
        server.shutdown()
    print_table(problems_twins.HEADER, rows)
    for miss in misses:
        print(f"- miss: {miss}")
    return totals


def print_cold(blocks: dict[str, str], conditions: dict[str, str], quick: bool) -> list[list[str]]:
    print(
        "\n3b. Cold sdamgia_search_by_text: damaged queries, the database emptied before "
        "each, a site that matches words; 100 ms per site request\n"
    )
    rows = [
        cold_recall(blocks, conditions, 20 if quick else 100, latency=0.1, formulas=f)
        for f in (True, False)
    ]
    print_table(
        [
            "site search",
            "queries",
            "top-1",
            "p50 ms",
            "p95 ms",
            "requests",
            "phrases",
            "peer: the site's search, first result",
        ],
        rows,
    )
    return rows


def print_acceptance(
    twins: dict[str, problems_twins.Tally], warm: list[list[str]], cold: list[list[str]]
) -> None:
    """Issue 50's acceptance: each measure, its target, and the figure the issue was filed
    with (measured by the session that filed it, over MCP stdio, with its own twins)."""
    print("\n7. Issue 50: the acceptance, beside the figures it was filed with\n")
    exact, fragments, damaged = twins["exact"], twins["fragments"], twins["damaged"]

    def share(part: int, whole: int) -> str:
        return f"{part} of {whole} ({100 * part / whole:.1f} %)" if whole else "-"

    peer = {k: twins[f"peer {k}"] for k in ("exact", "fragments", "damaged")}
    confident = exact.confident + fragments.confident + damaged.confident
    wrong = exact.confident_wrong + fragments.confident_wrong + damaged.confident_wrong
    peer_confident = sum(t.confident for t in peer.values())
    peer_wrong = sum(t.confident_wrong for t in peer.values())
    rows = [
        ["`same` for another problem (`Reading`): exact queries",
         f"{exact.same_wrong} of {exact.differ} ({exact.same_wrong_text} of "
         f"{exact.differ_text} by text)", "0", "58 of 58 asked, 60 of 60 unit twins",
         f"{peer['exact'].same_wrong} of {peer['exact'].queries} queries"],
        ["… a reworded copy of the problem `same`", f"{exact.reworded_same} of {exact.reworded}",
         "-", "-", "-"],
        ["… damaged queries", f"{damaged.same_wrong} of {damaged.differ}", "0", "-",
         f"{peer['damaged'].same_wrong} of {peer['damaged'].queries} queries"],
        ["confident-wrong", f"{wrong} of {confident} confident", "0",
         "9 of 30 variants stored nowhere", f"{peer_wrong} of {peer_confident} (all confident)"],
        ["every difference named: `differences`", share(exact.named, exact.changes), "100 %",
         "461 of 473 (12 name only the word)", "none named"],
        ["… the Markdown", share(exact.said, exact.changes), "100 %", "-", "-"],
        ["ambiguous fragments `ambiguous` (none `same`, the site asked)",
         share(fragments.fragments_right, fragments.queries), "100 %", "1 of 46 (45 `same`)",
         share(peer["fragments"].fragments_right, peer["fragments"].queries)],
        ["damaged-query accuracy, warm (top-1)",
         ", ".join(f"{row[6]} at {row[0]}" for row in warm if row[1] == "default")
         + f"; {share(damaged.top1, damaged.queries)} with the twins stored",
         "≥ 98 %", "97 of 100",
         f"{share(peer['damaged'].top1, peer['damaged'].queries)} with the twins stored"],
        ["damaged-query accuracy, cold (top-1)",
         ", ".join(f"{row[2]} ({row[0]})" for row in cold), "≥ 97 %", "96 of 100",
         "the site's search: " + ", ".join(f"{row[7]} ({row[0]})" for row in cold)],
    ]  # fmt: skip
    print_table(
        [
            "measure",
            "this run",
            "target",
            "as filed (issue 50)",
            f"peer ({problems_twins.Peer.NAME})",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
