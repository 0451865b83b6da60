"""The high-roll wall: records grouped per game for the page, and the CSV export.

CSV cells that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, tab or
carriage return first) are prefixed with an apostrophe (OWASP's advice): a player called
``=HYPERLINK(...)`` is shown as typed, never run. Numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scoring import games
from server.records import HIGH_ROLLER, Records
from server.store import RecordRow

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CSV_COLUMNS = ("id", "game", "kind", "player", "points", "dice", "text", "at", "table", "hidden")
ROWS_PER_LIST = 10


@dataclass(frozen=True)
class GameWall:
    """One game's part of the wall."""

    name: str
    title: str
    rolls: list[RecordRow]
    turns: list[RecordRow]
    honours: list[RecordRow]  #: high rollers, Van Halen, exact bids... (game-specific kinds)


def _title(name: str) -> str:
    try:
        return games.find(name).title
    except (ValueError, ImportError):
        return name


def wall(records: Records, *, include_hidden: bool = False) -> list[GameWall]:
    """Per game: the biggest rolls, the biggest turns and the honours."""
    out = []
    for name in games.NAMES:
        rows = records.wall(game=name, include_hidden=include_hidden, limit=500)
        out.append(
            GameWall(
                name,
                _title(name),
                [r for r in rows if r.kind == "roll"][:ROWS_PER_LIST],
                [r for r in rows if r.kind == "turn"][:ROWS_PER_LIST],
                [r for r in rows if r.kind not in ("roll", "turn")][: ROWS_PER_LIST * 5],
            )
        )
    return out


def high_rollers(records: Records, *, include_hidden: bool = False) -> list[RecordRow]:
    return records.wall(game="bolo", kind=HIGH_ROLLER, include_hidden=include_hidden, limit=100)


def safe_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as typed (text starting like a formula is quoted)."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def to_csv(rows: Iterable[RecordRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        cells: Sequence[object] = (
            r.id,
            r.game,
            r.kind,
            r.player,
            r.points,
            " ".join(map(str, r.dice)),
            r.text,
            r.at,
            r.table_id,
            "yes" if r.hidden else "no",
        )
        writer.writerow([safe_cell(c) for c in cells])
    return buffer.getvalue()
