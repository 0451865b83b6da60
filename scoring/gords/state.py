"""Gords state: frozen values and their exact JSON form.

The rules live in :mod:`scoring.gords.play`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.actions import Dice
from scoring.gords.rules import HouseRules
from scoring.rules import rules_to_json

PHASES = ("bidding", "reveal", "over")
START_DICE = 5  #: G-1: each player starts with five dice


@dataclass(frozen=True)
class BidMade:
    """One bid of the round, in order."""

    player: str
    count: int
    face: int


@dataclass(frozen=True)
class CallResult:
    """A settled call: what was bid, what the reveal showed, who lost how many dice."""

    round: int
    bidder: str
    caller: str
    count: int
    face: int
    dice: Dice
    matching: int
    met: bool
    spot_on: bool
    loser: str
    lost: int
    eliminated: bool
    text: str


@dataclass(frozen=True)
class GordsState:
    """The whole game. ``players`` is the seating (clockwise); ``dice`` is per player.

    ``turn`` is who bids (or calls) next; after a call ``caller`` is set and the phase is
    ``reveal`` until every die in play is shown.
    """

    rules: HouseRules
    players: tuple[str, ...]
    dice: tuple[int, ...]
    phase: str
    round: int
    starter: str
    turn: str
    bids: tuple[BidMade, ...] = ()
    caller: str | None = None
    spot_on_call: bool = False
    palifico: bool = False
    palifico_used: tuple[str, ...] = ()
    results: tuple[CallResult, ...] = ()
    ended: bool = False
    news: tuple[str, ...] = ()


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"bad text {v!r}")
    return v


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"bad number {v!r}")
    return v


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"bad flag {v!r}")
    return v


def _strs(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise ValueError(f"bad list {v!r}")
    return tuple(_str(x) for x in v)


def _dice(v: Any) -> Dice:
    if not isinstance(v, list):
        raise ValueError(f"bad dice {v!r}")
    out = tuple(_int(x) for x in v)
    if any(not 1 <= d <= 6 for d in out):
        raise ValueError(f"bad dice {v!r}")
    return out


def _plain(obj: Any) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}


def state_core_to_json(s: GordsState) -> dict[str, Any]:
    """Everything :func:`state_core_from_json` needs to rebuild ``s`` exactly."""
    return {
        "rules": rules_to_json(s.rules),
        "players": list(s.players),
        "dice": list(s.dice),
        "phase": s.phase,
        "round": s.round,
        "starter": s.starter,
        "turn": s.turn,
        "bids": [_plain(b) for b in s.bids],
        "caller": s.caller,
        "spot_on_call": s.spot_on_call,
        "palifico": s.palifico,
        "palifico_used": list(s.palifico_used),
        "results": [_plain(r) for r in s.results],
        "ended": s.ended,
        "news": list(s.news),
    }


def state_core_from_json(o: Mapping[str, Any], rules: HouseRules) -> GordsState:
    phase = _str(o["phase"])
    if phase not in PHASES:
        raise ValueError(f"bad phase {phase!r}")
    players = _strs(o["players"])
    dice = tuple(_int(x) for x in o["dice"])
    if len(dice) != len(players):
        raise ValueError("one dice count per player")
    caller = o["caller"]
    return GordsState(
        rules=rules,
        players=players,
        dice=dice,
        phase=phase,
        round=_int(o["round"]),
        starter=_str(o["starter"]),
        turn=_str(o["turn"]),
        bids=tuple(
            BidMade(_str(b["player"]), _int(b["count"]), _int(b["face"])) for b in o["bids"]
        ),
        caller=None if caller is None else _str(caller),
        spot_on_call=_bool(o["spot_on_call"]),
        palifico=_bool(o["palifico"]),
        palifico_used=_strs(o["palifico_used"]),
        results=tuple(
            CallResult(
                _int(r["round"]),
                _str(r["bidder"]),
                _str(r["caller"]),
                _int(r["count"]),
                _int(r["face"]),
                _dice(r["dice"]),
                _int(r["matching"]),
                _bool(r["met"]),
                _bool(r["spot_on"]),
                _str(r["loser"]),
                _int(r["lost"]),
                _bool(r["eliminated"]),
                _str(r["text"]),
            )
            for r in o["results"]
        ),
        ended=_bool(o["ended"]),
        news=_strs(o["news"]),
    )
