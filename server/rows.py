"""The values the store reads and writes: a table's row, an event of its log, a record on the
wall, a finished table's digest and a table as a start sees it; and the sources an event may
come from.

Plain frozen dataclasses, shared by the store (:mod:`server.store`), the table service
(:mod:`server.tables`) and the record wall (:mod:`server.records`) without any of them
needing the database's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SOURCES: tuple[str, ...] = ("camera", "phone", "button", "replay")


@dataclass(frozen=True)
class TableRow:
    id: str
    game: str
    setup: dict[str, Any]  #: ``{"players": [...]}`` or ``{"teams": {...}}``
    rules: dict[str, Any]
    created: str
    ended: str | None = None


@dataclass(frozen=True)
class EventRow:
    table_id: str
    seq: int
    at: str
    source: str
    type: str
    payload: dict[str, Any]  #: the action's JSON
    snapshot: bool = False  #: a JPEG of the roll is stored with it


@dataclass(frozen=True)
class RecordRow:
    """One line on the high-roll wall; ``id`` is stable across rebuilds."""

    id: str
    table_id: str
    seq: int
    game: str
    kind: str
    player: str
    points: int
    dice: tuple[int, ...]
    text: str
    at: str
    snapshot_seq: int | None = None
    hidden: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "table": self.table_id,
            "seq": self.seq,
            "game": self.game,
            "kind": self.kind,
            "player": self.player,
            "points": self.points,
            "dice": list(self.dice),
            "text": self.text,
            "at": self.at,
            "snapshot": self.snapshot_seq,
            "hidden": self.hidden,
        }


@dataclass(frozen=True)
class Digest:
    """What replaying a finished table derived (``summary``, its line in the table list) and
    from what: the rules code (``engine``, a stamp of its source) and the log up to ``seq``.
    It stands for a replay only while both still match; it is never the truth."""

    table_id: str
    engine: str
    seq: int
    summary: dict[str, Any]


@dataclass(frozen=True)
class TableHead:
    """A table as a start sees it: its row, its last event's seq (0: none), its digest."""

    row: TableRow
    last_seq: int
    digest: Digest | None = None
