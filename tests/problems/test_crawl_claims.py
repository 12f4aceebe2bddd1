"""A category's claim in a shared crawl names its worker's process (`problems.crawl`): a
worker killed on this host gives its category up at once, not when its lease ends; a
live worker's claim and another host's hold."""

from __future__ import annotations

import uuid

import pytest
import redis

from core.holders import holder_token
from problems.crawl import Crawl
from tests.conftest import gone_holder_token

CATEGORY = "101"


@pytest.fixture
def crawl(redis_url: str, settings) -> Crawl:  # type: ignore[no-untyped-def]
    settings.SDAMGIA_CRAWL_LEASE = 120.0
    return Crawl(uuid.uuid4().hex, redis.Redis.from_url(redis_url))


def held_by(crawl: Crawl, token: str) -> None:
    crawl.redis.set(f"{crawl.key}:claim:{CATEGORY}", token, px=120_000)


def test_a_killed_workers_claim_is_taken_at_once(crawl: Crawl) -> None:
    held_by(crawl, gone_holder_token())
    token = crawl._claim(CATEGORY)
    assert token is not None
    assert crawl.redis.get(f"{crawl.key}:claim:{CATEGORY}") == token.encode()
    assert crawl._claim(CATEGORY) is None  # and now this live process holds it


def test_a_live_workers_claim_holds(crawl: Crawl) -> None:
    held_by(crawl, holder_token())  # this process: it runs
    assert crawl._claim(CATEGORY) is None


def test_another_hosts_claim_holds_until_its_lease_ends(crawl: Crawl) -> None:
    held_by(crawl, "another-host:4242:1:0123456789ab")  # cannot be checked from here
    assert crawl._claim(CATEGORY) is None
    crawl.redis.delete(f"{crawl.key}:claim:{CATEGORY}")  # its lease ended
    assert crawl._claim(CATEGORY) is not None


def test_a_release_leaves_a_claim_another_worker_took_since(crawl: Crawl) -> None:
    mine = crawl._claim(CATEGORY)
    assert mine is not None
    held_by(crawl, "another-host:4242:1:0123456789ab")  # mine lapsed, another took it
    crawl._release(CATEGORY, mine)
    assert crawl.redis.get(f"{crawl.key}:claim:{CATEGORY}") is not None
