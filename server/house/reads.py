"""The house server's queries: tables of every house name, a table's log, the house wall,
and the house PIN holder's hides (the only write the house server makes, with its NOTIFY).

Every query is built with its filters as SQL (never ``param IS NULL OR col = param``), so the
planner sees what it can use: the wall's ``(game, kind, points DESC, at)`` index for a game's
lists, and the ``records_points`` one for the whole wall (migration 2; EXPLAINed in the tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from psycopg import sql

from server.house.pool import HouseDb
from server.house.schema import CHANNEL
from server.house.values import HouseRecord, TableLine

TableState = Literal["all", "playing", "idle", "over"]
TABLE_STATES: tuple[TableState, ...] = ("all", "playing", "idle", "over")


class UnknownHouseTableError(LookupError):
    """No table of that house name is in the house database (HTTP 404)."""


class UnknownHouseRecordError(LookupError):
    """No record of that house name has that id (HTTP 404)."""


_LINE_COLUMNS = sql.SQL(
    "t.house_name, t.table_id, t.game, t.setup, t.created, t.ended, t.summary, t.last_seq, m.url"
)
_LAST = sql.SQL("COALESCE(t.summary->>'last', t.created)")
_OVER = sql.SQL("(t.ended IS NOT NULL OR COALESCE((t.summary->>'over')::boolean, false))")
_RECORD_COLUMNS = sql.SQL(
    "r.house_name, r.id, r.table_id, r.seq, r.game, r.kind, r.player, r.points, r.dice,"
    " r.text, r.at, r.snapshot_seq, r.hidden_at_table, h.id IS NOT NULL, m.url"
)
_RECORD_FROM = sql.SQL(
    "records r JOIN members m ON m.house_name = r.house_name"
    " LEFT JOIN hidden_records h ON h.house_name = r.house_name AND h.id = r.id"
)
_SHOWN = sql.SQL("NOT r.hidden_at_table AND h.id IS NULL")


@dataclass(frozen=True)
class RecordQuery:
    """The house wall's filters and page (``/api/house/records``)."""

    game: str | None = None
    kind: str | None = None
    house_name: str | None = None
    table: str | None = None
    include_hidden: bool = False
    limit: int = 50
    offset: int = 0


class HouseReads:
    """Queries over the house database, through the server's pool."""

    def __init__(
        self,
        db: HouseDb,
        *,
        idle_after: timedelta,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._db = db
        self._idle_after = idle_after
        self._clock = clock

    def _rows(
        self, query: sql.SQL | sql.Composed, params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(query, params).fetchall()
            return rows

    def _lines(self, rows: list[tuple[Any, ...]]) -> list[TableLine]:
        now = self._clock()
        return [TableLine.from_row(r, now=now, idle_after=self._idle_after) for r in rows]

    # -- tables -------------------------------------------------------------------------------

    def tables(
        self,
        *,
        house_name: str | None = None,
        state: TableState = "all",
        limit: int = 100,
        offset: int = 0,
    ) -> list[TableLine]:
        """Tables, the most recently acted on first."""
        where: list[sql.Composable] = []
        params: list[Any] = []
        if house_name is not None:
            where.append(sql.SQL("t.house_name = %s"))
            params.append(house_name)
        cutoff = (self._clock() - self._idle_after).isoformat()
        if state == "over":
            where.append(_OVER)
        elif state in ("playing", "idle"):
            where.append(sql.SQL("NOT ") + _OVER)
            compare = ">=" if state == "playing" else "<"
            where.append(sql.SQL("{}::timestamptz " + compare + " %s::timestamptz").format(_LAST))
            params.append(cutoff)
        query = sql.SQL(
            "SELECT {} FROM tables t JOIN members m ON m.house_name = t.house_name"
        ).format(_LINE_COLUMNS)
        if where:
            query += sql.SQL(" WHERE ") + sql.SQL(" AND ").join(where)
        query += sql.SQL(" ORDER BY {} DESC, t.house_name, t.table_id LIMIT %s OFFSET %s").format(
            _LAST
        )
        return self._lines(self._rows(query, [*params, limit, offset]))

    def table(self, house_name: str, table_id: str) -> TableLine:
        """One table's line; :class:`UnknownHouseTableError` when the house has no such."""
        found = self.lines([(house_name, table_id)])
        if not found:
            raise UnknownHouseTableError(f"no table {table_id!r} of {house_name!r} in the house")
        return found[0]

    def lines(self, keys: Sequence[tuple[str, str]]) -> list[TableLine]:
        """The lines of these ``(house_name, table)`` pairs (those the house holds), in one
        query: what the live feed sends after a burst of shipped batches."""
        if not keys:
            return []
        query = sql.SQL(
            "SELECT {} FROM tables t JOIN members m ON m.house_name = t.house_name"
            " JOIN unnest(%s::text[], %s::text[]) AS k(house_name, table_id)"
            " ON k.house_name = t.house_name AND k.table_id = t.table_id"
        ).format(_LINE_COLUMNS)
        names = [k[0] for k in keys]
        tables = [k[1] for k in keys]
        return self._lines(self._rows(query, [names, tables]))

    def board(self, *, idle_shown: int = 12, over_shown: int = 24) -> list[TableLine]:
        """What the house page shows: every table in play, then the latest idle and finished
        ones (abandoned games pile up over months; the page stays short)."""
        return [
            *self.tables(state="playing", limit=1000),
            *self.tables(state="idle", limit=idle_shown),
            *self.tables(state="over", limit=over_shown),
        ]

    def log(self, house_name: str, table_id: str, since: int = 0) -> list[dict[str, Any]]:
        """The events the house holds after ``since``, as a table's own ``/log`` shows them."""
        self.table(house_name, table_id)  # 404 first
        rows = self._rows(
            sql.SQL(
                "SELECT seq, at, source, payload, snapshot FROM events"
                " WHERE house_name = %s AND table_id = %s AND seq > %s ORDER BY seq"
            ),
            [house_name, table_id, since],
        )
        return [
            {"seq": s, "at": at, "source": src, "action": payload, "snapshot": snap}
            for s, at, src, payload, snap in rows
        ]

    def house_names(self) -> list[tuple[str, str]]:
        """Every member: (house name, its scoreboard URL)."""
        rows = self._rows(sql.SQL("SELECT house_name, url FROM members ORDER BY house_name"))
        return [(str(name), str(url)) for name, url in rows]

    # -- the wall -----------------------------------------------------------------------------

    def records(self, q: RecordQuery) -> list[HouseRecord]:
        """Records biggest first (ties: the earlier first), filtered and paged."""
        return [_record(r) for r in self._rows(*records_query(q))]

    def wall(
        self, *, per_kind: int = 30, include_hidden: bool = False, house_name: str | None = None
    ) -> list[HouseRecord]:
        """The top ``per_kind`` records of every (game, kind) there is, biggest first within
        each: what the wall page groups. The pairs are found by skipping along the wall's
        index (a loose index scan), and each pair's top is an index scan too, so this stays
        fast however many records the house holds."""
        shown = sql.SQL("") if include_hidden else sql.SQL(" AND ") + _SHOWN
        params: list[Any] = []
        if house_name is not None:
            shown += sql.SQL(" AND r.house_name = %s")
            params.append(house_name)
        query = sql.SQL(
            "WITH RECURSIVE pairs(game, kind) AS ("
            " (SELECT game, kind FROM records ORDER BY game, kind LIMIT 1)"
            " UNION ALL"
            " SELECT nxt.game, nxt.kind FROM pairs, LATERAL (SELECT r.game, r.kind FROM records r"
            "  WHERE (r.game, r.kind) > (pairs.game, pairs.kind)"
            "  ORDER BY r.game, r.kind LIMIT 1) nxt)"
            " SELECT top.* FROM pairs, LATERAL (SELECT {} FROM {}"
            "  WHERE r.game = pairs.game AND r.kind = pairs.kind{}"
            "  ORDER BY r.points DESC, r.at LIMIT %s) top"
        ).format(_RECORD_COLUMNS, _RECORD_FROM, shown)
        return [_record(r) for r in self._rows(query, [*params, per_kind])]

    def set_hidden(self, house_name: str, record_id: str, hidden: bool) -> None:
        """Hide a record from the house wall (or show it again); kept either way, and every
        house page is told (NOTIFY ``{"records": true}``)."""
        with self._db.connection() as conn, conn.transaction():
            found = conn.execute(
                "SELECT 1 FROM records WHERE house_name = %s AND id = %s", (house_name, record_id)
            ).fetchone()
            if found is None:
                raise UnknownHouseRecordError(f"no record {record_id!r} of {house_name!r}")
            if hidden:
                conn.execute(
                    "INSERT INTO hidden_records (house_name, id) VALUES (%s, %s)"
                    " ON CONFLICT DO NOTHING",
                    (house_name, record_id),
                )
            else:
                conn.execute(
                    "DELETE FROM hidden_records WHERE house_name = %s AND id = %s",
                    (house_name, record_id),
                )
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, json.dumps({"records": True})))

    def ping(self) -> None:
        """A trivial query: raises when the database does not answer (``/api/health``)."""
        self._rows(sql.SQL("SELECT 1"))


def records_query(q: RecordQuery) -> tuple[sql.Composed, list[Any]]:
    """The SQL of :meth:`HouseReads.records` and its parameters (the tests EXPLAIN it)."""
    where: list[sql.Composable] = []
    params: list[Any] = []
    for column, value in (
        ("game", q.game),
        ("kind", q.kind),
        ("house_name", q.house_name),
        ("table_id", q.table),
    ):
        if value is not None:
            where.append(sql.SQL("r.{} = %s").format(sql.Identifier(column)))
            params.append(value)
    if not q.include_hidden:
        where.append(_SHOWN)
    query = sql.SQL("SELECT {} FROM {}").format(_RECORD_COLUMNS, _RECORD_FROM)
    if where:
        query += sql.SQL(" WHERE ") + sql.SQL(" AND ").join(where)
    query += sql.SQL(" ORDER BY r.points DESC, r.at LIMIT %s OFFSET %s")
    return query, [*params, q.limit, q.offset]


def _record(row: tuple[Any, ...]) -> HouseRecord:
    house_name, rid, table_id, seq, game, kind, player, points, dice, text, at, snap = row[:12]
    hidden_at_table, hidden_here, url = row[12:]
    return HouseRecord(
        house_name=house_name,
        id=rid,
        table_id=table_id,
        seq=int(seq),
        game=game,
        kind=kind,
        player=player,
        points=int(points),
        dice=tuple(int(d) for d in dice or ()),
        text=text,
        at=at,
        snapshot_seq=None if snap is None else int(snap),
        hidden_at_table=bool(hidden_at_table),
        hidden_here=bool(hidden_here),
        member_url=str(url or ""),
    )
