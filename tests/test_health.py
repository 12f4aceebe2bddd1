"""/healthz: 200 when every component is up, 503 naming what is down."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_healthz_ok_with_database(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.REDIS_URL = ""
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True
    assert "redis" not in body["checks"]


@pytest.mark.django_db
def test_healthz_ok_with_database_and_redis(client, settings, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    settings.REDIS_URL = redis_url
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["redis"] == {"ok": True, "detail": "ping ok"}


@pytest.mark.django_db
def test_healthz_503_names_redis_when_it_is_down(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["down"] == ["redis"]
    assert body["checks"]["database"]["ok"] is True
    assert "ConnectionError" in body["checks"]["redis"]["detail"]
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_healthz_503_names_the_database_when_postgresql_is_gone(
    client, settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The check opens its own connection with a 2 s connect timeout: it does not wait the
    pool's 30 s for a server that is not there."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the suite runs on SQLite: no PostgreSQL server to lose")
    settings.REDIS_URL = ""
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(connection.settings_dict, "PORT", "1")  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["down"] == ["database"]
    assert "OperationalError" in body["checks"]["database"]["detail"]
