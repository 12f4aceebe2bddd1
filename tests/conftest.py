"""Shared fixtures: subprocess environments, free ports, servers the tests start."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")
PYTHON = sys.executable
MANAGE = str(ROOT / "manage.py")


# Seconds a spawned server or worker may take to get ready (or a wait on one to end) on a
# busy machine: at a load of 15 on 2 cores a Django process start took over 30 s. Only a
# failing test waits this long; a passing one goes on the moment the server answers.
STARTUP_DEADLINE = 180.0

# A property's examples have no time limit: hypothesis's default (200 ms an example) failed
# `test_a_length_is_held_in_any_unit` with a benchmark beside the suite. A test that must be
# quick says so itself (`@settings(deadline=…)`).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


def raw_initialize(client_name: str) -> dict[str, object]:
    """The JSON-RPC `initialize` request a raw-protocol test sends first (id 1)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"},
        },
    }


def gone_holder_token() -> str:
    """A lease token (`core.holders`) of a process of this host that has ended, as a killed
    holder's is."""
    made = subprocess.run(
        [PYTHON, "-c", "from core.holders import holder_token; print(holder_token())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=STARTUP_DEADLINE,
        check=True,
    )
    return made.stdout.strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_server() -> tuple[str, int, str]:
    """The host, port and user of the PostgreSQL server the suite runs on; the test is
    skipped on another database."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (CI runs the suite on it)")
    database = connection.settings_dict
    host, port = database.get("HOST") or "127.0.0.1", int(database.get("PORT") or 5432)
    return host, port, database.get("USER") or "postgres"


def subprocess_env(**overrides: str | None) -> dict[str, str]:
    """This process's environment with `overrides` applied (None removes a variable)."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def wait_for_http(
    url: str, proc: subprocess.Popen[bytes], timeout: float = STARTUP_DEADLINE
) -> None:
    """Wait until `url` answers (any status); fail with the server's stderr if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _, err = proc.communicate(timeout=5)
            pytest.fail(f"server exited with {proc.returncode}:\n{err.decode(errors='replace')}")
        try:
            httpx.get(url, timeout=1.0)
        except httpx.TransportError:
            time.sleep(0.1)
        else:
            return
    proc.kill()
    pytest.fail(f"server at {url} did not answer within {timeout} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture
def spawn() -> Iterator[object]:
    """Start processes that are stopped at the end of the test, whatever happens."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(args: list[str], **env: str | None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            args,
            cwd=ROOT,
            env=subprocess_env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        procs.append(proc)
        return proc

    yield start
    # All asked to stop first, then awaited: their shutdowns overlap (a Celery worker's
    # warm shutdown takes a second or two), rather than adding up.
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text_of(result: object) -> str:
    """The text of a CallToolResult's content blocks."""
    return "".join(block.text for block in result.content)  # type: ignore[attr-defined]


async def orm(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)`, ORM code, from an async test: on a thread whose database connection is
    closed after (one left open keeps PostgreSQL from dropping the test database)."""
    from asgiref.sync import sync_to_async
    from django.db import connection

    def run() -> T:
        try:
            return fn(*args)
        finally:
            connection.close()

    return await sync_to_async(run)()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests (`@pytest.mark.long`: a server, a worker or a stand-in's pace for
    many seconds) first, the rest in their order: pytest-xdist hands them out first, so
    that no worker is left with one of them while the others have finished."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """SQLite tests use a file, so that servers the tests spawn can share the test database;
    under pytest-xdist each worker's test database has the worker's suffix (pytest-django)."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        database.setdefault("TEST", {})["NAME"] = str(
            tmp_path_factory.mktemp("db") / "test.sqlite3"
        )


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashes() -> Iterator[None]:
    """Passwords the suite makes are hashed with one PBKDF2 iteration (tests/hashers.py)."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["tests.hashers.OneIterationPBKDF2"]):
        yield


# What every flush would write back at once: the rows Django's post_migrate handlers make
# from the models (content types and their permissions), the same before and after a test.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


@pytest.fixture(scope="session", autouse=True)
def flush_by_delete() -> Iterator[None]:
    """A transactional test's flush on PostgreSQL deletes the rows instead of truncating
    the tables: TRUNCATE gives each of the ~40 tables, its indexes and TOAST new files
    (0.1-0.3 s a test, over 450 tests); DELETE on the few rows a test leaves takes
    milliseconds. The foreign keys Django makes are deferred, so the order does not matter;
    sequences are not reset either way. A test that asks to reset them, or limits its apps
    (`available_apps`: a cascade), gets Django's TRUNCATE.

    On both databases the content types and permissions stay (KEPT_BY_FLUSH) and the flush
    sends no post_migrate signal, whose handlers would only write the same rows back (45 ms
    a test on PostgreSQL)."""
    from django.core.management.commands import flush
    from django.db.backends.postgresql.operations import DatabaseOperations
    from django.db.backends.sqlite3.base import DatabaseOperations as SQLiteOperations

    truncate = DatabaseOperations.sql_flush
    sqlite_flush = SQLiteOperations.sql_flush
    emit = flush.emit_post_migrate_signal

    def sql_flush(  # type: ignore[no-untyped-def]
        self, style, tables, *, reset_sequences=False, allow_cascade=False
    ) -> list[str]:
        tables = [table for table in tables if table not in KEPT_BY_FLUSH]
        if reset_sequences or allow_cascade or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return ["SET CONSTRAINTS ALL DEFERRED;"] + [
            f"DELETE FROM {self.quote_name(table)};"  # noqa: S608 (quoted table names)
            for table in tables
        ]

    def sqlite_sql_flush(  # type: ignore[no-untyped-def]
        self, style, tables, *, reset_sequences=False, allow_cascade=False
    ) -> list[str]:
        kept = [table for table in tables if table not in KEPT_BY_FLUSH]
        return sqlite_flush(
            self, style, kept, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    SQLiteOperations.sql_flush = sqlite_sql_flush  # type: ignore[method-assign]
    flush.emit_post_migrate_signal = lambda verbosity, interactive, db, **kwargs: None
    yield
    DatabaseOperations.sql_flush = truncate  # type: ignore[method-assign]
    SQLiteOperations.sql_flush = sqlite_flush  # type: ignore[method-assign]
    flush.emit_post_migrate_signal = emit


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):  # type: ignore[no-untyped-def]
    """pytest-django's test database; on PostgreSQL its sessions (the suite's and those of
    the servers and workers the tests spawn) commit without waiting for the disk
    (`synchronous_commit = off`): a test database is thrown away, and a transactional
    test's flush and every commit otherwise wait for an fsync.

    At the end, before pytest-django drops it, every other session on it is ended: a
    worker thread of this process (the tools' and the background pool's threads keep
    their connections) or a spawned server still exiting would otherwise make the DROP
    fail ("being accessed by other users") and leave the database behind."""
    from django.db import connection

    postgres = connection.vendor == "postgresql"
    if postgres:
        name = connection.ops.quote_name(connection.settings_dict["NAME"])
        with django_db_blocker.unblock():
            with connection.cursor() as cursor:
                cursor.execute(f"ALTER DATABASE {name} SET synchronous_commit TO off")
            connection.close()  # a new session takes the database's setting
    yield django_db_setup
    if postgres:
        with django_db_blocker.unblock():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            connection.close()


@pytest.fixture
def subprocess_db_env(django_db_blocker) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """`DATABASE_URL` of the test database, for a process the test spawns.

    Rows the spawned process must see need `django_db(transaction=True)` (committed data).
    """
    from django.db import connection

    database = connection.settings_dict
    if connection.vendor == "sqlite":
        return {"DATABASE_URL": f"sqlite:///{database['NAME']}"}
    user = database.get("USER") or ""
    password = f":{database['PASSWORD']}" if database.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    host = database.get("HOST") or "127.0.0.1"
    port = database.get("PORT") or 5432
    return {"DATABASE_URL": f"postgres://{auth}{host}:{port}/{database['NAME']}"}


@pytest.fixture(autouse=True)
def celery_eager() -> Iterator[None]:
    """Tasks run in-process during tests unless a test starts a real worker and says so
    (`core.background.using_broker(True)`)."""
    from core import background

    with background.using_broker(False):
        yield


@pytest.fixture(autouse=True)
def default_language() -> Iterator[None]:
    """Each test starts in the default language: a request that asked for English (the
    locale middleware activates it on the test's thread) does not leak into the next."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def private_cache(settings, request) -> None:  # type: ignore[no-untyped-def]
    """A fresh in-memory cache per test: throttle counters never leak between tests."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": request.node.nodeid,
        }
    }


@pytest.fixture
def quiet_broker(redis_url: str) -> str:
    """The Redis broker, for a test that starts real workers: the work this process's pool
    still holds from earlier tests done, and the queue they left empty — a stale read's
    retry in the background (`problems.stored`) must not reach this test's site."""
    from kombu import Connection

    from core import background

    background.drain(timeout=STARTUP_DEADLINE)
    with Connection(redis_url) as connection:
        connection.default_channel.queue_purge("celery")
    return redis_url


@pytest.fixture
def redis_url() -> str:
    """The Redis the suite runs against (CI sets REDIS_URL); skip, saying why, without one."""
    url = os.environ.get("REDIS_URL", "")
    if not url:
        pytest.skip("REDIS_URL is not set: this test needs a real Redis server")
    return url
