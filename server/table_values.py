"""The values the table service holds and the pure helpers over them: a table replayed in
memory (:class:`Live`), one held dormant on its digest (:class:`Dormant`), what an accepted
action produced (:class:`Applied`), a log entry as the API shows it (:func:`entry_json`), a
table's line in the table list (:func:`summary`, :data:`SUMMARY_KEYS`) and whether a game is
finished or idle (:func:`finished`, :func:`idle`).

Apart from :class:`~server.tables.TableService` (the one path that changes tables) and
:class:`~server.table_memory.TableMemory` (which holds them, replays and puts them to sleep)
because both use them and nothing here holds a lock or touches the store. What a digest keeps
is decided here, so this file is in :data:`server.stamp.DERIVING`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scoring.actions import End
from scoring.game import Game, Highlight
from server.rows import EventRow, TableRow
from server.standing import Standing

#: a table's line in the table list (:meth:`TableService.summaries`): what a digest keeps;
#: ``last`` is when it was last acted on (its creation while its log is empty)
SUMMARY_KEYS = ("table", "game", "title", "setup", "created", "ended", "seq", "last")


class UnknownTableError(LookupError):
    """No table has that id (HTTP 404)."""


@dataclass(frozen=True)
class Applied:
    """What one accepted action produced: its log entry, the table after it, its records."""

    entry: dict[str, Any]
    table: dict[str, Any]
    highlights: tuple[Highlight, ...]


@dataclass
class Live:
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
class Dormant:
    """A finished or idle table not replayed at start: its row, its game and its line in the
    table list (from its digest). ``waking`` makes the replay on first use happen once."""

    row: TableRow
    game: Game[Any]
    summary: dict[str, Any]
    waking: threading.Lock = field(default_factory=threading.Lock)


def summary(view: Mapping[str, Any]) -> dict[str, Any]:
    """A table's line in the table list, from its view."""
    return {k: view[k] for k in SUMMARY_KEYS} | {
        "scores": view["state"].get("scores"),
        "expecting": view["expecting"],
        "over": view["over"],
    }


def idle(line: Mapping[str, Any], now: datetime | None, after: timedelta | None) -> bool:
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


def finished(view: Mapping[str, Any]) -> bool:
    """A game the rules call over (won, or ended with ``end``) whose log replays: it only
    changes again through an undo or a fix, so its digest may stand for a replay."""
    return bool(view["over"]) and view["problem"] is None


def entry_json(event: EventRow) -> dict[str, Any]:
    """A log entry as the API shows it (``GET .../log``)."""
    return {
        "seq": event.seq,
        "at": event.at,
        "source": event.source,
        "action": event.payload,
        "snapshot": event.snapshot,
    }


def ended_at(standing: Sequence[Standing]) -> str | None:
    """When the standing ``end`` action was logged (``None`` while the game is on)."""
    return next((s.at for s in standing if isinstance(s.action, End)), None)
