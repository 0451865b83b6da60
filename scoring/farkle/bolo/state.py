"""Bolo's state as frozen values: the game (:class:`State`) and each finished turn.

The state's JSON form is the game's (:mod:`scoring.farkle.bolo.game`); how a turn ends and
the board changes is :mod:`scoring.farkle.bolo.play`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from scoring.farkle.bolo.rules import HouseRules, minimum
from scoring.farkle.turn import Step, Turn

TurnStatus = Literal["banked", "bolo", "passed"]


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn: ``points`` made (lost on a BOLO), ``tallied`` onto the board."""

    player: str
    points: int
    status: TurnStatus
    tallied: int
    hits: int
    board: int
    minimum: int
    steps: tuple[Step, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "points": self.points,
            "status": self.status,
            "tallied": self.tallied,
            "hits": self.hits,
            "board": self.board,
            "minimum": self.minimum,
            "steps": [s.to_json() for s in self.steps],
            "notes": list(self.notes),
        }

    @staticmethod
    def from_json(obj: Any) -> TurnRecord:
        status = obj["status"]
        if status not in ("banked", "bolo", "passed"):
            raise ValueError(f"unknown turn status {status!r}")
        return TurnRecord(
            str(obj["player"]),
            int(obj["points"]),
            status,
            int(obj["tallied"]),
            int(obj["hits"]),
            int(obj["board"]),
            int(obj["minimum"]),
            tuple(Step.from_json(s) for s in obj["steps"]),
            tuple(obj["notes"]),
        )


@dataclass(frozen=True)
class State:
    """A whole Bolo game (immutable)."""

    rules: HouseRules
    players: tuple[str, ...]
    boards: tuple[int, ...]
    on_board: tuple[bool, ...]
    hits: tuple[int, ...]
    current: int = 0
    turn: Turn = field(default_factory=Turn)
    turns: tuple[TurnRecord, ...] = ()
    overrides: tuple[tuple[str, Any], ...] = ()
    final_turns: int | None = None
    over: bool = False
    winners: tuple[str, ...] = ()
    reason: str = ""
    order: tuple[int, ...] = ()  #: B-1 order roll under way: the players rolling this round
    order_faces: tuple[int, ...] = ()  #: ... the faces they rolled so far, in that order
    tied: tuple[int, ...] = ()  #: B11 sudden death under way: the tied players, in turn order

    @property
    def player(self) -> str:
        return self.players[self.current]

    def minimum(self) -> int:
        i = self.current
        return minimum(self.rules, self.boards[i], self.on_board[i])
