"""The players' rows kept up to date as events are logged, and the questions pages ask.

Every accepted action (``TableService.on_apply``) queues its table; one worker thread
(niced, like the coach's warm-up) replays each queued table from the log, derives its rows
(:func:`server.players.stats.derive`, with the coach's rating of every finished turn) and
replaces them in one transaction. An append never waits for this: the table's lock is held
only to queue it, and a burst of actions is one derivation. At start the tables whose rows
are missing, stale (a longer log) or derived by other code (the stamp) are queued, newest
first; tables just played jump the queue. A page reads indexed aggregates over the rows
(no replay) and says how many tables are still queued.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from server.player_store import Listed, PlayerStore, Totals
from server.players.names import valid_key
from server.players.stats import PlayerRow, from_log
from server.stamp import engine_stamp
from server.store import Store
from server.tables import TableService

log = logging.getLogger(__name__)

NICE = 10  #: the worker's niceness above the server's (the pad loop and requests first)
LATEST = 10  #: the latest games a player page lists
RATED = ("you-blew-it", "bolo")  #: the games the coach rates
ZERO = Totals(0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0)


@functools.cache
def stamp() -> str:
    """The rules code's stamp and this package's source: rows derived by other code are
    derived again at start."""
    digest = hashlib.sha256(engine_stamp().encode())
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def add(a: Totals, b: Totals) -> Totals:
    """Two sets of totals as one (every game's from each game's)."""
    return Totals(
        a.tables + b.tables, a.games + b.games, a.wins + b.wins, a.turns + b.turns,
        a.blown + b.blown, a.points + b.points, max(a.best_turn, b.best_turn),
        a.rated_turns + b.rated_turns, a.decisions + b.decisions,
        a.given_away + b.given_away, a.luck + b.luck,
    )  # fmt: skip


@dataclass(frozen=True)
class PlayerPage:
    """What a player page shows: ``all`` the totals, ``by_game`` each game's, ``best`` the
    row of their best roll, ``latest`` their latest tables, ``pending`` tables queued."""

    key: str
    name: str
    hidden: bool
    all: Totals
    by_game: Mapping[str, Totals]
    best: PlayerRow | None
    latest: tuple[PlayerRow, ...]
    pending: int


class PlayerService:
    """The rows' worker and the players' queries (module docstring)."""

    def __init__(self, store: Store, *, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._rows = PlayerStore(store)
        self._clock = clock
        self._lock = threading.Condition()
        self._queue: OrderedDict[str, None] = OrderedDict()
        self._busy: str | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    # -- keeping the rows -----------------------------------------------------------------

    def attach(self, tables: TableService) -> None:
        """Queue every table that lacks current rows, and each table as it changes."""
        tables.on_apply(lambda table_id, *_: self.queue([table_id], first=True))
        self.queue(self._rows.stale(stamp()))

    def queue(self, table_ids: list[str], *, first: bool = False) -> None:
        """Derive these tables' rows soon (``first``: before the tables already queued)."""
        with self._lock:
            if self._closed:
                return
            for table_id in table_ids:
                self._queue[table_id] = None
                if first:
                    self._queue.move_to_end(table_id, last=False)
            if self._queue and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._work, name="players", daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def _work(self) -> None:
        """One thread for the server's life, asleep while nothing is queued: not a thread
        per burst of actions (a Pi pays for each, and QEMU's arm64 emulation in CI crashed
        on that churn)."""
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        while True:
            with self._lock:
                self._busy = None
                self._lock.notify_all()  # wait() may be waiting for the queue to empty
                self._lock.wait_for(lambda: bool(self._queue) or self._closed)
                if self._closed:
                    self._thread = None
                    self._lock.notify_all()
                    return
                table_id, _ = self._queue.popitem(last=False)
                self._busy = table_id
            try:
                self.derive_table(table_id)
            except sqlite3.ProgrammingError:  # the database was closed under us: shut down
                self.close()
            except Exception:  # one table never stops the others (it is logged)
                log.exception("could not derive the players of table %s", table_id)

    def derive_table(self, table_id: str) -> None:
        """Replay one table from its log and replace its players' rows."""
        row = self._store.table(table_id)
        if row is None:
            return
        events = self._store.events(table_id)
        try:
            rows = from_log(row, events)
        except (ValueError, ImportError) as exc:  # an unknown game, a log that does not resolve
            log.warning("table %s counts for no player: %s", table_id, exc)
            rows = ()
        self._rows.replace(table_id, stamp(), events[-1].seq if events else 0, rows)

    def wait(self, timeout: float = 10.0) -> bool:
        """Wait until every queued table is derived (tests and benchmarks); ``False`` on
        timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._queue and self._busy is None, timeout)

    def pending(self) -> int:
        """Tables queued or being derived."""
        with self._lock:
            return len(self._queue) + (self._busy is not None)

    def close(self) -> None:
        """Stop: nothing more is queued, the worker ends after its table."""
        with self._lock:
            self._closed = True
            self._queue.clear()
            self._lock.notify_all()

    # -- the questions --------------------------------------------------------------------

    def listing(self, *, include_hidden: bool = False) -> list[Listed]:
        return self._rows.players(include_hidden=include_hidden)

    def page(self, name: str, *, include_hidden: bool = False) -> PlayerPage | None:
        """A player's page by any spelling of their name (``None``: nobody, or hidden)."""
        key = valid_key(name)
        if key is None:
            return None
        hidden = self._rows.hidden(key)
        if hidden and not include_hidden:
            return None
        by_game = self._rows.totals(key)
        if not by_game:
            return None
        latest = tuple(self._rows.latest(key, LATEST))
        total = ZERO
        for t in by_game.values():
            total = add(total, t)
        return PlayerPage(
            key, latest[0].name, hidden, total, by_game, self._rows.best_roll(key), latest,
            self.pending(),
        )  # fmt: skip

    def set_hidden(self, name: str, hidden: bool) -> str | None:
        """Hide a player from the pages (or show them again); their key, ``None`` when no
        such player."""
        key = valid_key(name)
        if key is None or not self._rows.totals(key):
            return None
        self._rows.set_hidden(key, hidden, self._clock().isoformat(timespec="milliseconds"))
        return key


def per_turn(total: float, turns: int) -> float | None:
    return round(total / turns, 1) if turns else None


def totals_json(t: Totals) -> dict[str, Any]:
    """The figures of :class:`Totals` as the API gives them (averages per turn)."""
    return {
        "tables": t.tables,
        "games": t.games,
        "wins": t.wins,
        "turns": t.turns,
        "blown": t.blown,
        "average_turn": per_turn(t.points, t.turns),
        "best_turn": t.best_turn,
        "rated_turns": t.rated_turns,
        "decisions": t.decisions,
        "given_away": per_turn(t.given_away, t.rated_turns),
        "luck": per_turn(t.luck, t.rated_turns),
    }


def game_json(r: PlayerRow) -> dict[str, Any]:
    """One of a player's games as the API gives it."""
    return {
        "table": r.table_id,
        "game": r.game,
        "at": r.at,
        "over": r.over,
        "win": r.win,
        "score": r.score,
        "turns": r.turns,
        "blown": r.blown,
        "best_turn": r.best_turn,
        "best_roll": r.best_roll,
        "given_away": per_turn(r.given_away, r.rated_turns),
        "luck": per_turn(r.luck, r.rated_turns),
        "costly": [d.to_json() for d in r.costly],
        "rounds": list(r.rounds),
    }


def best_roll_json(r: PlayerRow | None, photo: Callable[[str, int], str]) -> Any:
    if r is None:
        return None
    seq = r.best_roll_seq
    return {
        "points": r.best_roll,
        "dice": list(r.best_roll_dice),
        "table": r.table_id,
        "seq": seq,
        "photo": photo(r.table_id, seq) if seq is not None else None,
    }
