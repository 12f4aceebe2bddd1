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


CONNECT_TIMEOUT = 2  # seconds: a health check answers fast, whatever is down


def check_database() -> CheckResult:
    """PostgreSQL: a connection of its own with a short connect timeout (not one borrowed
    from the pool, which would wait its 30 s for a server that is gone)."""
    try:
        if connection.vendor == "postgresql":
            _postgres_ping()
        else:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()
    except Exception as exc:  # any driver error means "down"; the text says why
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        return CheckResult("database", ok=False, detail=detail[:300])
    return CheckResult("database", ok=True, detail=connection.vendor)


def _postgres_ping() -> None:
    import psycopg

    database = connection.settings_dict
    with psycopg.connect(
        dbname=database["NAME"],
        user=database.get("USER") or None,
        password=database.get("PASSWORD") or None,
        host=database.get("HOST") or None,
        port=database.get("PORT") or None,
        connect_timeout=CONNECT_TIMEOUT,
    ) as direct:
        direct.execute("SELECT 1").fetchone()


def check_redis(url: str) -> CheckResult:
    client = redis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT
    )
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
