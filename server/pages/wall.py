"""The high-roll wall: records grouped per game for the page, and the CSV export.

CSV cells that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, tab or
carriage return first) are prefixed with an apostrophe (OWASP's advice): a player called
``=HYPERLINK(...)`` is shown as typed, never run. Numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scoring import games
from server.records import HIGH_ROLLER, Records
from server.rows import RecordRow

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CSV_COLUMNS = ("id", "game", "kind", "player", "points", "dice", "text", "at", "table", "hidden")
ROWS_PER_LIST = 10


#: the wall's lists per game: (title, record kinds); every other kind is an honour
LISTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Biggest rolls", ("roll", HIGH_ROLLER)),
    ("Biggest turns", ("turn",)),
    ("Best hands", ("hand",)),
)
HONOURS = "Honours"


@dataclass(frozen=True)
class GameWall:
    """One game's part of the wall: ``lists`` of (title, records biggest first)."""

    name: str
    title: str
    lists: list[tuple[str, list[RecordRow]]]


def _title(name: str) -> str:
    try:
        return games.find(name).title
    except (ValueError, ImportError):
        return name


def group(
    rows: Sequence[RecordRow], per_list: int = ROWS_PER_LIST
) -> list[tuple[str, list[RecordRow]]]:
    """Split one game's records (biggest first) into the wall's lists; empty ones dropped."""
    listed = {kind for _, kinds in LISTS for kind in kinds}
    out = [(title, [r for r in rows if r.kind in kinds][:per_list]) for title, kinds in LISTS]
    out.append((HONOURS, [r for r in rows if r.kind not in listed][: per_list * 3]))
    return [(title, found) for title, found in out if found]


def wall(records: Records, *, include_hidden: bool = False) -> list[GameWall]:
    """Per game: the biggest rolls, turns and hands, and the honours."""
    return [
        GameWall(
            name,
            _title(name),
            group(records.wall(game=name, include_hidden=include_hidden, limit=1000)),
        )
        for name in games.NAMES
    ]


def high_rollers(records: Records, *, include_hidden: bool = False) -> list[RecordRow]:
    return records.wall(game="bolo", kind=HIGH_ROLLER, include_hidden=include_hidden, limit=100)


_FORMULA_AFTER_SEPARATOR = re.compile(r"((?:^|[;,\t|])[\s\"']*)(?=[=+\-@])")
"""The cell's start or a separator a spreadsheet may split on (set to ";" in much of Europe,
whatever the file uses), then what would start a formula in the cell that split makes."""


def safe_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as typed: text starting like a formula is quoted, and so
    is any part after a separator ("x;=1+1" opened where ";" splits cells is "x" and "=1+1",
    and quoting the whole cell does not stop that split)."""
    if not isinstance(value, str):
        return value
    value = _FORMULA_AFTER_SEPARATOR.sub(r"\1'", value)
    return "'" + value if value.startswith(FORMULA_START) else value


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
