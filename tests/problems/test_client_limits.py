"""The СДАМ ГИА client on the HTTP layer: the call's deadline, the body cap, the service named."""

from __future__ import annotations

import contextlib
import time

import pytest

from problems import services
from problems.client import SdamgiaClient, run_with_client
from problems.exceptions import SdamgiaBadPage, SdamgiaUnavailable
from problems.subjects import Site
from tests.upstream_servers import MB, huge, trickle

MATH = Site("math", "ege")
pytestmark = pytest.mark.django_db


@pytest.fixture
def fast(settings):  # type: ignore[no-untyped-def]
    settings.SDAMGIA_MIN_INTERVAL = 0
    settings.SDAMGIA_RETRIES = 2
    settings.SDAMGIA_TIMEOUT = 10  # per attempt: the total deadline is what cuts
    settings.SDAMGIA_DEADLINE = 1.5
    settings.SDAMGIA_MAX_BODY_BYTES = MB
    return settings


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_trickling_site_is_cut_at_the_call_deadline(fast, headers_too) -> None:  # type: ignore[no-untyped-def]
    with trickle(headers_too=headers_too) as server:
        fast.SDAMGIA_URL_TEMPLATE = server.url
        started = time.monotonic()
        with pytest.raises(SdamgiaUnavailable) as caught:
            services.problem_get(site=MATH, problem_id="7001")
        elapsed = time.monotonic() - started
    assert "СДАМ ГИА is unavailable: timed out" in caught.value.message
    assert caught.value.service == "СДАМ ГИА"
    assert elapsed < 8  # the trickle would take two minutes
    assert len(server.requests) == 1  # the deadline, not a retry, ended it


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_a_20_mb_page_is_refused_at_the_cap(fast, declared) -> None:  # type: ignore[no-untyped-def]
    fast.SDAMGIA_DEADLINE = 20
    with huge(content_length=declared) as server:
        fast.SDAMGIA_URL_TEMPLATE = server.url
        with pytest.raises(SdamgiaBadPage) as caught:
            services.problem_get(site=MATH, problem_id="7001")
    assert f"СДАМ ГИА answered more than {MB} bytes" in caught.value.message
    assert caught.value.service == "СДАМ ГИА"
    assert len(server.requests) == 1  # not retried


def test_each_page_kind_asks_for_its_own_address(fake_site) -> None:  # type: ignore[no-untyped-def]
    async def every_page(client: SdamgiaClient) -> None:
        for fetch in (
            client.problem_page(MATH, "1"),
            client.search_page(MATH, "площадь трапеции", 2),
            client.catalog_page(MATH),
            client.category_page(MATH, "90", 3),
            client.test_page(MATH, "55"),
        ):
            with contextlib.suppress(Exception):  # the fake site knows none of them
                await fetch

    run_with_client(every_page)
    seen = [(r.path, r.params) for r in fake_site.requests]
    assert seen == [
        ("/problem", {"id": "1"}),
        ("/search", {"search": "площадь трапеции", "page": "2"}),
        ("/prob_catalog", {}),
        ("/test", {"filter": "all", "category_id": "90", "page": "3"}),
        ("/test", {"id": "55"}),
    ]
