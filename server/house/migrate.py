"""Connecting to the house database and bringing its schema up to date (:mod:`.schema`).

Both sides call :func:`connect`: a table server's shipper and ``dicepad house``. Errors come
out as :class:`HouseError` with a sentence a bar owner can act on, never a driver traceback.
"""

from __future__ import annotations

import psycopg

from server.house.schema import MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION


class HouseError(RuntimeError):
    """The house database cannot be used: unreachable, refused, or a newer schema."""


def connect(url: str, *, timeout: float = 5.0, autocommit: bool = False) -> psycopg.Connection:
    """A connection to the house database at ``url`` (``postgresql://...``), its schema
    migrated; :class:`HouseError` when it cannot be reached or used."""
    try:
        conn = psycopg.connect(url, connect_timeout=max(1, round(timeout)), autocommit=False)
    except psycopg.Error as exc:
        raise HouseError(f"cannot reach the house database: {_first_line(exc)}") from exc
    try:
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    conn.autocommit = autocommit
    return conn


def schema_version(conn: psycopg.Connection) -> int:
    """The version the database is at (0: empty)."""
    row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    got = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(got[0]) if got else 0


def migrate(conn: psycopg.Connection) -> int:
    """Apply the migrations the database has not seen, each in one transaction, holding
    :data:`MIGRATION_LOCK`; the version it ends at."""
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            version = schema_version(conn)
            if version > SCHEMA_VERSION:
                raise HouseError(
                    f"the house database has schema version {version}, newer than this "
                    f"dicepad ({SCHEMA_VERSION}); upgrade dicepad"
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target - 1]:
                    conn.execute(statement)
                conn.execute("DELETE FROM schema_version")
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (target,))
    except psycopg.Error as exc:
        raise HouseError(f"cannot set up the house database: {_first_line(exc)}") from exc
    return SCHEMA_VERSION


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
