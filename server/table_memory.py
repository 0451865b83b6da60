"""The tables held in memory and how they get there (:class:`TableMemory`, the base of
:class:`~server.tables.TableService`): every table brought back at start (:meth:`~TableMemory.load`:
replayed from its log, or held dormant on a current digest), a table's replay and view, a
dormant table woken on first use (:meth:`~TableMemory._wake`) and the least recently used put
back to sleep (:meth:`~TableMemory._lull`). The rules it keeps are in :mod:`server.tables`'s
docstring.

Apart from the service because it owns different state: the dict of tables, its lock and the
use and replay counts, where the service owns the listeners, the feed and the one path that
changes a table. Its code derives a table from its log, so this file is in
:data:`server.stamp.DERIVING`.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from scoring import games
from scoring.actions import action_from_json
from scoring.errors import IllegalActionError, MalformedActionError
from scoring.game import Game
from server.records import replay_with_records
from server.rows import Digest, RecordRow, TableHead, TableRow
from server.stamp import engine_stamp
from server.standing import Standing, resolve
from server.store import Store
from server.table_values import (
    Dormant,
    Live,
    UnknownTableError,
    ended_at,
    finished,
    idle,
    summary,
)

log = logging.getLogger(__name__)


def _new_state(game: Game[Any], row: TableRow) -> Any:
    setup = row.setup
    if "teams" in setup:
        return game.new(teams=setup["teams"], rules=row.rules)
    return game.new(players=setup["players"], rules=row.rules)


class TableMemory:
    """Every table held: replayed (:class:`~server.table_values.Live`) or dormant
    (:class:`~server.table_values.Dormant`), and the count of replays (module docstring)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], datetime],
        engine: str | None = None,
        idle_after: timedelta | None = None,
        keep_awake: int = 32,
    ) -> None:
        """See :class:`~server.tables.TableService`."""
        if idle_after is not None and idle_after <= timedelta(0):
            raise ValueError(f"idle_after must be positive, got {idle_after}")
        if keep_awake < 1:  # the table just used must stay awake for its caller
            raise ValueError(f"keep_awake must be 1 or more, got {keep_awake}")
        self._keep_awake = keep_awake
        self._uses = 0
        self._store = store
        self._clock = clock
        self._idle_after = idle_after
        self._engine = engine_stamp() if engine is None else engine
        self._lock = threading.Lock()  # guards the dict and the count, never held replaying
        self._tables: dict[str, Live | Dormant] = {}
        self._replays = 0

    # -- start ----------------------------------------------------------------------------

    def load(self) -> list[str]:
        """Bring back every table; returns the problems found.

        A finished table with a current digest, or an idle one (idle now) with a current
        digest, is held dormant (no replay, its records kept); every other table is replayed,
        its records derived again (only its own: one transaction for all of them) and, when
        finished or idle, its digest saved. A table whose log no longer replays is kept,
        closed; one whose game is gone is left out (its records go). Either way the rest of
        the house carries on, and the log is never touched.
        """
        problems: list[str] = []
        records: dict[str, list[RecordRow]] = {}
        digests: list[Digest] = []
        stale: list[str] = []  # digests no longer true of their table (reopened, closed)
        loaded: dict[str, Live | Dormant] = {}
        heads = self._store.heads()
        now = self._idle_now() if heads else None
        for head in heads:
            row = head.row
            try:
                digest = self._current(head, now)
                if digest is not None:
                    loaded[row.id] = Dormant(row, games.find(row.game), digest.summary)
                    continue
                live, rows = self._replay(row)
            except (ValueError, ImportError) as exc:  # an unknown game, a refused line-up
                problems.append(f"table {row.id} is not loaded: {exc}")
                records[row.id] = []
                if head.digest is not None:
                    stale.append(row.id)
                continue
            loaded[row.id] = live
            records[row.id] = rows
            if live.problem:
                problems.append(f"table {row.id}: {live.problem}")
            if finished(live.view) or idle(live.view, now, self._idle_after):
                digests.append(self._digest(live.view))
            elif head.digest is not None:
                stale.append(row.id)
        self._store.rederive(records, digests=digests, forget=stale)
        with self._lock:
            self._tables = loaded
        self._lull()  # after a rules upgrade every table was replayed
        return problems

    def _current(self, head: TableHead, now: datetime | None) -> Digest | None:
        """The table's digest if it stands for a replay: made by this rules code from the
        whole log as it is now, of a finished game or of one idle at ``now`` (a table played
        since, or a clock set back, must be in play again: replayed)."""
        d = head.digest
        if d is None or d.engine != self._engine or d.seq != head.last_seq:
            return None
        if d.summary.get("over") is True or idle(d.summary, now, self._idle_after):
            return d
        return None

    def _digest(self, view: Mapping[str, Any]) -> Digest:
        return Digest(view["table"], self._engine, view["seq"], summary(view))

    @property
    def replays(self) -> int:
        """How many table logs this service has replayed (at start and on first use)."""
        with self._lock:
            return self._replays

    @property
    def awake(self) -> int:
        """How many tables are held replayed in memory (the rest are dormant)."""
        with self._lock:
            return sum(isinstance(t, Live) for t in self._tables.values())

    def _replay(self, row: TableRow) -> tuple[Live, list[RecordRow]]:
        with self._lock:
            self._replays += 1
        events = self._store.events(row.id)
        problem: str | None = None
        game = games.find(row.game)
        start = _new_state(game, row)
        standing: list[Standing] = []
        state = start
        rows: list[RecordRow] = []
        try:
            entries = [
                Standing(e.seq, e.at, action_from_json(e.payload), e.snapshot) for e in events
            ]
            standing = resolve(entries)
            state, rows = replay_with_records(game, row.id, start, standing)
        except (IllegalActionError, MalformedActionError) as exc:
            problem = f"the log no longer replays: {exc}"
            standing, state, rows = [], start, []
        seq, last = (events[-1].seq, events[-1].at) if events else (0, row.created)
        live = Live(row, game, start, state, standing, seq, ended_at(standing), last)
        live.problem = problem
        live.view = self._view(live)
        return live, rows

    # -- reading --------------------------------------------------------------------------

    def _held(self, table_id: str) -> Live | Dormant:
        with self._lock:
            held = self._tables.get(table_id)
            if isinstance(held, Live):
                self._uses += 1
                held.used = self._uses
        if held is None:
            raise UnknownTableError(f"no table {table_id!r}")
        return held

    def _get(self, table_id: str) -> Live:
        held = self._held(table_id)
        return held if isinstance(held, Live) else self._wake(held)

    @contextmanager
    def _locked(self, table_id: str) -> Iterator[Live]:
        """The table, replayed, with its lock held: a table put back to sleep between the
        fetch and the lock is fetched (woken) again, so no change lands on a retired copy."""
        while True:
            live = self._get(table_id)
            with live.lock:
                if not live.retired:
                    yield live
                    return

    def _lull(self) -> None:
        """Put the least recently used finished or idle tables back to sleep, past
        ``keep_awake`` of them: each on a digest saved now (its line in the table list, and
        the next start need not replay it either). A table busy right now (its lock taken)
        is skipped; a closed table (its log no longer replays) stays as it is. Runs after a
        start, a wake, an action that finishes a game and a new table: a game merely left idle
        sleeps at the next of those."""
        now = self._idle_now()
        with self._lock:
            asleep = [
                t
                for t in self._tables.values()
                if isinstance(t, Live)
                and t.problem is None
                and (finished(t.view) or idle(t.view, now, self._idle_after))
            ]
        if len(asleep) <= self._keep_awake:
            return
        asleep.sort(key=lambda t: t.used)
        held: list[tuple[Live, Digest]] = []
        try:
            for live in asleep[: len(asleep) - self._keep_awake]:
                if not live.lock.acquire(blocking=False):
                    continue
                if finished(live.view) or idle(live.view, now, self._idle_after):
                    held.append((live, self._digest(live.view)))
                else:
                    live.lock.release()  # taken up again meanwhile
            if held:
                try:
                    self._store.rederive({}, digests=[d for _, d in held])  # one transaction
                except sqlite3.Error:
                    # memory is only a cost: the action or look that called this has
                    # already succeeded, and the tables stay awake until the next try
                    log.exception("could not save digests to put tables back to sleep")
                    return
            with self._lock:
                for live, digest in held:
                    if self._tables.get(live.row.id) is live:
                        self._tables[live.row.id] = Dormant(live.row, live.game, digest.summary)
                        live.retired = True
        finally:
            for live, _ in held:
                live.lock.release()

    def _wake(self, dormant: Dormant) -> Live:
        """Replay a dormant table on its first use, once: a second caller waits for the
        first (on the table's own lock, never the service's) and takes its result.

        The replay derives the records already on the wall, so they are not written again;
        a replay that finds a problem closes the table (or leaves it out) as :meth:`load`
        would, takes its records off the wall and drops its digest.
        """
        table_id = dormant.row.id
        with dormant.waking:
            with self._lock:
                held = self._tables.get(table_id)
            if isinstance(held, Live):
                return held  # woken meanwhile
            try:
                live, _ = self._replay(dormant.row)
            except (ValueError, ImportError) as exc:
                log.error("table %s is not loaded: %s", table_id, exc)
                self._store.rederive({table_id: []}, forget=[table_id])
                with self._lock:
                    if self._tables.get(table_id) is dormant:
                        del self._tables[table_id]
                raise UnknownTableError(f"table {table_id!r} is not loaded: {exc}") from exc
            if live.problem is not None:
                log.error("table %s: %s", table_id, live.problem)
                self._store.rederive({table_id: []}, forget=[table_id])
            with self._lock:
                if self._tables.get(table_id) is dormant:
                    self._tables[table_id] = live
                self._uses += 1
                live.used = self._uses
        self._lull()
        return live

    def __contains__(self, table_id: object) -> bool:
        with self._lock:
            return table_id in self._tables

    def _idle_now(self) -> datetime | None:
        """Now, to judge idleness by (``None`` when nothing is ever idle: no clock reading)."""
        if self._idle_after is None:
            return None
        now = self._clock()
        return now if now.tzinfo is not None else now.replace(tzinfo=UTC)

    def _view(self, live: Live) -> dict[str, Any]:
        game, state = live.game, live.state
        state_json = game.state_to_json(state)
        outcome = game.outcome(state)
        closed = live.problem is not None
        return {
            "table": live.row.id,
            "game": game.name,
            "title": game.title,
            "setup": live.row.setup,
            "rules": state_json.get("rules", live.row.rules),
            "created": live.row.created,
            "ended": live.ended,
            "problem": live.problem,
            "seq": live.seq,
            "last": live.last,
            "over": outcome is not None or closed,
            "outcome": outcome.to_json() if outcome is not None else None,
            "expecting": game.expecting(state).to_json(),
            "legal": [] if closed else [a.to_json() for a in game.legal_actions(state)],
            "can_undo": bool(live.standing) and not closed,
            "pad": dict(live.pad),
            "state": state_json,
        }
