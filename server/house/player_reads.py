"""The house's questions about players: indexed aggregates over the rows the house derived
(:mod:`server.house.players`), never a replay; and who hid them.

A player is hidden from the house's public pages by either of two independent decisions: the
house PIN holder's (``hidden_players``, set here) or the PIN holder of ANY member table server
(``players_hidden_at_table``, migration 5, shipped by that server's shipper): hidden on a Pi,
hidden at the house, as a record hidden at its table is. The house PIN holder still sees
them, with ``hidden_at_tables`` naming those servers; showing a player at the house does not
undo a Pi's hide (only that Pi's PIN holder does). As on a table server, a hide covers the
players' pages, not the games: the board and the wall still name whoever played (a record is
hidden by its own hide, which the Pis ship too).

A player page is four small queries on one pooled connection, each bounded by the
``(player, ...)`` indexes of migration 3: the totals per game (an aggregate over the
player's rows only), the best roll (the first entry of ``player_tables_by_roll``), the
latest games (the first entries of ``player_tables_by_player``) and who hid them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from psycopg import sql

from server.house.pool import HouseDb
from server.house.values import scoreboard_url
from server.player_store import Listed, Totals
from server.players.names import valid_key
from server.players.rating import Decision
from server.players.service import LATEST, ZERO, add
from server.players.stats import PlayerRow

_ROW = (
    "p.table_id, p.player, p.name, p.game, p.at, p.over, p.win, p.score, p.turns, p.blown,"
    " p.points, p.best_turn, p.best_roll, p.best_roll_dice, p.best_roll_seq, p.rated_turns,"
    " p.decisions, p.given_away, p.luck, p.rounds, p.costly, p.house_name, m.url"
)
_FROM = "player_tables p JOIN members m ON m.house_name = p.house_name"


@dataclass(frozen=True)
class HouseListed(Listed):
    """One line of the house's players list; ``hidden`` is the house PIN holder's hide,
    ``hidden_at_tables`` the member table servers whose own PIN holder hid the player."""

    hidden_at_tables: tuple[str, ...] = ()


#: who hid the player ``p``: the house PIN holder, and which member table servers
_HIDERS = (
    "EXISTS (SELECT 1 FROM hidden_players h WHERE h.player = p.player),"
    " ARRAY(SELECT a.house_name FROM players_hidden_at_table a WHERE a.player = p.player"
    " ORDER BY a.house_name)"
)
_SHOWN = (
    " WHERE NOT EXISTS (SELECT 1 FROM hidden_players h WHERE h.player = p.player)"
    " AND NOT EXISTS (SELECT 1 FROM players_hidden_at_table a WHERE a.player = p.player)"
)


@dataclass(frozen=True)
class HouseGame:
    """A player's row at one table of one table server (``member_url``: that server's)."""

    house_name: str
    member_url: str
    row: PlayerRow

    @property
    def scoreboard(self) -> str | None:
        """The table's own scoreboard on its Pi (None without an http(s) address)."""
        return scoreboard_url(self.member_url, self.row.table_id)

    def photo(self, seq: int | None) -> str | None:
        """The photo of that table's roll ``seq``, on its Pi (the house keeps no photos)."""
        if seq is None or self.scoreboard is None:
            return None
        base = self.member_url.rstrip("/")
        return f"{base}/api/tables/{quote(self.row.table_id, safe='')}/snapshots/{seq}"


@dataclass(frozen=True)
class HousePlayerPage:
    """What a house player page shows (as :class:`server.players.service.PlayerPage`, each
    game with its table server)."""

    key: str
    name: str
    hidden: bool  #: by the house PIN holder
    hidden_at_tables: tuple[str, ...]  #: the member table servers whose PIN holder hid them
    all: Totals
    by_game: Mapping[str, Totals]
    best: HouseGame | None
    latest: tuple[HouseGame, ...]
    pending: int


def _game(r: tuple[Any, ...]) -> HouseGame:
    row = PlayerRow(
        r[0], r[1], r[2], r[3], r[4], bool(r[5]), bool(r[6]), r[7], r[8], r[9], int(r[10]),
        r[11], r[12], tuple(r[13]), r[14], r[15], r[16], float(r[17]), float(r[18]),
        tuple(r[19]), tuple(Decision(float(d["cost"]), str(d["text"])) for d in r[20]),
    )  # fmt: skip
    return HouseGame(r[21], r[22], row)


class HousePlayerReads:
    """The players' queries over the house database, through the server's pool."""

    def __init__(self, db: HouseDb) -> None:
        self._db = db

    def listing(self, *, include_hidden: bool = False) -> list[HouseListed]:
        """Every player, most finished games first; the name shown is their latest table's.
        Without ``include_hidden`` (the house PIN holder's), nobody hidden by the house PIN
        or at any member table server."""
        query = sql.SQL(
            "SELECT p.player,"
            " (array_agg(p.name ORDER BY p.at DESC, p.house_name, p.table_id))[1],"
            f" COUNT(*) FILTER (WHERE p.over), COUNT(*) FILTER (WHERE p.win), {_HIDERS}"
            " FROM player_tables p{} GROUP BY p.player ORDER BY 3 DESC, 4 DESC, p.player"
        ).format(sql.SQL("" if include_hidden else _SHOWN))
        with self._db.connection() as conn:
            rows = conn.execute(query).fetchall()
        return [
            HouseListed(r[0], r[1], int(r[2]), int(r[3]), bool(r[4]), tuple(r[5])) for r in rows
        ]

    def page(
        self, name: str, *, pending: int = 0, include_hidden: bool = False
    ) -> HousePlayerPage | None:
        """A player's page by any spelling of their name (``None``: nobody, or hidden by the
        house PIN or at any member table server, unless ``include_hidden``)."""
        key = valid_key(name)
        if key is None:
            return None
        with self._db.connection() as conn:
            who = conn.execute(
                f"SELECT {_HIDERS} FROM (SELECT %s::text AS player) p", (key,)
            ).fetchone()
            hidden, hidden_at = (bool(who[0]), tuple(who[1])) if who else (False, ())
            if (hidden or hidden_at) and not include_hidden:
                return None
            totals = conn.execute(
                "SELECT game, COUNT(*), COUNT(*) FILTER (WHERE over),"
                " COUNT(*) FILTER (WHERE win), SUM(turns), SUM(blown), SUM(points),"
                " MAX(best_turn), SUM(rated_turns), SUM(decisions), SUM(given_away), SUM(luck)"
                " FROM player_tables WHERE player = %s GROUP BY game",
                (key,),
            ).fetchall()
            if not totals:
                return None
            best = conn.execute(
                f"SELECT {_ROW} FROM {_FROM} WHERE p.player = %s AND p.best_roll > 0"
                " ORDER BY p.best_roll DESC, p.at LIMIT 1",
                (key,),
            ).fetchone()
            latest = conn.execute(
                f"SELECT {_ROW} FROM {_FROM} WHERE p.player = %s"
                " ORDER BY p.at DESC, p.house_name, p.table_id LIMIT %s",
                (key, LATEST),
            ).fetchall()
        by_game = {
            str(r[0]): Totals(
                int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7]),
                int(r[8]), int(r[9]), float(r[10]), float(r[11]),
            )
            for r in totals
        }  # fmt: skip
        total = ZERO
        for t in by_game.values():
            total = add(total, t)
        games = tuple(_game(r) for r in latest)
        return HousePlayerPage(
            key, games[0].row.name, hidden, hidden_at, total, by_game,
            _game(best) if best is not None else None, games, pending,
        )  # fmt: skip

    def set_hidden(self, name: str, hidden: bool) -> str | None:
        """Hide a player from the house pages (or show them again); their key, ``None`` when
        the house knows no such player."""
        key = valid_key(name)
        if key is None:
            return None
        with self._db.connection() as conn, conn.transaction():
            known = conn.execute(
                "SELECT 1 FROM player_tables WHERE player = %s LIMIT 1", (key,)
            ).fetchone()
            if known is None:
                return None
            if hidden:
                conn.execute(
                    "INSERT INTO hidden_players (player) VALUES (%s) ON CONFLICT DO NOTHING",
                    (key,),
                )
            else:
                conn.execute("DELETE FROM hidden_players WHERE player = %s", (key,))
        return key
