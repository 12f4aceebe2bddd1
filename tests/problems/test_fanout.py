"""The fuzzy-search fan-out on real Celery workers through Redis."""

from __future__ import annotations

import pytest

from bench.common import celery_worker_command
from core import background
from problems import fuzzy
from problems.models import Problem
from problems.subjects import Site
from tests.problems.blocks import block, id_only, search_results

pytestmark = pytest.mark.django_db(transaction=True)


def test_uncached_candidates_are_fetched_by_workers(
    fake_site, spawn, quiet_broker, subprocess_db_env, settings
) -> None:  # type: ignore[no-untyped-def]
    ids = [str(900 + i) for i in range(12)]
    for i, pid in enumerate(ids):
        fake_site.add_problem(
            "math-ege",
            pid,
            block(pid, f"Найдите периметр квадрата со стороной {i + 3} и диагональю."),
        )
    page = "<html><body>" + search_results([id_only(pid) for pid in ids]) + "</body></html>"
    original = fake_site.respond
    fake_site.respond = lambda site, path, params: (
        (200, page) if path == "/search" else original(site, path, params)
    )
    worker_env = {
        **subprocess_db_env,
        "REDIS_URL": quiet_broker,
        "SDAMGIA_URL_TEMPLATE": settings.SDAMGIA_URL_TEMPLATE,
        "SDAMGIA_MIN_INTERVAL": "0",
    }
    for name in ("w1", "w2"):
        spawn(
            celery_worker_command(name),
            **worker_env,
        )
    progress: list[tuple[int, int]] = []
    with background.using_broker(True):
        assert background.workers_wait(60)
        assert len(background.chunks(ids, fuzzy.CHUNK_SIZE)) == 3  # the workers share them
        outcome = fuzzy.problems_search_fuzzy(
            site=Site("math", "ege"),
            condition_text="Найдите периметр квадрата со стороной 7 и диагональю",
            threshold=0.5,
            limit=3,
            progress=lambda done, total: progress.append((done, total)),
        )
    assert outcome.fetched == 12
    assert outcome.fetch_errors == {}
    assert outcome.matches[0].problem.problem_id == "904"
    assert Problem.objects.count() == 12
    assert len(fake_site.requests_to("/problem")) == 12
    assert progress[-1] == (12, 12)
