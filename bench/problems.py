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
from typing import Any

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

from bench import problems_twins  # noqa: E402
from bench.common import celery_worker_command, percentile, print_table  # noqa: E402
from bench.damage import damage, damage_kept, holds_every  # noqa: E402
from bench.problems_acceptance import print_acceptance  # noqa: E402
from bench.problems_site import BASE, MATH, populate  # noqa: E402
from bench.problems_start import print_start  # noqa: E402
from core import background  # noqa: E402
from problems import fuzzy, matching  # noqa: E402
from problems.models import Problem  # noqa: E402
from problems.parsing import parse_problem_block  # noqa: E402
from tests.problems.blocks import block, id_only, search_results  # noqa: E402
from tests.problems.fake_site import FakeSite, serve  # noqa: E402


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
    ids = list(conditions)[:30]
    fake, server, template = _cold_site(conditions, ids)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = interval
    settings.SDAMGIA_MAX_CONCURRENCY_PER_HOST = concurrency
    procs = _workers_start(template, interval, concurrency) if workers else []
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


def _cold_site(conditions: dict[str, str], ids: list[str]) -> tuple[FakeSite, Any, str]:
    """The stand-in site (100 ms a request) whose search finds the problems `ids`, by
    number only: each must be fetched. The site, its server and its URL template."""
    fake = FakeSite(latency=0.1)
    server, template = serve(fake)
    for pid in ids:
        fake.add_problem("math-ege", pid, block(pid, conditions[pid]))
    page = "<html><body>" + search_results([id_only(pid) for pid in ids]) + "</body></html>"
    original = fake.respond
    fake.respond = lambda site, path, params: (
        (200, page) if path == "/search" else original(site, path, params)
    )  # type: ignore[method-assign]
    return fake, server, template


def _workers_start(template: str, interval: float, concurrency: int) -> list[Any]:
    """Two Celery workers on the stand-in site (their errors off the table)."""
    env = {
        **os.environ,
        "SDAMGIA_URL_TEMPLATE": template,
        "SDAMGIA_MIN_INTERVAL": str(interval),
        "SDAMGIA_MAX_CONCURRENCY_PER_HOST": str(concurrency),
    }
    procs = []
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
    return procs


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

    if part_only(args, blocks, conditions):
        return

    print("1. Parsing the real problem blocks\n")
    print_table(["blocks", "time", "rate"], [bench_parsing(blocks, 2 if quick else 10)])
    print_cold_search(conditions)
    warm = print_warm(blocks, conditions, quick)
    cold = print_cold(blocks, conditions, quick)

    print("\n4. Quality: damaged queries over the real problems (all siblings present)\n")
    print_table(
        ["problems", "queries", "top-1", "top-5"], [quality(conditions, 3 if quick else 10)]
    )

    print_acceptance(print_twins(conditions, quick), warm, cold)


def part_only(args: argparse.Namespace, blocks: dict[str, str], conditions: dict[str, str]) -> bool:
    """The one part the options ask for, printed; False when they ask for them all."""
    quick = args.quick
    if args.twins:
        print_twins(conditions, quick)
    elif args.acceptance:
        twins = print_twins(conditions, quick)
        print_acceptance(
            twins, print_warm(blocks, conditions, quick), print_cold(blocks, conditions, quick)
        )
    elif args.warm:
        print_warm(blocks, conditions, quick)
    elif args.start:
        print_start(blocks, conditions, quick)
    elif args.cold:
        print_cold(blocks, conditions, quick)
    else:
        return False
    return True


def print_cold_search(conditions: dict[str, str]) -> None:
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


if __name__ == "__main__":
    main()
