"""The players' rows in SQLite: written per table, read as indexed aggregates per player.

Beside :class:`server.store.Store` (whose one connection and lock it shares, so a write here
is serialised with the log's appends exactly like theirs) because it is a different job: the
rows :mod:`server.players.stats` derives, what each table's rows were derived from, and the
PIN holder's hidden players. Everything but ``hidden_players`` is derived and rebuildable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.players.rating import Decision
from server.players.stats import PlayerRow
from server.store import Store

COLUMNS = (
    "table_id, player, name, game, at, over, win, score, turns, blown, points, best_turn,"
    " best_roll, best_roll_dice, best_roll_seq, rated_turns, decisions, given_away, luck,"
    " rounds, costly"
)


@dataclass(frozen=True)
class Totals:
    """A player's figures summed over some tables (one game's, or every game's)."""

    tables: int
    games: int  #: finished games
    wins: int
    turns: int
    blown: int
    points: int
    best_turn: int
    rated_turns: int
    decisions: int
    given_away: float
    luck: float


@dataclass(frozen=True)
class Listed:
    """One line of the players' list."""

    player: str
    name: str
    games: int
    wins: int
    hidden: bool


def _dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _row(r: Sequence[Any]) -> PlayerRow:
    return PlayerRow(
        r[0], r[1], r[2], r[3], r[4], bool(r[5]), bool(r[6]), r[7], r[8], r[9], r[10], r[11],
        r[12], tuple(json.loads(r[13])), r[14], r[15], r[16], r[17], r[18],
        tuple(json.loads(r[19])), tuple(Decision(d["cost"], d["text"]) for d in json.loads(r[20])),
    )  # fmt: skip


class PlayerStore:
    """The players' tables of one database (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def _query(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self._store._query(sql, args)  # the store's connection, under its lock

    def replace(self, table_id: str, stamp: str, seq: int, rows: Sequence[PlayerRow]) -> None:
        """``rows`` become the table's rows, derived by ``stamp`` from its log up to ``seq``,
        in ONE transaction."""
        with self._store._transaction() as db:
            db.execute("DELETE FROM player_tables WHERE table_id = ?", (table_id,))
            db.executemany(
                f"INSERT INTO player_tables ({COLUMNS}) VALUES ({', '.join('?' * 21)})",
                [
                    (
                        r.table_id, r.player, r.name, r.game, r.at, int(r.over), int(r.win),
                        r.score, r.turns, r.blown, r.points, r.best_turn, r.best_roll,
                        _dumps(list(r.best_roll_dice)), r.best_roll_seq, r.rated_turns,
                        r.decisions, r.given_away, r.luck, _dumps(list(r.rounds)),
                        _dumps([d.to_json() for d in r.costly]),
                    )
                    for r in rows
                ],
            )  # fmt: skip
            db.execute(
                "INSERT INTO player_derived (table_id, stamp, seq) VALUES (?, ?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET stamp = excluded.stamp, seq = excluded.seq",
                (table_id, stamp, seq),
            )

    def stale(self, stamp: str) -> list[str]:
        """The tables whose rows are missing or were derived by other code or from a shorter
        log, newest first (a start queues them)."""
        rows = self._query(
            "SELECT t.id FROM tables t LEFT JOIN player_derived d ON d.table_id = t.id"
            " WHERE d.table_id IS NULL OR d.stamp != ? OR d.seq !="
            " COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.table_id = t.id), 0)"
            " ORDER BY t.created DESC, t.id DESC",
            (stamp,),
        )
        return [str(r[0]) for r in rows]

    def players(self, *, include_hidden: bool = False) -> list[Listed]:
        """Every player, most games first; the name shown is their latest table's."""
        rows = self._query(
            "SELECT p.player, p.name, MAX(p.at), SUM(p.over), SUM(p.win), h.player IS NOT NULL"
            " FROM player_tables p LEFT JOIN hidden_players h ON h.player = p.player"
            + ("" if include_hidden else " WHERE h.player IS NULL")
            + " GROUP BY p.player ORDER BY SUM(p.over) DESC, SUM(p.win) DESC, p.player"
        )
        return [Listed(r[0], r[1], int(r[3]), int(r[4]), bool(r[5])) for r in rows]

    def totals(self, player: str) -> dict[str, Totals]:
        """The player's figures per game (an indexed aggregate: no replay)."""
        rows = self._query(
            "SELECT game, COUNT(*), SUM(over), SUM(win), SUM(turns), SUM(blown), SUM(points),"
            " MAX(best_turn), SUM(rated_turns), SUM(decisions), SUM(given_away), SUM(luck)"
            " FROM player_tables WHERE player = ? GROUP BY game",
            (player,),
        )
        return {
            str(r[0]): Totals(
                int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7]),
                int(r[8]), int(r[9]), float(r[10]), float(r[11]),
            )
            for r in rows
        }  # fmt: skip

    def best_roll(self, player: str) -> PlayerRow | None:
        """The player's row holding their best roll (ties: the earliest)."""
        rows = self._query(
            f"SELECT {COLUMNS} FROM player_tables WHERE player = ? AND best_roll > 0"
            " ORDER BY best_roll DESC, at LIMIT 1",
            (player,),
        )
        return _row(rows[0]) if rows else None

    def latest(self, player: str, limit: int) -> list[PlayerRow]:
        """The player's latest tables, newest first."""
        rows = self._query(
            f"SELECT {COLUMNS} FROM player_tables WHERE player = ? ORDER BY at DESC, table_id"
            " LIMIT ?",
            (player, limit),
        )
        return [_row(r) for r in rows]

    def hidden(self, player: str) -> bool:
        return bool(self._query("SELECT 1 FROM hidden_players WHERE player = ?", (player,)))

    def hidden_keys(self) -> list[str]:
        """Every hidden player's key (what a table server ships to its house)."""
        return [str(r[0]) for r in self._query("SELECT player FROM hidden_players ORDER BY 1")]

    def set_hidden(self, player: str, hidden: bool, at: str) -> None:
        with self._store._transaction() as db:
            if hidden:
                db.execute(
                    "INSERT INTO hidden_players (player, at) VALUES (?, ?)"
                    " ON CONFLICT (player) DO NOTHING",
                    (player, at),
                )
            else:
                db.execute("DELETE FROM hidden_players WHERE player = ?", (player,))
