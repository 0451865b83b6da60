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
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scoring import games
from scoring.actions import Action, End, Fix, Undo, action_from_json
from scoring.errors import IllegalActionError, MalformedActionError
from scoring.game import Game, Highlight
from scoring.history import apply_logged
from scoring.rules import parse_rules, rules_to_json
from server.feed.hub import Feed, Stream
from server.feed.messages import live_view, sse
from server.feed.subscription import Sink
from server.records import record_rows, replay_with_records, taken_back_by
from server.rows import SOURCES, Digest, EventRow, RecordRow, TableHead, TableRow
from server.stamp import engine_stamp
from server.standing import Standing, last_roll, resolve
from server.store import Store

log = logging.getLogger(__name__)

Applying = Callable[[str, Standing, tuple[Standing, ...], str], object]
"""An observer of accepted actions (:meth:`TableService.on_apply`)."""

ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read aloud, typed on a phone
ID_LENGTH = 6
JPEG_MAGIC = b"\xff\xd8\xff"
#: a table's line in the table list (:meth:`TableService.summaries`): what a digest keeps;
#: ``last`` is when it was last acted on (its creation while its log is empty)
SUMMARY_KEYS = ("table", "game", "title", "setup", "created", "ended", "seq", "last")


class UnknownTableError(LookupError):
    """No table has that id (HTTP 404)."""


class TableClosedError(IllegalActionError):
    """The table's log no longer replays (a rules change?): nothing more may be applied."""


class SnapshotError(ValueError):
    """A roll snapshot that is not a JPEG or is too big."""


@dataclass(frozen=True)
class Applied:
    """What one accepted action produced: its log entry, the table after it, its records."""

    entry: dict[str, Any]
    table: dict[str, Any]
    highlights: tuple[Highlight, ...]


@dataclass
class _Live:
    """A table in memory: the replay of its log, guarded by its lock."""

    row: TableRow
    game: Game[Any]
    start: Any
    state: Any
    standing: list[Standing]
    seq: int
    ended: str | None
    last: str  #: the time of its last event (its creation while there is none)
    problem: str | None = None  #: why the log no longer replays (the table is then closed)
    #: what the pad service shows with the table (``camera`` status, a ``notice`` about the
    #: last throw); a ``notice`` is cleared by the next action, whoever sends it
    pad: dict[str, Any] = field(default_factory=dict)
    view: dict[str, Any] = field(default_factory=dict)
    #: ``view`` encoded as the full ``state`` event a (re)connecting phone starts with, made
    #: once per change (a reconnect storm must not encode the whole history per phone)
    snapshot: tuple[dict[str, Any], bytes] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: int = 0  #: the service's use count at its last use (least recently used goes dormant)
    #: put back to sleep (:meth:`TableService._lull`): a caller who fetched it before must
    #: fetch the table again, which wakes it anew from the log
    retired: bool = False


@dataclass
class _Dormant:
    """A finished or idle table not replayed at start: its row, its game and its line in the
    table list (from its digest). ``waking`` makes the replay on first use happen once."""

    row: TableRow
    game: Game[Any]
    summary: dict[str, Any]
    waking: threading.Lock = field(default_factory=threading.Lock)


def _summary(view: Mapping[str, Any]) -> dict[str, Any]:
    """A table's line in the table list, from its view."""
    return {k: view[k] for k in SUMMARY_KEYS} | {
        "scores": view["state"].get("scores"),
        "expecting": view["expecting"],
        "over": view["over"],
    }


def _idle(line: Mapping[str, Any], now: datetime | None, after: timedelta | None) -> bool:
    """Whether a table's view, summary or digest shows a game not over that nobody has acted
    on for longer than ``after`` at ``now`` (``None``: nothing is ever idle). A time that
    does not parse is taken for recent: such a table is replayed, which is always right."""
    if after is None or now is None or line.get("over"):
        return False
    last = _moment(line.get("last"))
    return last is not None and now - last > after


def _moment(text: object) -> datetime | None:
    """An ISO time as an aware datetime (a naive one is UTC, as the clock's are); ``None``
    for anything else."""
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _finished(view: Mapping[str, Any]) -> bool:
    """A game the rules call over (won, or ended with ``end``) whose log replays: it only
    changes again through an undo or a fix, so its digest may stand for a replay."""
    return bool(view["over"]) and view["problem"] is None


def _new_state(game: Game[Any], row: TableRow) -> Any:
    setup = row.setup
    if "teams" in setup:
        return game.new(teams=setup["teams"], rules=row.rules)
    return game.new(players=setup["players"], rules=row.rules)


def entry_json(event: EventRow) -> dict[str, Any]:
    """A log entry as the API shows it (``GET .../log``)."""
    return {
        "seq": event.seq,
        "at": event.at,
        "source": event.source,
        "action": event.payload,
        "snapshot": event.snapshot,
    }


class TableService:
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
        if idle_after is not None and idle_after <= timedelta(0):
            raise ValueError(f"idle_after must be positive, got {idle_after}")
        if keep_awake < 1:  # the table just used must stay awake for its caller
            raise ValueError(f"keep_awake must be 1 or more, got {keep_awake}")
        self._keep_awake = keep_awake
        self._uses = 0
        self._store = store
        self._feed = feed
        self._clock = clock
        self._idle_after = idle_after
        self._max_snapshot = max_snapshot_bytes
        self._keepalive = keepalive_seconds
        self._engine = engine_stamp() if engine is None else engine
        self._lock = threading.Lock()  # guards the dict and the count, never held replaying
        self._tables: dict[str, _Live | _Dormant] = {}
        self._created: list[Callable[[dict[str, Any]], object]] = []
        self._applied: list[Applying] = []
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
        loaded: dict[str, _Live | _Dormant] = {}
        heads = self._store.heads()
        now = self._idle_now() if heads else None
        for head in heads:
            row = head.row
            try:
                digest = self._current(head, now)
                if digest is not None:
                    loaded[row.id] = _Dormant(row, games.find(row.game), digest.summary)
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
            if _finished(live.view) or _idle(live.view, now, self._idle_after):
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
        if d.summary.get("over") is True or _idle(d.summary, now, self._idle_after):
            return d
        return None

    def _digest(self, view: Mapping[str, Any]) -> Digest:
        return Digest(view["table"], self._engine, view["seq"], _summary(view))

    @property
    def replays(self) -> int:
        """How many table logs this service has replayed (at start and on first use)."""
        with self._lock:
            return self._replays

    @property
    def awake(self) -> int:
        """How many tables are held replayed in memory (the rest are dormant)."""
        with self._lock:
            return sum(isinstance(t, _Live) for t in self._tables.values())

    def _replay(self, row: TableRow) -> tuple[_Live, list[RecordRow]]:
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
        live = _Live(row, game, start, state, standing, seq, _ended(standing), last)
        live.problem = problem
        live.view = self._view(live)
        return live, rows

    # -- reading --------------------------------------------------------------------------

    def _held(self, table_id: str) -> _Live | _Dormant:
        with self._lock:
            held = self._tables.get(table_id)
            if isinstance(held, _Live):
                self._uses += 1
                held.used = self._uses
        if held is None:
            raise UnknownTableError(f"no table {table_id!r}")
        return held

    def _get(self, table_id: str) -> _Live:
        held = self._held(table_id)
        return held if isinstance(held, _Live) else self._wake(held)

    @contextmanager
    def _locked(self, table_id: str) -> Iterator[_Live]:
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
                if isinstance(t, _Live)
                and t.problem is None
                and (_finished(t.view) or _idle(t.view, now, self._idle_after))
            ]
        if len(asleep) <= self._keep_awake:
            return
        asleep.sort(key=lambda t: t.used)
        held: list[tuple[_Live, Digest]] = []
        try:
            for live in asleep[: len(asleep) - self._keep_awake]:
                if not live.lock.acquire(blocking=False):
                    continue
                if _finished(live.view) or _idle(live.view, now, self._idle_after):
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
                        self._tables[live.row.id] = _Dormant(live.row, live.game, digest.summary)
                        live.retired = True
        finally:
            for live, _ in held:
                live.lock.release()

    def _wake(self, dormant: _Dormant) -> _Live:
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
            if isinstance(held, _Live):
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
            line = t.view if isinstance(t, _Live) else t.summary
            if not line["over"] and not _idle(line, now, self._idle_after):
                out.append(self._line(t, None))
        out.sort(key=lambda s: s["last"], reverse=True)  # one clock's ISO times; stable
        return out

    def _line(self, held: _Live | _Dormant, now: datetime | None) -> dict[str, Any]:
        line = _summary(held.view) if isinstance(held, _Live) else dict(held.summary)
        line["idle"] = _idle(line, now, self._idle_after)
        return line

    def _idle_now(self) -> datetime | None:
        """Now, to judge idleness by (``None`` when nothing is ever idle: no clock reading)."""
        if self._idle_after is None:
            return None
        now = self._clock()
        return now if now.tzinfo is not None else now.replace(tzinfo=UTC)

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

    def _view(self, live: _Live) -> dict[str, Any]:
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
        live = _Live(row, game, state, state, [], 0, None, created)
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

        Raises :class:`UnknownTableError`, ``IllegalActionError`` (the rule's message; also
        :class:`TableClosedError`), ``ValueError`` for a bad source or snapshot. Nothing is
        changed unless the event is safely in the database.

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
            ended = _ended(standing)
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
                digest=self._digest(view) if _finished(view) else None,
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
        if _finished(view):
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

    def _publish(self, live: _Live, event: EventRow, highlights: tuple[Highlight, ...]) -> Applied:
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
    def _check_open(live: _Live) -> None:
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


def _ended(standing: Sequence[Standing]) -> str | None:
    """When the standing ``end`` action was logged (``None`` while the game is on)."""
    return next((s.at for s in standing if isinstance(s.action, End)), None)


def _check_snapshot(snapshot: bytes, limit: int) -> None:
    if not snapshot.startswith(JPEG_MAGIC):
        raise SnapshotError("a roll snapshot must be a JPEG image")
    if len(snapshot) > limit:
        raise SnapshotError(f"a roll snapshot may be at most {limit} bytes")
