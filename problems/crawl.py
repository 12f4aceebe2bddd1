"""A crawl that several Celery workers share: any of them may die, the crawl still ends.

The command (`sdamgia_crawl`) names a crawl and starts workers' loops (`crawl_work`, one
Celery task each); every loop takes the site's categories one at a time through Redis:

- a category is *claimed* with a lease (`SET NX PX`) naming its worker's process
  (`core.holders`), renewed after every listing page: a worker killed on the same host
  loses its claim at once, one on another host when the lease ends, and another worker
  takes it;
- each listing page is stored as it arrives and its place recorded (the *checkpoint*),
  so the next worker goes on from the page after it: nothing is fetched twice but the
  request that was in flight when its worker died;
- a finished (or failed) category joins the crawl's *done* set, and the counters of one
  record (`CrawlState`) are what the command's progress bar shows, from every worker.

Politeness is the HTTP layer's: with Redis, the site's interval and concurrency hold for
all workers together (`core.limits`). Without a broker the command reads the categories
itself, as before.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from core.exceptions import DomainError
from core.holders import holder_gone, holder_token
from problems import catalog
from problems.client import SdamgiaClient, run_with_client, site_base_url
from problems.exceptions import ProblemNotFound, SdamgiaBadPage
from problems.parsing import PageStructureError, parse_category_page
from problems.services import problems_store
from problems.subjects import Site

KEEP_SECONDS = 7 * 24 * 3600  # a crawl's record outlives it this long
WAIT_POLL_SECONDS = 0.5  # a loop with nothing to claim looks again this often
# a claim deleted only by the token holding it (a lapsed claim may be another's by now)
_DROP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def _redis() -> Any:
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)


@dataclass(frozen=True)
class CrawlState:
    total: int
    done: int
    failed: dict[str, str]
    problems: int

    @property
    def finished(self) -> bool:
        return self.done >= self.total


class Crawl:
    """One crawl of one site's categories, shared through Redis by every worker."""

    def __init__(self, crawl_id: str, redis: Any = None) -> None:
        self.id = crawl_id
        self.redis = redis or _redis()
        self.key = f"toolhub:crawl:{crawl_id}"

    @classmethod
    def start(cls, site: Site, category_ids: list[str], *, refresh: bool) -> Crawl:
        crawl = cls(uuid.uuid4().hex)
        crawl.redis.hset(
            crawl.key,
            mapping={
                "subject": site.subject,
                "exam": site.exam,
                "ids": json.dumps(category_ids),
                "refresh": int(refresh),
                "total": len(category_ids),
                "problems": 0,
            },
        )
        crawl.redis.expire(crawl.key, KEEP_SECONDS)
        return crawl

    def state(self) -> CrawlState:
        record = self.redis.hgetall(self.key)
        failed = self.redis.hgetall(f"{self.key}:failed")
        return CrawlState(
            total=int(record.get(b"total", 0)),
            done=int(self.redis.scard(f"{self.key}:done")),
            failed={k.decode(): v.decode() for k, v in failed.items()},
            problems=int(record.get(b"problems", 0)),
        )

    # --- a worker's loop ---------------------------------------------------------------

    def work(self) -> int:
        """Take categories until every one is done; the categories this loop read."""
        record = self.redis.hgetall(self.key)
        if not record:
            return 0  # an unknown or expired crawl
        site = Site(subject=record[b"subject"].decode(), exam=record[b"exam"].decode())
        ids: list[str] = json.loads(record[b"ids"])
        refresh = bool(int(record[b"refresh"]))
        read = 0
        while True:
            done = {member.decode() for member in self.redis.smembers(f"{self.key}:done")}
            open_ids = [cid for cid in ids if cid not in done]
            if not open_ids:
                return read
            took = False
            for category_id in open_ids:
                token = self._claim(category_id)
                if token is None:
                    continue  # another worker reads it (or it just finished)
                took = True
                try:
                    self._read(site, category_id, refresh, token)
                except DomainError as exc:
                    self.redis.hset(f"{self.key}:failed", category_id, exc.message)
                finally:
                    self.redis.sadd(f"{self.key}:done", category_id)
                    self._release(category_id, token)
                read += 1
            if not took:
                time.sleep(WAIT_POLL_SECONDS)  # wait for the others, or for a lease to end

    def _claim(self, category_id: str) -> str | None:
        if self.redis.sismember(f"{self.key}:done", category_id):
            return None
        key, token = f"{self.key}:claim:{category_id}", holder_token()
        lease = int(settings.SDAMGIA_CRAWL_LEASE * 1000)
        if self.redis.set(key, token, nx=True, px=lease):
            return token
        held = self.redis.get(key)  # a worker of this host that was killed holds it no more
        if held is None or not holder_gone(held.decode()) or not self._drop(key, held.decode()):
            return None
        return token if self.redis.set(key, token, nx=True, px=lease) else None

    def _renew(self, category_id: str, token: str) -> None:
        key = f"{self.key}:claim:{category_id}"
        if self.redis.get(key) == token.encode():
            self.redis.pexpire(key, int(settings.SDAMGIA_CRAWL_LEASE * 1000))

    def _release(self, category_id: str, token: str) -> None:
        self._drop(f"{self.key}:claim:{category_id}", token)

    def _drop(self, key: str, token: str) -> bool:
        return bool(self.redis.eval(_DROP, 1, key, token))

    def _read(self, site: Site, category_id: str, refresh: bool, token: str) -> None:
        """A category's listing from where the last reader stopped, page by page."""
        if not refresh and catalog.category_is_fresh(site=site, category_id=category_id):
            return
        mark = f"{self.key}:page:{category_id}"
        saved = self.redis.get(mark)
        point: dict[str, Any] = json.loads(saved) if saved else {"page": 0, "total": 1, "ids": []}

        async def read_pages(client: SdamgiaClient) -> None:
            seen = set(point["ids"])
            while point["page"] < min(point["total"], catalog.LISTING_MAX_PAGES):
                page_no = point["page"] + 1
                page = await client.category_page(site, category_id, page_no)
                try:
                    listing = parse_category_page(page.text, base_url=site_base_url(site))
                except PageStructureError as exc:
                    where = f"page {page_no} of category {category_id}"
                    raise SdamgiaBadPage.unreadable(site.label, where, exc) from None
                new = [p for p in listing.problems if p.problem_id and p.problem_id not in seen]
                if new:
                    await _store(site, new)
                seen.update(p.problem_id for p in new)
                point.update(
                    page=page_no,
                    total=(listing.total_pages or page_no) if new else page_no,
                    ids=[*point["ids"], *(p.problem_id for p in new)],
                )
                self.redis.set(mark, json.dumps(point), ex=KEEP_SECONDS)
                self._renew(category_id, token)

        run_with_client(read_pages)
        if not point["ids"]:
            raise ProblemNotFound(
                f"category {category_id} of {site.label}.sdamgia.ru lists no problems",
                extra={"category_id": category_id},
            )
        catalog.listing_order_store(
            site=site, category_id=category_id, problem_ids=point["ids"], pages=point["page"]
        )
        self.redis.hincrby(self.key, "problems", len(point["ids"]))


async def _store(site: Site, parsed: list[Any]) -> None:
    from asgiref.sync import sync_to_async

    await sync_to_async(problems_store)(site=site, parsed=parsed)


def crawl_work(crawl_id: str) -> int:
    """One worker's loop of a crawl (the body of the Celery task)."""
    return Crawl(crawl_id).work()
