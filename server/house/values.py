"""What the house server reads out of the house database: a table's line (:class:`TableLine`)
and a record on the house wall (:class:`HouseRecord`), each as the API shows it.

Plain frozen values built from rows, so that the queries (:mod:`server.house.reads`), the
pages and the live feed share one shape and one JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from scoring import games


def game_title(name: str) -> str:
    try:
        return games.find(name).title
    except (ValueError, ImportError):
        return name


def players_of(setup: Mapping[str, Any]) -> list[str]:
    """Every player's name, team by team for a team game."""
    teams = setup.get("teams")
    if isinstance(teams, Mapping):
        return [str(p) for members in teams.values() for p in members]
    return [str(p) for p in setup.get("players") or ()]


def scoreboard_url(base: str, table_id: str) -> str | None:
    """The table's own scoreboard on its server (``/t/<table>``); None when the member sent
    no URL, or one that is not http(s) (never a ``javascript:`` link on the house page)."""
    if not base.startswith(("http://", "https://")):
        return None
    return f"{base.rstrip('/')}/t/{quote(table_id, safe='')}"


@dataclass(frozen=True)
class TableLine:
    """One table of one house name, as the house page and ``/api/house/tables`` show it."""

    house_name: str
    table: str
    game: str
    title: str
    setup: Mapping[str, Any]
    scores: Any
    over: bool
    idle: bool
    last: str
    seq: int
    expecting: str | None
    created: str
    ended: str | None
    scoreboard: str | None

    @classmethod
    def from_row(cls, row: tuple[Any, ...], *, now: datetime, idle_after: timedelta) -> TableLine:
        """From ``(house_name, table_id, game, setup, created, ended, summary, last_seq, url)``.
        ``summary`` is the table server's own line (None until its first is shipped)."""
        house_name, table_id, game, setup, created, ended, summary, last_seq, url = row
        line: Mapping[str, Any] = summary if isinstance(summary, Mapping) else {}
        expecting = line.get("expecting")
        over = bool(line.get("over")) or ended is not None
        last = str(line.get("last") or created)
        return cls(
            house_name=house_name,
            table=table_id,
            game=game,
            title=str(line.get("title") or game_title(game)),
            setup=setup if isinstance(setup, Mapping) else {},
            scores=line.get("scores"),
            over=over,
            idle=not over and _older(last, now - idle_after),
            last=last,
            seq=int(last_seq),
            expecting=str(expecting["text"])
            if isinstance(expecting, Mapping) and "text" in expecting
            else None,
            created=created,
            ended=ended,
            scoreboard=scoreboard_url(url or "", table_id),
        )

    @property
    def key(self) -> str:
        return f"{self.house_name}/{self.table}"

    @property
    def players(self) -> list[str]:
        return players_of(self.setup)

    def to_json(self) -> dict[str, Any]:
        return {
            "house_name": self.house_name,
            "table": self.table,
            "game": self.game,
            "title": self.title,
            "players": self.players,
            "setup": dict(self.setup),
            "scores": self.scores,
            "over": self.over,
            "idle": self.idle,
            "last": self.last,
            "seq": self.seq,
            "expecting": self.expecting,
            "created": self.created,
            "ended": self.ended,
            "scoreboard": self.scoreboard,
        }


def _older(text: str, cutoff: datetime) -> bool:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return False
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return when < cutoff


@dataclass(frozen=True)
class HouseRecord:
    """One record on the house wall. ``hidden_at_table``: its own table server's PIN holder
    hid it (the house cannot show it again); ``hidden_here``: the house PIN holder did."""

    house_name: str
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
    snapshot_seq: int | None
    hidden_at_table: bool
    hidden_here: bool
    member_url: str

    @property
    def hidden(self) -> bool:
        return self.hidden_at_table or self.hidden_here

    @property
    def snapshot_url(self) -> str | None:
        """The roll's photo, on its table server (the house keeps no photos)."""
        board = scoreboard_url(self.member_url, self.table_id)
        if board is None or self.snapshot_seq is None:
            return None
        base = self.member_url.rstrip("/")
        return f"{base}/api/tables/{quote(self.table_id, safe='')}/snapshots/{self.snapshot_seq}"

    def to_json(self) -> dict[str, Any]:
        return {
            "house_name": self.house_name,
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
            "snapshot_url": self.snapshot_url,
            "hidden": self.hidden,
            "hidden_at_table": self.hidden_at_table,
        }
