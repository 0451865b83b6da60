"""You Blew It's state as frozen values: the game, the team sheet's rounds, each turn.

Also :func:`provisional`, each team's score now. The state's JSON form is the game's
(:mod:`scoring.farkle.you_blew_it.game`); how a turn ends and a round closes is
:mod:`scoring.farkle.you_blew_it.play`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scoring.farkle.turn import Step, Turn
from scoring.farkle.you_blew_it.rules import HouseRules

TurnStatus = Literal["banked", "blown", "wiped", "not_on_board"]


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn on the scratch sheet (YBI-12). ``points``: made (or lost, when
    blown); only ``banked`` turns count; ``wiped``: banked, then lost to ``wiped_by``'s blow."""

    player: str
    team: str
    points: int
    status: TurnStatus
    steps: tuple[Step, ...] = ()
    wiped_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "team": self.team,
            "points": self.points,
            "status": self.status,
            "counts": self.points if self.status == "banked" else 0,
            "wiped_by": self.wiped_by,
            "steps": [s.to_json() for s in self.steps],
        }

    @staticmethod
    def from_json(obj: Any) -> TurnRecord:
        status = obj["status"]
        if status not in ("banked", "blown", "wiped", "not_on_board"):
            raise ValueError(f"unknown turn status {status!r}")
        return TurnRecord(
            str(obj["player"]),
            str(obj["team"]),
            int(obj["points"]),
            status,
            tuple(Step.from_json(s) for s in obj["steps"]),
            obj["wiped_by"],
        )


@dataclass(frozen=True)
class RoundRecord:
    """A finished round (the team sheet): points per team and the running totals."""

    number: int
    turns: tuple[TurnRecord, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]
    complete: bool = True

    def to_json(self, team_names: Sequence[str]) -> dict[str, Any]:
        return {
            "round": self.number,
            "complete": self.complete,
            "points": dict(zip(team_names, self.points, strict=True)),
            "totals": dict(zip(team_names, self.totals, strict=True)),
            "turns": [t.to_json() for t in self.turns],
        }

    @staticmethod
    def from_json(obj: Any, team_names: Sequence[str]) -> RoundRecord:
        return RoundRecord(
            int(obj["round"]),
            tuple(TurnRecord.from_json(t) for t in obj["turns"]),
            tuple(int(obj["points"][t]) for t in team_names),
            tuple(int(obj["totals"][t]) for t in team_names),
            bool(obj["complete"]),
        )


@dataclass(frozen=True)
class State:
    """A whole You Blew It game (immutable)."""

    rules: HouseRules
    teams: tuple[tuple[str, tuple[str, ...]], ...]
    order: tuple[str, ...]  #: this round's line-up, from its first player
    locked: tuple[int, ...]  #: per team: points of finished rounds (YBI-10)
    round: int = 1
    turn_no: int = 0  #: turns finished in this round
    turn: Turn = field(default_factory=Turn)
    this_round: tuple[TurnRecord, ...] = ()
    rounds: tuple[RoundRecord, ...] = ()
    on_board: tuple[str, ...] = ()  #: teams (or players) on the board (Y13)
    final_turns: int | None = None  #: end_rule=one_more_turn_each: turns left
    over: bool = False
    winners: tuple[str, ...] = ()
    reason: str = ""

    @property
    def team_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.teams)

    def team_of(self, player: str) -> str:
        return next(name for name, members in self.teams if player in members)

    @property
    def player(self) -> str:
        return self.order[self.turn_no]


def team_index(state: State, team: str) -> int:
    """Where ``team`` stands in the state's per-team tuples."""
    return state.team_names.index(team)


def provisional(state: State) -> tuple[int, ...]:
    """Each team's score now: locked rounds plus this round's standing banked turns."""
    out = list(state.locked)
    for rec in state.this_round:
        if rec.status == "banked":
            out[team_index(state, rec.team)] += rec.points
    return tuple(out)
