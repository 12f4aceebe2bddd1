"""A crawl shared by four real Celery workers (issue 15, items 2 and 4).

The site stand-in answers in 100 ms; the site's interval is 0.2 s. Together the workers
never start more than five requests a second, one of them is killed mid-crawl, and the
crawl still ends with every category, no page fetched twice but the one in flight.
"""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections import Counter

import pytest
from django.core.management import call_command

from bench.common import celery_worker_command
from core import background
from problems.models import Category, CategoryProblem
from tests.conftest import STARTUP_DEADLINE
from tests.problems.blocks import block, listing
from tests.problems.fake_site import FakeSite, serve

pytestmark = pytest.mark.django_db(transaction=True)

CATEGORIES = [str(100 + i) for i in range(10)]
PAGES = 3
PER_PAGE = 4
INTERVAL = 0.2
WORKERS = 4


def catalog_page_of(category_ids: list[str], per_category: int) -> str:
    """A catalog page: one topic holding these categories (bench/scale_crawl.py too)."""
    children = "".join(
        f'<div class="cat_category" data-id="{cid}"><a class="cat_name" '
        f'href="/test?filter=all&amp;category_id={cid}">Тема {cid}</a>'
        f'<div class="cat_count">{per_category}</div></div>'
        for cid in category_ids
    )
    return (
        '<html><body><div class="cat_main"><div class="cat_category cat_header">'
        '<b class="cat_name">Задание</b></div><div class="cat_category"><b class="cat_name">'
        '<span class="pcat_num">1</span>. Планиметрия</b><div class="cat_count cat_sum">'
        f'{len(category_ids) * per_category}</div><div class="cat_children">{children}'
        "</div></div></div></body></html>"
    )


def catalog_page() -> str:
    return catalog_page_of(CATEGORIES, PAGES * PER_PAGE)


def site_with_categories() -> FakeSite:
    fake = FakeSite(latency=0.1)
    fake.add_page("math-ege", "/prob_catalog", {}, catalog_page())
    for c, cid in enumerate(CATEGORIES):
        for page in range(1, PAGES + 1):
            ids = [str(10_000 + c * 100 + page * 10 + i) for i in range(PER_PAGE)]
            blocks = [(pid, block(pid, f"Задача {pid} темы {cid}.")) for pid in ids]
            fake.add_page(
                "math-ege",
                "/test",
                {"filter": "all", "category_id": cid, "page": page},
                listing(blocks, page=page, total=PAGES),
            )
    return fake


@pytest.mark.long
def test_four_workers_crawl_at_the_sites_pace_and_survive_a_killed_worker(
    spawn, quiet_broker, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    fake = site_with_categories()
    server, template = serve(fake)
    limits = {
        "SDAMGIA_URL_TEMPLATE": template,
        "SDAMGIA_MIN_INTERVAL": str(INTERVAL),
        "SDAMGIA_CRAWL_LEASE": "3",
        "SDAMGIA_RETRIES": "1",
    }
    for name, value in limits.items():
        setattr(settings, name, type(getattr(settings, name))(value))
    settings.REDIS_URL = quiet_broker
    settings.SDAMGIA_CRAWL_WORKERS = WORKERS
    workers = [
        spawn(
            celery_worker_command(f"crawl{i}", "--loglevel", "WARNING"),
            REDIS_URL=quiet_broker,
            **subprocess_db_env,
            **limits,
        )
        for i in range(WORKERS)
    ]
    listings = lambda: fake.requests_to("/test")  # noqa: E731

    def kill_one_mid_crawl() -> None:
        deadline = time.monotonic() + STARTUP_DEADLINE
        while len(listings()) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(workers[0].pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_one_mid_crawl, daemon=True)
    try:
        with background.using_broker(True):
            assert background.workers_wait(STARTUP_DEADLINE), "the workers did not answer"
            killer.start()
            out = io.StringIO()
            call_command("sdamgia_crawl", subject="math", stdout=out, stderr=io.StringIO())
    finally:
        server.shutdown()
        server.server_close()
    killer.join(timeout=5)
    assert workers[0].poll() is not None, "the worker was not killed mid-crawl"

    assert f"{len(CATEGORIES) * PAGES * PER_PAGE} problems in {len(CATEGORIES)} categories" in (
        out.getvalue()
    )
    assert Category.objects.filter(listing_fetched_at__isnull=False).count() == len(CATEGORIES)
    assert CategoryProblem.objects.count() == len(CATEGORIES) * PAGES * PER_PAGE
    # Politeness across the workers (and the command's own catalog request). The times are
    # the site's, when a request arrived, not when the pace let it start: on a busy machine a
    # request started on time may arrive late, beside the next ones (8 in one second seen
    # with a CPU hog beside the suite). So any three seconds hold at most three more than
    # the pace, and the whole crawl keeps it; four workers pacing each alone would send 20 a
    # second.
    starts = sorted(r.at for r in fake.requests)
    for i, first in enumerate(starts):
        assert sum(1 for t in starts[i:] if t < first + 3.0) <= round(3 / INTERVAL) + 3
    assert (starts[-1] - starts[0]) >= (len(starts) - 1) * INTERVAL * 0.9
    # Nothing fetched twice beyond the request that was in flight when the worker died.
    pages = Counter((r.params["category_id"], r.params["page"]) for r in listings())
    assert set(pages) == {(cid, str(p)) for cid in CATEGORIES for p in range(1, PAGES + 1)}
    assert sum(count - 1 for count in pages.values()) <= 1
