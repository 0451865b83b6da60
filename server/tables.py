"""The tables in play and the ONE path that changes them.

:meth:`TableService.apply` is how every action lands, whoever sent it (camera, phone, button,
replay): validated by the rules engine through :func:`scoring.history.apply_logged`, appended
to the table's log in one SQLite transaction with its derived records, applied to the state
held in memory, then broadcast to the live feed. A per-table lock serialises writers, so two
posts at once both land, one after the other, and the feed sends them in log order.

A table is *idle* when its game is not over but nobody has acted on it (or, without an action,
since it was created) for ``idle_after`` (``DICEPAD_IDLE_HOURS``): in a bar most games are
never finished, the players just leave. Idle is not an end, and nothing is logged for it: the
next action (an undo too) takes the table up again. It only keeps abandoned games, which pile
up for ever, from costing anything: the pad service and the coach look at the tables
:meth:`TableService.in_play` alone, and a start holds an idle table dormant like a finished one.

At start :meth:`TableService.load` replays the log of every table in play and derives its
records again. A finished or idle table is not replayed when its digest
(:class:`server.rows.Digest`) was made by the rules code running now
(:func:`server.stamp.engine_stamp`) from its whole log (its last seq), and, for a game not
over, when the table is still idle now: it is held *dormant*, its line in the table list taken
from the digest and its records left on the wall as they were derived, and it is replayed on
first use. Either way the state is exactly what it was before the restart, and nothing derived
outlives the rules code or the log it came from: a new stamp or a later event makes the digest
stale, and the table is replayed at the next start.

A service runs for weeks: tonight's finished games, and old ones someone looked at on the
record wall (a look wakes them), would otherwise pile up in memory until the next restart.
Past ``keep_awake`` finished or idle tables held replayed, the least recently used go dormant
again on a freshly saved digest (:meth:`TableService._lull`); a later use replays them.

This module is the service and its one path; the tables it holds, their replay, waking and
sleep are :mod:`server.table_memory` (the base of :class:`TableService`), and the values it
holds and hands out are :mod:`server.table_values`.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from scoring import games
from scoring.actions import Action, End, Fix, Undo
from scoring.errors import IllegalActionError
from scoring.game import Game, Highlight
from scoring.history import apply_logged
from scoring.rules import parse_rules, rules_to_json
from server.feed.hub import Feed, Stream
from server.feed.messages import live_view, sse
from server.feed.subscription import Sink
from server.records import record_rows, replay_with_records, taken_back_by
from server.rows import SOURCES, EventRow, TableRow
from server.standing import Standing, last_roll, resolve
from server.store import Store
from server.table_memory import TableMemory
from server.table_values import (
    Applied,
    Dormant,
    Live,
    ended_at,
    entry_json,
    finished,
    idle,
    summary,
)

log = logging.getLogger(__name__)

Applying = Callable[[str, Standing, tuple[Standing, ...], str], object]
"""An observer of accepted actions (:meth:`TableService.on_apply`)."""

ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read aloud, typed on a phone
ID_LENGTH = 6
JPEG_MAGIC = b"\xff\xd8\xff"


class TableClosedError(IllegalActionError):
    """The table's log no longer replays (a rules change?): nothing more may be applied."""


class SnapshotError(ValueError):
    """A roll snapshot that is not a JPEG or is too big."""


class TableService(TableMemory):
    """Every table: create, read, watch, and the one path to change them."""

    def __init__(
        self,
        store: Store,
        feed: Feed,
        *,
        clock: Callable[[], datetime],
        max_snapshot_bytes: int = 1024 * 1024,
        keepalive_seconds: float = 15.0,
        engine: str | None = None,
        idle_after: timedelta | None = None,
        keep_awake: int = 32,
    ) -> None:
        """``engine`` is the rules code's stamp the digests are checked against (default:
        :func:`~server.stamp.engine_stamp`; a test passes another to play an upgrade).
        ``idle_after``: how long a game not over may go untouched before it is idle (``None``:
        never; the clock is then not read for it). ``keep_awake``: how many finished or idle
        tables stay replayed in memory (the tables in play always do)."""
        super().__init__(
            store, clock=clock, engine=engine, idle_after=idle_after, keep_awake=keep_awake
        )
        self._feed = feed
        self._max_snapshot = max_snapshot_bytes
        self._keepalive = keepalive_seconds
        self._created: list[Callable[[dict[str, Any]], object]] = []
        self._applied: list[Applying] = []

    # -- reading --------------------------------------------------------------------------

    def view(self, table_id: str) -> dict[str, Any]:
        """The table as the scoreboard shows it (cached; rebuilt on every change)."""
        return self._get(table_id).view

    def summaries(self) -> list[dict[str, Any]]:
        """Every table, newest first, for the table list (a dormant table's from its digest:
        listing the tables never replays one), each with ``idle`` as of now."""
        now = self._idle_now()
        with self._lock:
            held = list(self._tables.values())
        held.sort(key=lambda t: (t.row.created, t.row.id), reverse=True)
        return [self._line(t, now) for t in held]

    def summary(self, table_id: str) -> dict[str, Any]:
        """One table's line of :meth:`summaries` (without waking it)."""
        return self._line(self._held(table_id), self._idle_now())

    def in_play(self) -> list[dict[str, Any]]:
        """The lines of the tables in play, neither over nor idle, the most recently acted on
        first: what the pad service and the coach look at. However many games were abandoned,
        this reads no log and wakes no table."""
        now = self._idle_now()
        with self._lock:
            held = list(self._tables.values())
        out = []
        for t in reversed(held):  # held oldest first: a tie (same millisecond) goes to the newer
            line = t.view if isinstance(t, Live) else t.summary
            if not line["over"] and not idle(line, now, self._idle_after):
                out.append(self._line(t, None))
        out.sort(key=lambda s: s["last"], reverse=True)  # one clock's ISO times; stable
        return out

    def _line(self, held: Live | Dormant, now: datetime | None) -> dict[str, Any]:
        line = summary(held.view) if isinstance(held, Live) else dict(held.summary)
        line["idle"] = idle(line, now, self._idle_after)
        return line

    # The log, a roll's photo and the game come from the store and the row alone: reading
    # them (a photo on the record wall) does not wake a dormant table.

    def log(self, table_id: str, since: int = 0) -> list[dict[str, Any]]:
        self._held(table_id)
        return [entry_json(e) for e in self._store.events(table_id, since)]

    def snapshot(self, table_id: str, seq: int) -> bytes | None:
        self._held(table_id)
        return self._store.snapshot(table_id, seq)

    def game_of(self, table_id: str) -> Game[Any]:
        return self._held(table_id).game

    # -- creating -------------------------------------------------------------------------

    def create(
        self,
        game_name: str,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | None = None,
    ) -> dict[str, Any]:
        """A new table; ``ValueError`` (or ``RulesError``) when the game refuses the set-up."""
        game = games.find(game_name)
        state = game.new(players=players, teams=teams, rules=rules)
        setup: dict[str, Any] = (
            {"teams": {k: list(v) for k, v in teams.items()}}
            if teams is not None
            else {"players": list(players or ())}
        )
        rules_json = rules_to_json(parse_rules(game.rules_type, rules, game.rules_prefix))
        created = self._now()
        for _ in range(20):
            table_id = "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
            row = TableRow(table_id, game.name, setup, rules_json, created)
            if self._store.create_table(row):
                break
        else:  # pragma: no cover - 31**6 ids
            raise RuntimeError("could not find a free table id")
        live = Live(row, game, state, state, [], 0, None, created)
        live.view = self._view(live)
        with self._lock:
            self._tables[table_id] = live
            listeners = list(self._created)
        for listener in listeners:
            try:
                listener(live.view)
            except Exception:  # an observer never fails the creation (the table exists)
                log.exception("a table-created listener failed")
        self._lull()  # a new game: the evening moved on, and games left idle may go to sleep
        return live.view

    def on_create(self, listener: Callable[[dict[str, Any]], object]) -> None:
        """Call ``listener(view)`` after each new table (e.g. the coach warm-up, which must
        return at once: it runs in the creating request)."""
        with self._lock:
            self._created.append(listener)

    def on_apply(self, listener: Applying) -> None:
        """Call ``listener(table_id, entry, before, source)`` after each accepted action, in
        log order (the table's lock is held): ``entry`` is the new log entry, ``before`` what
        stood before it. It must return at once and not call back into this service (the pad
        house queues what a fix, an answer or an undo teaches)."""
        with self._lock:
            self._applied.append(listener)

    # -- the one path ---------------------------------------------------------------------

    def apply(
        self,
        table_id: str,
        action: Action,
        *,
        source: str,
        snapshot: bytes | None = None,
    ) -> Applied:
        """Validate ``action`` with the rules engine, append it, update, broadcast.

        Raises :class:`~server.table_values.UnknownTableError`, ``IllegalActionError`` (the
        rule's message; also :class:`TableClosedError`), ``ValueError`` for a bad source or
        snapshot. Nothing is changed unless the event is safely in the database.

        An action that leaves the game finished (the winning bank, ``end``) saves the table's
        digest in the event's own transaction, so the next start need not replay tonight's
        games either; an undo or fix after it leaves that digest stale (its seq is behind).
        """
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
        if snapshot is not None:
            _check_snapshot(snapshot, self._max_snapshot)
        with self._locked(table_id) as live:
            self._check_open(live)
            game = live.game
            before = live.state
            stood = live.standing
            actions = [s.action for s in live.standing]
            if isinstance(action, Undo | Fix):
                # Undo and fix rewrite what stands: validate by replaying the standing log.
                after = apply_logged(game, live.start, actions, action)
            else:
                # Incremental: the live state already is the replay of the standing log.
                after = apply_logged(game, before, (), action)
            seq = live.seq + 1
            at = self._now()
            entry = Standing(seq, at, action, snapshot is not None)
            highlights: tuple[Highlight, ...] = ()
            if isinstance(action, Undo | Fix):
                standing = resolve([*live.standing, entry])
            else:
                standing = [*live.standing, entry]
                highlights = tuple(game.highlights(before, action, after))
            # Undo, fix and a re-roll (which takes back the throw just made) change what
            # stands: the table's records are derived again; anything else only adds.
            replace = isinstance(action, Undo | Fix) or (
                taken_back_by(live.standing, entry) is not None
            )
            if replace:
                _, records = replay_with_records(game, table_id, live.start, standing)
            else:
                records = record_rows(game.name, table_id, entry, highlights, last_roll(standing))
            event = EventRow(
                table_id, seq, at, source, action.type, action.to_json(), snapshot is not None
            )
            ended = ended_at(standing)
            pad = {k: v for k, v in live.pad.items() if k != "notice"}  # the table moved on
            view = self._view(
                dataclasses.replace(
                    live, state=after, standing=standing, seq=seq, ended=ended, last=at, pad=pad
                )
            )
            self._store.append(
                event,
                snapshot=snapshot,
                records=records,
                replace_records=replace,
                set_ended=ended != live.ended,
                ended=ended,
                digest=self._digest(view) if finished(view) else None,
            )
            live.state, live.standing, live.seq, live.ended = after, standing, seq, ended
            live.last = at
            live.pad, live.view = pad, view
            applied = self._publish(live, event, highlights)
            for listener in list(self._applied):
                try:
                    listener(table_id, entry, tuple(stood), source)
                except Exception:  # an observer never fails the action (it is logged)
                    log.exception("an action listener failed")
        if finished(view):
            self._lull()
        return applied

    def set_pad(self, table_id: str, key: str, value: Any) -> None:
        """Show ``value`` as ``view["pad"][key]`` (``None`` removes it) and broadcast the
        table: how the pad service tells a table about its camera and its last throw."""
        with self._locked(table_id) as live:
            if live.pad.get(key) == value:
                return
            if value is None:
                live.pad.pop(key, None)
            else:
                live.pad[key] = value
            live.view = self._view(live)
            self._feed.publish(live.row.id, sse("state", live_view(live.view), live.seq))

    def end(self, table_id: str, *, source: str = "phone") -> Applied:
        """End the game now: the game's ``end`` action, through the one path (undoable)."""
        return self.apply(table_id, End(), source=source)

    def _publish(self, live: Live, event: EventRow, highlights: tuple[Highlight, ...]) -> Applied:
        """Broadcast the entry and the table's view (already refreshed); called with the
        table's lock held, so the feed carries events in log order. The message is encoded
        once for every phone, and its state is :func:`~server.feed.messages.live_view`
        (history cut to the last round): bounded however long the game."""
        entry = entry_json(event)
        live_entry = entry | {"highlights": [h.to_json() for h in highlights]}
        self._feed.publish(
            live.row.id,
            sse("entry", live_entry, event.seq) + sse("state", live_view(live.view), event.seq),
        )
        return Applied(entry, live.view, highlights)

    @staticmethod
    def _check_open(live: Live) -> None:
        if live.problem is not None:
            raise TableClosedError(f"table {live.row.id} is closed: {live.problem}")

    def _now(self) -> str:
        return self._clock().isoformat(timespec="milliseconds")

    # -- the live feed --------------------------------------------------------------------

    def watch(
        self, table_id: str, last_event_id: int | None = None, *, sink: Sink | None = None
    ) -> Stream:
        """A live stream of the table: the entries after ``last_event_id`` (catch-up), the
        full table now (history included), then every change (history cut to the last
        round). With ``sink`` (the server's connection) the live part is written by the
        feed's writer thread. Raises ``FeedFullError`` past the bound."""
        with self._locked(table_id) as live:  # no event slips between snapshot and subscription
            sub = self._feed.subscribe(table_id)
            seq, view, cached = live.seq, live.view, live.snapshot
        # Encoded outside the writers' lock. Two watchers racing may store an older pair;
        # the next watcher sees it is not the current view and encodes that one.
        if cached is None or cached[0] is not view:
            cached = (view, sse("state", view, seq))
            live.snapshot = cached
        initial: list[bytes] = []
        if last_event_id is not None and 0 <= last_event_id < seq:
            initial.extend(
                sse("entry", entry_json(e), e.seq)
                for e in self._store.events(table_id, last_event_id)
                if e.seq <= seq
            )
        initial.append(cached[1])
        return Stream(sub, initial, keepalive_seconds=self._keepalive, sink=sink)


def _check_snapshot(snapshot: bytes, limit: int) -> None:
    if not snapshot.startswith(JPEG_MAGIC):
        raise SnapshotError("a roll snapshot must be a JPEG image")
    if len(snapshot) > limit:
        raise SnapshotError(f"a roll snapshot may be at most {limit} bytes")
