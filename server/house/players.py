"""The house's player rows, kept up to date as tables ship: derived by the house itself.

Why the house derives rather than taking figures from the table servers: the log is the
truth, the house holds every table's log, and the derivation is a pure function of it
(:func:`server.players.stats.from_log`, the very replay a table server makes), so the house's
rows are exactly the table servers' without a second kind of data on the wire, and a house
upgraded with a better derivation re-derives every table itself.

One worker thread (niced: the pages first) derives a table at a time: queued by each shipped
batch's NOTIFY (:class:`server.house.listen.HouseListener` hands it the tables, which jump
the queue), and by a *sweep* for the tables whose rows are missing, behind ``tables.last_seq``
or stamped by other code, made when it starts, whenever the LISTEN connection is (re)made
(notifications sent while it was down are lost) and when the database comes back. A table
is read on one pooled connection, derived with none held, and its rows replaced in one
transaction, which first advances ``player_derived`` only if no newer derivation is there
(two house servers on one database never put an older one back).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from psycopg.types.json import Jsonb

from server.house.pool import HouseDb, HouseUnavailableError
from server.players import service
from server.players.stats import PlayerRow, from_log
from server.rows import EventRow, TableRow

log = logging.getLogger(__name__)

Key = tuple[str, str]  #: (house name, table id)
NICE = 10
ROWS_PER_INSERT = 500  #: 22 parameters a row; PostgreSQL takes at most 65,535

COLUMNS = (
    "house_name, table_id, player, name, game, at, over, win, score, turns, blown, points,"
    " best_turn, best_roll, best_roll_dice, best_roll_seq, rated_turns, decisions,"
    " given_away, luck, rounds, costly"
)

STALE = (
    "SELECT t.house_name, t.table_id FROM tables t LEFT JOIN player_derived d"
    " ON d.house_name = t.house_name AND d.table_id = t.table_id"
    " WHERE d.table_id IS NULL OR d.stamp <> %s OR d.seq <> t.last_seq"
    " ORDER BY COALESCE(t.summary->>'last', t.created) DESC, t.house_name, t.table_id"
)


@functools.cache
def stamp() -> str:
    """The table servers' derivation stamp (the rules code and ``server/players``) and this
    module's source, which reads the house's rows into it: rows made by other code are
    derived again."""
    digest = hashlib.sha256(service.stamp().encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def _values(house_name: str, r: PlayerRow) -> list[Any]:
    return [
        house_name, r.table_id, r.player, r.name, r.game, r.at, r.over, r.win, r.score,
        r.turns, r.blown, r.points, r.best_turn, r.best_roll, Jsonb(list(r.best_roll_dice)),
        r.best_roll_seq, r.rated_turns, r.decisions, r.given_away, r.luck,
        Jsonb(list(r.rounds)), Jsonb([d.to_json() for d in r.costly]),
    ]  # fmt: skip


class HousePlayers:
    """The worker (module docstring); :meth:`start` it once the app is built."""

    def __init__(self, db: HouseDb, *, retry_seconds: float = 5.0) -> None:
        self._db = db
        self._retry = retry_seconds
        self._cond = threading.Condition()
        self._queue: OrderedDict[Key, None] = OrderedDict()
        self._sweep = True  # the first thing it does
        self._busy = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="house-players", daemon=True)
        self.derived = 0  #: tables derived since the start (tests, benchmarks)

    # -- what wakes it ----------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._queue.clear()
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def queue(self, keys: Iterable[Key]) -> None:
        """Derive these tables next (they changed: ahead of a sweep's backlog)."""
        with self._cond:
            for key in reversed(list(keys)):
                self._queue[key] = None
                self._queue.move_to_end(key, last=False)
            self._cond.notify_all()

    def sweep(self) -> None:
        """Look for every table whose rows are missing or stale (soon, on the worker)."""
        with self._cond:
            self._sweep = True
            self._cond.notify_all()

    def pending(self) -> int:
        """Tables queued or being derived (a page says its figures may be behind)."""
        with self._cond:
            return len(self._queue) + self._busy

    def wait(self, timeout: float = 10.0) -> bool:
        """Until nothing is queued, swept or derived (tests, benchmarks); ``False`` on
        timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._queue and not self._busy and not self._sweep, timeout
            )

    # -- the thread -------------------------------------------------------------------------

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        while not self._stop.is_set():
            with self._cond:
                self._cond.wait_for(lambda: self._stop.is_set() or self._sweep or bool(self._queue))
                if self._stop.is_set():
                    return
                key: Key | None = None
                if not self._sweep:
                    key, _ = self._queue.popitem(last=False)
                self._sweep = False
                self._busy = True
            try:
                if key is None:
                    self._swept(self.stale())
                else:
                    self.derive_table(key)
            except HouseUnavailableError:  # away: try again later, nothing is lost
                self._again(key)
                self._stop.wait(self._retry)
            except Exception:  # one table never stops the others (it is logged)
                log.exception("could not derive the players of table %s", key)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _swept(self, keys: list[Key]) -> None:
        with self._cond:
            for key in keys:
                self._queue.setdefault(key, None)

    def _again(self, key: Key | None) -> None:
        with self._cond:
            if key is None:
                self._sweep = True
            else:
                self._queue[key] = None
                self._queue.move_to_end(key, last=False)

    # -- one table --------------------------------------------------------------------------

    def stale(self) -> list[Key]:
        """The tables whose rows are missing, behind the log or stamped by other code,
        the latest played first."""
        with self._db.connection() as conn:
            rows = conn.execute(STALE, (stamp(),)).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def derive_table(self, key: Key) -> None:
        """Replay one table from the log the house holds and replace its players' rows."""
        with self._db.connection() as conn:
            found = conn.execute(
                "SELECT game, setup, rules, created, ended FROM tables"
                " WHERE house_name = %s AND table_id = %s",
                key,
            ).fetchone()
            if found is None:
                return
            events = [
                EventRow(key[1], int(r[0]), r[1], r[2], r[3], r[4], bool(r[5]))
                for r in conn.execute(
                    "SELECT seq, at, source, type, payload, snapshot FROM events"
                    " WHERE house_name = %s AND table_id = %s ORDER BY seq",
                    key,
                )
            ]
        table = TableRow(key[1], found[0], found[1], found[2], found[3], found[4])
        try:
            rows = from_log(table, events)  # no connection held while the coach works
        except (ValueError, ImportError) as exc:
            log.warning("table %s/%s counts for no player: %s", *key, exc)
            rows = ()
        self._write(key, events[-1].seq if events else 0, rows)
        self.derived += 1

    def _write(self, key: Key, seq: int, rows: Sequence[PlayerRow]) -> None:
        with self._db.connection() as conn, conn.transaction():
            newer = conn.execute(
                "INSERT INTO player_derived (house_name, table_id, stamp, seq)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (house_name, table_id) DO UPDATE"
                " SET stamp = excluded.stamp, seq = excluded.seq"
                " WHERE player_derived.stamp <> excluded.stamp"
                " OR player_derived.seq <= excluded.seq RETURNING 1",
                (*key, stamp(), seq),
            ).fetchone()
            if newer is None:  # another house server derived a longer log meanwhile
                return
            conn.execute("DELETE FROM player_tables WHERE house_name = %s AND table_id = %s", key)
            for start in range(0, len(rows), ROWS_PER_INSERT):
                part = rows[start : start + ROWS_PER_INSERT]
                marks = ", ".join(["(" + ", ".join(["%s"] * 22) + ")"] * len(part))
                args = [v for r in part for v in _values(key[0], r)]
                conn.execute(f"INSERT INTO player_tables ({COLUMNS}) VALUES {marks}", args)
