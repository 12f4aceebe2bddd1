"""Django's PostgreSQL backend, pooled, that says at once why it cannot connect.

A psycopg pool makes its connections in the background and retries a failed one quietly:
a process asking for its first connection to a database that does not exist, a role the
server refuses or a host nobody listens on waits the pool's whole timeout
(DATABASE_POOL_TIMEOUT, 30 s) and hears only «couldn't get a connection after 30.00 sec».
Here a pool that has given no connection yet is waited on FIRST_WAIT seconds; then one
connection is opened directly, and its refusal (the server's own words: «database "x"
does not exist») is raised at once, naming the database. A server that answers the direct
attempt is only slow: the pool is waited on for the rest of its timeout, as before. Once a
pool has given a connection, its waits are psycopg's own (a busy pool is no refusal).

Settings use it as the ENGINE of a pooled PostgreSQL database (config/settings.py).
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import PoolTimeout

FIRST_WAIT = 3.0  # seconds a new pool is waited on before a direct attempt asks why


def _made(stats: dict[str, int]) -> int:
    """How many connections a pool (its `stats`) has made: its attempts less the failed."""
    return stats.get("connections_num", 0) - stats.get("connections_errors", 0)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        pool = self.pool
        if pool is not None and not _made(pool.get_stats()):
            pool.open()
            try:
                pool.putconn(pool.getconn(timeout=FIRST_WAIT))
            except PoolTimeout:
                self._refusal_raised(conn_params)
        return super().get_new_connection(conn_params)

    def _refusal_raised(self, conn_params: dict[str, Any]) -> None:
        """Raises why a direct connection with `conn_params` fails, naming the database;
        returns when it succeeds (the server is only slow)."""
        try:
            psycopg.connect(**conn_params, connect_timeout=10).close()
        except psycopg.OperationalError as exc:
            settings = self.settings_dict
            host, port = settings.get("HOST") or "localhost", settings.get("PORT") or 5432
            reason = " ".join(str(exc).split())  # the server's words, on one line
            raise psycopg.OperationalError(
                f"the database {settings['NAME']} on {host}:{port} cannot be reached: {reason}"
            ) from exc
