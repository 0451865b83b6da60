"""The SQLite event store: tables, their append-only event logs, roll snapshots, records.

The log is the truth. Events are only ever inserted (triggers refuse UPDATE and DELETE), every
append is one transaction together with everything derived from it, and the database runs in
WAL mode with ``synchronous=FULL``: a power cut loses at most the write in flight, never the
database. The schema is migrated here at open (``PRAGMA user_version``; the migrations are
:mod:`server.schema`, the values read and written :mod:`server.rows`). Beside the log it keeps
derived data, always replaceable from it: the record wall and the digests of
finished tables (what a start would otherwise replay them for).

One connection serves the process behind a lock: writes are serialised anyway, and the reads
the API does (a log, a snapshot, the record wall) are short.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from server.rows import SOURCES, Digest, EventRow, RecordRow, TableHead, TableRow
from server.schema import MIGRATIONS, SCHEMA_VERSION


class StoreError(RuntimeError):
    """The database cannot be used (newer schema, unreadable file)."""


def _dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class Store:
    """The database of one dicepad installation; safe to share between threads."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the database {self.path}: {exc}") from exc
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise StoreError(f"cannot use the database {self.path}: {exc}") from exc
        except StoreError:
            self._db.close()
            raise

    # -- plumbing -------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``; any error rolls the whole write back."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def _migrate(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this dicepad "
                f"({SCHEMA_VERSION}); upgrade dicepad"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self._transaction() as db:
                for statement in MIGRATIONS[target - 1]:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {target}")

    @property
    def schema_version(self) -> int:
        return int(self._query("PRAGMA user_version")[0][0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def ping(self) -> None:
        """Raise ``sqlite3.Error`` when the database does not answer (health check)."""
        self._query("SELECT 1 FROM tables LIMIT 1")

    def integrity_check(self) -> str:
        return str(self._query("PRAGMA integrity_check")[0][0])

    # -- settings ---------------------------------------------------------------------------

    def setting(self, name: str) -> str | None:
        rows = self._query("SELECT value FROM settings WHERE name = ?", (name,))
        return str(rows[0][0]) if rows else None

    def set_settings(self, values: Mapping[str, str]) -> None:
        """Set several settings in one transaction."""
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO settings (name, value) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                list(values.items()),
            )

    # -- sessions ---------------------------------------------------------------------------

    def add_session(self, digest: str, version: int, expires: float, now: float) -> None:
        """Record a session (and forget those expired by ``now``)."""
        with self._transaction() as db:
            db.execute("DELETE FROM sessions WHERE expires <= ?", (now,))
            db.execute(
                "INSERT INTO sessions (id, version, expires) VALUES (?, ?, ?)",
                (digest, version, expires),
            )

    def session_version(self, digest: str, now: float) -> int | None:
        """The PIN version of a live session, None when unknown, ended or expired."""
        rows = self._query(
            "SELECT version FROM sessions WHERE id = ? AND expires > ?", (digest, now)
        )
        return int(rows[0][0]) if rows else None

    def end_expired_sessions(self, now: float) -> None:
        """Forget the sessions expired by ``now``."""
        with self._transaction() as db:
            db.execute("DELETE FROM sessions WHERE expires <= ?", (now,))

    def end_session(self, digest: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (digest,))

    def end_sessions_before(self, version: int) -> None:
        """Forget the sessions of PIN versions older than ``version`` (the PIN changed)."""
        with self._transaction() as db:
            db.execute("DELETE FROM sessions WHERE version < ?", (version,))

    # -- tables -----------------------------------------------------------------------------

    def create_table(self, row: TableRow) -> bool:
        """Insert a new table; ``False`` when the id is taken (the caller picks another)."""
        try:
            with self._transaction() as db:
                db.execute(
                    "INSERT INTO tables (id, game, setup, rules, created, ended) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (row.id, row.game, _dumps(row.setup), _dumps(row.rules), row.created, None),
                )
        except sqlite3.IntegrityError:
            return False
        return True

    @staticmethod
    def _table(r: tuple[Any, ...]) -> TableRow:
        return TableRow(r[0], r[1], json.loads(r[2]), json.loads(r[3]), r[4], r[5])

    def tables(self) -> list[TableRow]:
        """Every table, oldest first."""
        rows = self._query(
            "SELECT id, game, setup, rules, created, ended FROM tables ORDER BY created, id"
        )
        return [self._table(r) for r in rows]

    def heads(self) -> list[TableHead]:
        """Every table, oldest first, with its last seq and its digest if it has one, in ONE
        query: a start reads this instead of every log."""
        rows = self._query(
            "SELECT t.id, t.game, t.setup, t.rules, t.created, t.ended,"
            " (SELECT MAX(e.seq) FROM events e WHERE e.table_id = t.id),"
            " d.engine, d.seq, d.summary"
            " FROM tables t LEFT JOIN table_digests d ON d.table_id = t.id"
            " ORDER BY t.created, t.id"
        )
        return [
            TableHead(
                self._table(r),
                r[6] or 0,
                None if r[7] is None else Digest(r[0], r[7], r[8], json.loads(r[9])),
            )
            for r in rows
        ]

    def table(self, table_id: str) -> TableRow | None:
        rows = self._query(
            "SELECT id, game, setup, rules, created, ended FROM tables WHERE id = ?", (table_id,)
        )
        return self._table(rows[0]) if rows else None

    # -- events -----------------------------------------------------------------------------

    def events(self, table_id: str, since: int = 0) -> list[EventRow]:
        """The table's log after ``since``, in order."""
        rows = self._query(
            "SELECT e.seq, e.at, e.source, e.type, e.payload, s.seq IS NOT NULL "
            "FROM events e LEFT JOIN snapshots s ON s.table_id = e.table_id AND s.seq = e.seq "
            "WHERE e.table_id = ? AND e.seq > ? ORDER BY e.seq",
            (table_id, since),
        )
        return [
            EventRow(table_id, r[0], r[1], r[2], r[3], json.loads(r[4]), bool(r[5])) for r in rows
        ]

    def append(
        self,
        event: EventRow,
        *,
        snapshot: bytes | None = None,
        records: Sequence[RecordRow] = (),
        replace_records: bool = False,
        set_ended: bool = False,
        ended: str | None = None,
        digest: Digest | None = None,
    ) -> None:
        """One event and everything derived from it, in ONE transaction.

        ``records`` are added (after deleting the table's records when ``replace_records``,
        the undo/fix case); with ``set_ended`` the table's ``ended`` becomes ``ended`` (an
        ``end`` action, or an undo of one); ``digest`` (the game just finished) replaces the
        table's digest. Raises ``sqlite3.IntegrityError`` when ``seq`` is taken, so two
        writers can never interleave a log.
        """
        if event.source not in SOURCES:
            raise ValueError(f"unknown event source {event.source!r}")
        with self._transaction() as db:
            db.execute(
                "INSERT INTO events (table_id, seq, at, source, type, payload) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    event.table_id,
                    event.seq,
                    event.at,
                    event.source,
                    event.type,
                    _dumps(event.payload),
                ),
            )
            if snapshot is not None:
                db.execute(
                    "INSERT INTO snapshots (table_id, seq, jpeg) VALUES (?, ?, ?)",
                    (event.table_id, event.seq, snapshot),
                )
            if replace_records:
                db.execute("DELETE FROM records WHERE table_id = ?", (event.table_id,))
            self._insert_records(db, records)
            if set_ended:
                db.execute("UPDATE tables SET ended = ? WHERE id = ?", (ended, event.table_id))
            if digest is not None:
                self._save_digests(db, [digest])

    def snapshot(self, table_id: str, seq: int) -> bytes | None:
        rows = self._query(
            "SELECT jpeg FROM snapshots WHERE table_id = ? AND seq = ?", (table_id, seq)
        )
        return bytes(rows[0][0]) if rows else None

    # -- records ----------------------------------------------------------------------------

    @staticmethod
    def _insert_records(db: sqlite3.Connection, records: Iterable[RecordRow]) -> None:
        db.executemany(
            "INSERT INTO records (id, table_id, seq, game, kind, player, points, dice, text, at,"
            " snapshot_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    r.id,
                    r.table_id,
                    r.seq,
                    r.game,
                    r.kind,
                    r.player,
                    r.points,
                    _dumps(list(r.dice)),
                    r.text,
                    r.at,
                    r.snapshot_seq,
                )
                for r in records
            ],
        )

    def rederive(
        self,
        records: Mapping[str, Sequence[RecordRow]],
        *,
        digests: Iterable[Digest] = (),
        forget: Iterable[str] = (),
    ) -> None:
        """After replaying some tables: each table in ``records`` gets exactly those records
        (the other tables' are left alone), ``digests`` are saved and the digests of the
        tables in ``forget`` dropped, all in ONE transaction."""
        with self._transaction() as db:
            db.executemany("DELETE FROM records WHERE table_id = ?", [(t,) for t in records])
            self._insert_records(db, (r for rows in records.values() for r in rows))
            self._save_digests(db, digests)
            db.executemany("DELETE FROM table_digests WHERE table_id = ?", [(t,) for t in forget])

    @staticmethod
    def _save_digests(db: sqlite3.Connection, digests: Iterable[Digest]) -> None:
        db.executemany(
            "INSERT INTO table_digests (table_id, engine, seq, summary) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (table_id) DO UPDATE SET engine = excluded.engine,"
            " seq = excluded.seq, summary = excluded.summary",
            [(d.table_id, d.engine, d.seq, _dumps(d.summary)) for d in digests],
        )

    def records(
        self,
        *,
        game: str | None = None,
        kind: str | None = None,
        table_id: str | None = None,
        min_points: int | None = None,
        include_hidden: bool = False,
        limit: int = 50,
    ) -> list[RecordRow]:
        """The wall, biggest first (ties: earliest first)."""
        where, args = [], []  # type: list[str], list[object]
        for column, value in (("r.game", game), ("r.kind", kind), ("r.table_id", table_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if min_points is not None:
            where.append("r.points >= ?")
            args.append(min_points)
        if not include_hidden:
            where.append("h.id IS NULL")
        sql = (
            "SELECT r.id, r.table_id, r.seq, r.game, r.kind, r.player, r.points, r.dice, r.text,"
            " r.at, r.snapshot_seq, h.id IS NOT NULL FROM records r"
            " LEFT JOIN hidden_records h ON h.id = r.id AND (h.dice IS NULL OR (h.kind = r.kind"
            " AND h.player = r.player AND h.points = r.points AND h.dice = r.dice))"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY r.points DESC, r.at, r.id LIMIT ?"
        )
        rows = self._query(sql, [*args, limit])
        return [
            RecordRow(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                tuple(json.loads(r[7])),
                r[8],
                r[9],
                r[10],
                bool(r[11]),
            )
            for r in rows
        ]

    def record_exists(self, record_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM records WHERE id = ?", (record_id,)))

    def set_hidden(self, record_id: str, hidden: bool, at: str) -> None:
        with self._transaction() as db:
            if hidden:  # what the record says now: hidden again after a fix, the fixed one
                db.execute(
                    "INSERT INTO hidden_records (id, at, kind, player, points, dice)"
                    " SELECT id, ?, kind, player, points, dice FROM records WHERE id = ?"
                    " ON CONFLICT (id) DO UPDATE SET kind = excluded.kind,"
                    " player = excluded.player, points = excluded.points, dice = excluded.dice",
                    (at, record_id),
                )
            else:
                db.execute("DELETE FROM hidden_records WHERE id = ?", (record_id,))
