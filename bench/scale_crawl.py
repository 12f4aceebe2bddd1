"""The crawl of one subject's catalog by 1, 2 and 4 Celery workers (issue 15).

The СДАМ ГИА stand-in answers each request in 100 ms; the site's interval is 50 ms, so
one worker (its pages one after another) cannot reach the limit and several can, but
never pass it: the interval holds for all of them together, through Redis. Needs
REDIS_URL (the broker); DATABASE_URL should be PostgreSQL (a temporary SQLite file
otherwise). Run through `bench/scale.py --only crawl`.
"""

from __future__ import annotations

import io
import os
import subprocess
import time
from collections import Counter
from typing import Any

from bench.common import ROOT, celery_worker_command, print_table

LATENCY = 0.1
INTERVAL = 0.05
CATEGORIES = 16
PAGES = 3
PER_PAGE = 5


def crawl_bench(worker_counts: tuple[int, ...] = (1, 2, 4)) -> None:
    """Print the table; django must be set up (bench/scale.py does it)."""
    from django.conf import settings
    from django.core.management import call_command

    from problems.models import CategoryProblem
    from tests.problems.fake_site import FakeSite, serve

    if not os.environ.get("REDIS_URL"):
        print("\nCrawl: skipped (REDIS_URL unset: the crawl needs a broker and workers)")
        return
    call_command("migrate", verbosity=0)
    fake = site(FakeSite(latency=LATENCY))
    server, template = serve(fake)
    env = {
        "SDAMGIA_URL_TEMPLATE": template,
        "SDAMGIA_MIN_INTERVAL": str(INTERVAL),
        "SDAMGIA_MAX_CONCURRENCY_PER_HOST": "8",
        "DATABASE_URL": os.environ["DATABASE_URL"],
    }
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = INTERVAL
    settings.SDAMGIA_MAX_CONCURRENCY_PER_HOST = 8
    rows = []
    try:
        for count in worker_counts:
            wall = crawl_timed(count, fake, env)
            rows.append(row(count, wall, fake.requests, CategoryProblem.objects.count()))
    finally:
        server.shutdown()
        server.server_close()
    table_print(rows)


def crawl_timed(count: int, fake: Any, env: dict[str, str]) -> float:
    """Seconds `sdamgia_crawl` takes with `count` workers, on an empty catalog (the
    stand-in's request log emptied too)."""
    from django.conf import settings
    from django.core.management import call_command

    from core import background
    from problems.models import Category, CategoryProblem, Problem, Topic

    CategoryProblem.objects.all().delete()
    Category.objects.all().delete()
    Topic.objects.all().delete()
    Problem.objects.all().delete()
    fake.requests.clear()
    settings.SDAMGIA_CRAWL_WORKERS = count
    workers = [start_worker(f"scale{count}-{i}", env) for i in range(count)]
    try:
        with background.using_broker(True):
            if not background.workers_wait(60):
                raise SystemExit("the workers did not answer")
            started = time.perf_counter()
            call_command(
                "sdamgia_crawl", subject="math", stdout=io.StringIO(), stderr=io.StringIO()
            )
            return time.perf_counter() - started
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=30)


def table_print(rows: list[list[str]]) -> None:
    print(
        f"\nCrawl of {CATEGORIES} categories × {PAGES} listing pages, {LATENCY * 1000:.0f} ms "
        f"per request, site interval {INTERVAL * 1000:.0f} ms (at most {1 / INTERVAL:.0f} "
        "request starts a second)"
    )
    print_table(
        [
            "workers",
            "wall",
            "requests",
            "mean rate",
            "most starts in 1 s",
            "limit",
            "repeated",
            "problems",
        ],
        rows,
    )


def row(workers: int, wall: float, requests: list[Any], problems: int) -> list[str]:
    starts = sorted(r.at for r in requests)
    busiest = max(
        (sum(1 for t in starts[i:] if t < first + 1.0) for i, first in enumerate(starts)),
        default=0,
    )
    pages = Counter((r.path, tuple(sorted(r.params.items()))) for r in requests)
    return [
        str(workers),
        f"{wall:.2f} s",
        str(len(requests)),
        f"{len(requests) / wall:.1f}/s",
        str(busiest),
        f"{1 / INTERVAL:.0f} (+1 at a window's edge)",
        str(sum(n - 1 for n in pages.values())),
        str(problems),
    ]


def site(fake: Any) -> Any:
    from tests.problems.blocks import block, listing
    from tests.problems.test_crawl_shared import catalog_page_of

    ids_of = [str(200 + i) for i in range(CATEGORIES)]
    fake.add_page("math-ege", "/prob_catalog", {}, catalog_page_of(ids_of, PAGES * PER_PAGE))
    for c, cid in enumerate(ids_of):
        for page in range(1, PAGES + 1):
            ids = [str(20_000 + c * 100 + page * 10 + i) for i in range(PER_PAGE)]
            blocks = [(pid, block(pid, f"Задача {pid} темы {cid}.")) for pid in ids]
            fake.add_page(
                "math-ege",
                "/test",
                {"filter": "all", "category_id": cid, "page": page},
                listing(blocks, page=page, total=PAGES),
            )
    return fake


def start_worker(name: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        celery_worker_command(name, "--loglevel", "WARNING"),
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
