"""Django's PostgreSQL backend whose pool tells at once why a database cannot be reached
(`core.postgresql.base`)."""
