"""Sync tools keep their thread's SQLite connection: no reconnect (and WAL checkpoint) per call."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.backends.sqlite3.base import DatabaseWrapper
from mcp import Client
from mcp.server.mcpserver import MCPServer

from core.mcp_server import build_tool
from core.registry import ToolRegistry

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]


def test_sqlite_connections_are_persistent_and_in_wal_mode(settings: Any) -> None:
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("PostgreSQL borrows pooled connections per call (CONN_MAX_AGE 0 by design)")
    assert database["CONN_MAX_AGE"] is None or database["CONN_MAX_AGE"] > 0  # None: default
    assert database["CONN_HEALTH_CHECKS"] is True
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone() == ("wal",)


async def test_sequential_sync_tool_calls_reuse_one_connection(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("PostgreSQL borrows pooled connections per call (CONN_MAX_AGE 0 by design)")
    opened = []
    new_connection = DatabaseWrapper.get_new_connection

    def counted(self: DatabaseWrapper, params: dict[str, Any]) -> Any:
        opened.append(params)
        return new_connection(self, params)

    monkeypatch.setattr(DatabaseWrapper, "get_new_connection", counted)
    registry = ToolRegistry(app="db", title="DB")

    @registry.tool(name="query", read_only=True, open_world=False, structured_output=False)
    def query() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return str(cursor.fetchone()[0])

    server = MCPServer("test", tools=[build_tool(spec) for spec in registry.specs])
    async with Client(server) as client:
        for _ in range(5):
            result = await client.call_tool("query", {})
            assert not result.is_error
    # The SDK reuses an idle worker thread for sequential calls; its connection stays open.
    assert len(opened) <= 1
