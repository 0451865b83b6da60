"""The table server's shipper: one background thread that copies every event of this server's
tables to the house database, in order and exactly once, and never makes a table wait.

The table service only tells it which table changed (:meth:`Shipper.changed`, called with the
table's lock held: a set and an Event, no I/O). The thread then reads the table's line, then
its log after what the house holds (the store commits an event before the line shows it, so
the events read always reach the line's seq), and ships them in batches through
:mod:`server.house.ship`, the last batch with the line and the records when no event landed
since they were read: a line never claims an event the house does not hold. The PIN holder's
hidden players are no table's: their whole set ships on its own, at every (re)connection and
after every hide or show (:meth:`Shipper.players_changed`). A sweep at every
(re)connection and every ``sweep_seconds`` compares each table with what the house holds, so
nothing missed stays missed. Any failure closes the connection and the thread retries with
back-off (``retry_min`` doubling to ``retry_max``, jittered, so that a bar of Pis does not
knock all at once when the house comes back); the SQLite log keeps everything meanwhile.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import psycopg

from server.house import ship
from server.house.migrate import HouseError, connect
from server.house.ship import Batch, HouseHead, LogConflictError, NameTakenError
from server.player_store import PlayerStore
from server.rows import TableRow
from server.store import Store
from server.table_values import UnknownTableError
from server.tables import TableService

log = logging.getLogger(__name__)

ACKED_SETTING = "house.acked"  #: what the house held at the last save: the waiting count at start
ACK_SAVE_SECONDS = 10.0  #: at most one such save (an SQLite write) per this many seconds
RECORDS_LIMIT = 1_000_000  #: a table's records, all of them


@dataclass(frozen=True)
class ShipSettings:
    url: str
    house_name: str
    public_url: str  #: this server's scoreboard, for the house page's links
    retry_min: float = 1.0
    retry_max: float = 60.0
    sweep_seconds: float = 30.0
    batch: int = 500  #: events per transaction
    #: how long the thread lets a change settle before shipping: the action's own request
    #: finishes first (its answer is not slowed by the shipping it woke), and a burst of
    #: actions ships as one batch
    linger: float = 0.02
    connect_timeout: float = 5.0


@dataclass(frozen=True)
class HouseStatus:
    """Where shipping stands: what ``/api/health`` and the scoreboard's banner show."""

    house_name: str
    online: bool
    offline_since: datetime | None  #: since the first failure after being online (or start)
    waiting: int  #: events not yet at the house (as far as this server knows)
    last_error: str | None
    refused: str | None  #: why the house refuses this server's name
    shipped: int = 0  #: events shipped since this server started

    @property
    def ok(self) -> bool:
        return self.online and self.refused is None

    def banner(self) -> str | None:
        """The scoreboard's line, only when something is wrong."""
        if self.refused is not None:
            return f"not shipping to the house: {self.refused}"
        if self.offline_since is None:
            return None
        n = self.waiting
        return (
            f"house offline since {self.offline_since.astimezone():%H:%M}, "
            f"{n} {'event' if n == 1 else 'events'} waiting"
        )

    def detail(self) -> str:
        """The health component's sentence."""
        if self.refused is not None:
            return self.refused
        if self.online:
            text = f"shipping to the house as {self.house_name!r}: {self.waiting} waiting"
            return text if self.last_error is None else f"{text} ({self.last_error})"
        if self.offline_since is None:
            return f"connecting to the house as {self.house_name!r}"
        return f"{self.banner()} (last error: {self.last_error})"

    def to_json(self) -> dict[str, Any]:
        since = self.offline_since
        return {
            "house_name": self.house_name,
            "online": self.online,
            "offline_since": since.isoformat(timespec="seconds") if since else None,
            "waiting": self.waiting,
            "last_error": self.last_error,
            "refused": self.refused,
            "shipped": self.shipped,
        }


class Shipper:
    """The shipping thread of one table server and what it knows of the house. It reads the
    logs of ``store``'s database through a connection of its own."""

    def __init__(
        self,
        store: Store,
        tables: TableService,
        settings: ShipSettings,
        *,
        instance: str,
        clock: Callable[[], datetime],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        # Its own connection: with WAL, reading the logs never waits on a table's write.
        self._store = Store(store.path)
        self._players = PlayerStore(self._store)
        self._tables = tables
        self.settings = settings
        self._instance = instance
        self._clock = clock
        self._now = monotonic
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._dirty: set[str] = set()
        self._forced: set[str] = set()  #: ship the line and records even if the seq is the same
        self._hides_due = False  #: ship the set of hidden players (set at every connection)
        self._local = {str(s["table"]): int(s["seq"]) for s in tables.summaries()}
        self._house = self._load_acks()
        self._saved_at = self._now()
        self._conflicts: dict[str, str] = {}
        self._rows: dict[str, TableRow] = {}  #: the tables' rows (the thread's own)
        self._status = HouseStatus(settings.house_name, False, None, 0, None, None)
        self._thread = threading.Thread(target=self._run, name="house-shipper", daemon=True)

    # -- the table service's side: no I/O ------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def changed(self, table_id: str, seq: int | None = None, *, records: bool = False) -> None:
        """``table_id`` changed (its log reached ``seq``; ``records``: a record was hidden or
        shown): wake the thread. Returns at once."""
        with self._lock:
            self._dirty.add(table_id)
            if seq is not None:
                self._local[table_id] = max(seq, self._local.get(table_id, 0))
            if records:
                self._forced.add(table_id)
        self._wake.set()

    def players_changed(self) -> None:
        """The PIN holder hid or showed a player: wake the thread to ship the set of hidden
        players. Returns at once."""
        with self._lock:
            self._hides_due = True
        self._wake.set()

    def status(self) -> HouseStatus:
        with self._lock:
            waiting = sum(
                max(0, seq - (self._house[t].last_seq if t in self._house else 0))
                for t, seq in self._local.items()
            )
            return replace(self._status, waiting=waiting)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (whatever it was shipping waits in SQLite for the next start)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        if not self._thread.is_alive():
            self._save_acks()
        self._store.close()

    # -- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        conn: ship.Conn | None = None
        failures = 0
        next_sweep = 0.0
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = self._connect()
                    failures, next_sweep = 0, 0.0
                self._wake.clear()
                if self._now() >= next_sweep:
                    self._sweep(conn)
                    next_sweep = self._now() + self.settings.sweep_seconds
                self._ship_hides(conn)
                more = self._pass(conn)
                if self._now() - self._saved_at >= ACK_SAVE_SECONDS:
                    self._save_acks()
                if not more and self._wake.wait(max(0.0, next_sweep - self._now())):
                    self._stop.wait(self.settings.linger)
            except NameTakenError as exc:
                _drop(conn)
                conn = None
                self._set_refused(str(exc))
                self._stop.wait(self.settings.retry_max)
            except Exception as exc:  # the house gone, the store closed at shutdown, a bug
                _drop(conn)
                conn = None
                if self._stop.is_set():
                    break
                failures += 1
                self._set_offline(exc)
                self._stop.wait(self._backoff(failures))
        _drop(conn)

    def _backoff(self, failures: int) -> float:
        s = self.settings
        wait: float = min(s.retry_max, s.retry_min * 2.0 ** min(failures - 1, 30))
        return wait * random.uniform(0.5, 1.0)

    def _connect(self) -> ship.Conn:
        s = self.settings
        conn = connect(s.url, timeout=s.connect_timeout, autocommit=True)
        try:
            conn.execute("SET statement_timeout = '60s'")
            ship.claim(conn, s.house_name, self._instance, s.public_url)
            held = ship.heads(conn, s.house_name)
        except BaseException:
            conn.close()
            raise
        with self._lock:
            self._house = held
            self._hides_due = True  # the house may have lost or missed a change meanwhile
            was = self._status
            self._status = replace(
                was, online=True, offline_since=None, last_error=None, refused=None
            )
        log.info("house: shipping to the house as %r", s.house_name)
        return conn

    def _sweep(self, conn: ship.Conn) -> None:
        """Every table the house lacks anything of becomes dirty."""
        ship.seen(conn, self.settings.house_name, self._instance)
        held = ship.heads(conn, self.settings.house_name)
        lines = self._tables.summaries()
        with self._lock:
            self._house = held
            for line in lines:
                t, seq = str(line["table"]), int(line["seq"])
                self._local[t] = max(seq, self._local.get(t, 0))
                h = held.get(t)
                if h is None or h.last_seq < seq or h.summary_seq is None or h.summary_seq < seq:
                    self._dirty.add(t)

    def _ship_hides(self, conn: ship.Conn) -> None:
        """The set of hidden players, whole, when due; a failure leaves it due (the thread
        reconnects, and a connection makes it due anyway)."""
        with self._lock:
            if not self._hides_due:
                return
            self._hides_due = False  # before reading: a hide committed after the read re-sets it
        try:
            keys = self._players.hidden_keys()
            ship.ship_hidden_players(conn, self.settings.house_name, self._instance, keys)
        except BaseException:
            with self._lock:
                self._hides_due = True
            raise

    def _pass(self, conn: ship.Conn) -> bool:
        """Ship every dirty table; whether more became dirty meanwhile."""
        with self._lock:
            todo, self._dirty = self._dirty, set()
            forced, self._forced = self._forced, set()
        done: set[str] = set()
        try:
            for t in sorted(todo):
                if self._stop.is_set():
                    break
                try:
                    self._ship_table(conn, t, force=t in forced)
                except LogConflictError as exc:  # that table only: the others go on
                    if self._conflicts.get(t) != str(exc):
                        log.error("house: %s", exc)
                    self._conflicts[t] = str(exc)
                    with self._lock:
                        self._status = replace(self._status, last_error=str(exc))
                done.add(t)
        finally:
            with self._lock:
                self._dirty |= todo - done
                self._forced |= forced - done
        with self._lock:
            return bool(self._dirty)

    def _ship_table(self, conn: ship.Conn, table_id: str, *, force: bool) -> None:
        """Ship what the house lacks of one table, line and records with the last batch."""
        try:
            line = self._tables.summary(table_id)  # first: the events read next reach its seq
        except UnknownTableError:
            return
        row = self._rows.get(table_id) or self._store.table(table_id)
        if row is None:
            return
        self._rows[table_id] = row  # only its id, game, setup, rules and creation are used
        with self._lock:
            held = self._house.get(table_id)
        last = held.last_seq if held is not None else 0
        events = self._store.events(table_id, last)
        stale = held is None or held.summary_seq is None or held.summary_seq < int(line["seq"])
        want_line = force or stale or bool(events)
        size = max(1, self.settings.batch)
        chunks = [tuple(events[i : i + size]) for i in range(0, len(events), size)] or [()]
        for n, chunk in enumerate(chunks):
            batch = Batch(row, chunk)
            if n == len(chunks) - 1 and want_line:
                batch = self._with_line(batch, line, chunk[-1].seq if chunk else last)
            head = ship.ship(conn, self.settings.house_name, self._instance, batch)
            with self._lock:
                self._house[table_id] = head
                self._status = replace(self._status, shipped=self._status.shipped + len(chunk))
        self._conflicts.pop(table_id, None)

    def _with_line(self, batch: Batch, line: dict[str, Any], end: int) -> Batch:
        """``batch`` (which ends the log at ``end``) with the table's line and records, when
        they are those of ``end`` or before; else as it is, and the table stays dirty."""
        table_id = batch.table.id
        records = tuple(
            self._store.records(table_id=table_id, include_hidden=True, limit=RECORDS_LIMIT)
        )
        if self._store.events(table_id, end):  # an event landed: the records may be past it
            with self._lock:
                self._dirty.add(table_id)
            return batch
        fresh = self._tables.summary(table_id)
        chosen = fresh if int(fresh["seq"]) <= end else line
        return replace(batch, summary=chosen, records=records)

    # -- status -------------------------------------------------------------------------

    def _set_offline(self, exc: Exception) -> None:
        text = _sentence(exc)
        with self._lock:
            was = self._status
            since = was.offline_since if was.offline_since is not None else self._clock()
            self._status = replace(was, online=False, offline_since=since, last_error=text)
        if was.online or was.offline_since is None:
            if isinstance(exc, ship.ShipError | OSError | psycopg.Error | HouseError):
                log.warning("house: offline (%s); the tables play on, events wait here", text)
            else:
                log.exception("house: shipping failed; retrying with back-off")

    def _set_refused(self, text: str) -> None:
        with self._lock:
            was = self._status
            self._status = replace(was, online=False, refused=text, last_error=text)
        if was.refused != text:
            log.error("house: %s; the tables play on here", text)

    # -- what the house held, kept over a restart (for the waiting count only) -----------

    def _load_acks(self) -> dict[str, HouseHead]:
        try:
            saved = json.loads(self._store.setting(ACKED_SETTING) or "{}")
        except ValueError:
            return {}
        if not isinstance(saved, dict) or saved.get("house_name") != self.settings.house_name:
            return {}
        tables = saved.get("tables")
        if not isinstance(tables, dict):
            return {}
        return {str(t): HouseHead(int(s), None) for t, s in tables.items() if isinstance(s, int)}

    def _save_acks(self) -> None:
        with self._lock:
            tables = {t: h.last_seq for t, h in self._house.items()}
        self._saved_at = self._now()
        blob = {"house_name": self.settings.house_name, "tables": tables}
        try:
            self._store.set_settings({ACKED_SETTING: json.dumps(blob, separators=(",", ":"))})
        except Exception:  # only a hint for the next start's waiting count
            log.warning("house: could not note what the house holds", exc_info=True)


def _drop(conn: ship.Conn | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except Exception:  # already broken: nothing to close cleanly
            log.debug("house: closing a broken connection", exc_info=True)


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
