"""Health checks of the components the project depends on."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import connection


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


def check_database() -> CheckResult:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "down"; the text says why
        return CheckResult("database", ok=False, detail=f"{type(exc).__name__}: {exc}".strip())
    return CheckResult("database", ok=True, detail=connection.vendor)


def check_redis(url: str) -> CheckResult:
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        return CheckResult("redis", ok=False, detail=f"{type(exc).__name__}: {exc}")
    finally:
        client.close()
    return CheckResult("redis", ok=True, detail="ping ok")


def health_report() -> list[CheckResult]:
    """The database always; Redis when REDIS_URL is configured."""
    checks = [check_database()]
    if settings.REDIS_URL:
        checks.append(check_redis(settings.REDIS_URL))
    return checks
