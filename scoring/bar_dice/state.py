"""Bar Dice state: frozen values and their exact JSON form.

The rules live in :mod:`scoring.bar_dice.play` and :mod:`scoring.bar_dice.rounds`.

A game is a sequence of *rounds*: the order roll (one die each), elimination rounds (one
flop each, or "all day"), sponsor turns (hammer then opponent, up to three rolls) and
roll-offs. Every round is the same thing: a roster that rolls in order, each player taking
one *go* (up to ``max_rolls`` rolls, farming in between), so one piece of code runs them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.actions import Dice
from scoring.bar_dice.rules import HouseRules
from scoring.rules import rules_to_json

PHASES = ("order", "elimination", "sponsor", "over")
KINDS = ("order", "elimination", "sponsor", "rolloff")


@dataclass(frozen=True)
class Go:
    """One player's go in a round: rolls taken, dice farmed, the unfarmed dice of the last roll."""

    player: str
    rolls: int = 0
    farmed: Dice = ()
    roll: Dice = ()


@dataclass(frozen=True)
class Result:
    """A finished go: the hand's value (``None`` = nothing) in ``rolls`` rolls."""

    player: str
    value: int | None
    rolls: int
    dice: Dice


@dataclass(frozen=True)
class Round:
    """Players of ``roster`` take one go each, in order.

    ``kind`` is ``order``, ``elimination``, ``sponsor`` or ``rolloff``; ``purpose`` says what a
    roll-off settles (``elimination`` or ``sponsor``). ``rolled`` lists who finished a go, in
    time order, across resets and roll-offs of the same round: the hammer is found there.
    """

    kind: str
    number: int
    roster: tuple[str, ...]
    max_rolls: int
    results: tuple[Result, ...] = ()
    go: Go | None = None
    resets: int = 0
    purpose: str = ""
    rolled: tuple[str, ...] = ()
    turn_hammer: str = ""


@dataclass(frozen=True)
class Standing:
    """A player who got out (safe) in the elimination phase."""

    player: str
    round: int
    value: int | None
    rolls: int


@dataclass(frozen=True)
class TurnResult:
    """A sponsor turn: who won it, against whom, with what."""

    number: int
    winner: str
    loser: str
    text: str


@dataclass(frozen=True)
class News:
    """Something the last action produced, for the scoreboard and the record wall.

    ``kind``: ``hand``, ``nothing``, ``out``, ``reset``, ``rolloff``, ``turn``, ``sponsor``,
    ``too_lucky``, ``gin``, ``order``, ``reroll``, ``ended``.
    """

    kind: str
    player: str | None
    text: str
    value: int | None = None
    dice: Dice = ()


@dataclass(frozen=True)
class Penalty:
    """A drink owed by the table's rules: ``too_lucky`` (D-15) or ``gin`` (D-14)."""

    player: str
    kind: str
    text: str


@dataclass(frozen=True)
class Throw:
    """The last throw, kept so a cocked or dropped die can be re-rolled (D-16, D15).

    ``before`` is the state just before it (with no throw of its own); ``kept`` are dice that
    stayed on the pad from a partial re-roll, ``thrown`` the dice that were thrown.
    """

    before: BarDiceState
    kept: Dice
    thrown: Dice


@dataclass(frozen=True)
class Rethrow:
    """A re-roll is owed: throw ``count`` dice; with ``kept`` they replace the last throw."""

    kept: Dice
    count: int
    reason: str


@dataclass(frozen=True)
class BarDiceState:
    """The whole game. ``players`` is the seating, clockwise; ``turns_won`` is per player."""

    rules: HouseRules
    players: tuple[str, ...]
    phase: str
    round: Round | None
    hammer: str | None = None
    safe: tuple[Standing, ...] = ()
    finalists: tuple[str, ...] = ()
    turns_won: tuple[int, ...] = ()
    turns: tuple[TurnResult, ...] = ()
    sponsor: str | None = None
    ended: bool = False
    penalties: tuple[Penalty, ...] = ()
    news: tuple[News, ...] = ()
    throw: Throw | None = None
    rethrow: Rethrow | None = None


# -- JSON -------------------------------------------------------------------------------------


def _dice(v: Any) -> Dice:
    if not isinstance(v, list) or any(
        isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6 for d in v
    ):
        raise ValueError(f"bad dice {v!r}")
    return tuple(v)


def _opt_int(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"bad number {v!r}")
    return v


def _int(v: Any) -> int:
    out = _opt_int(v)
    if out is None:
        raise ValueError("missing number")
    return out


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"bad text {v!r}")
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None else _str(v)


def _names(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise ValueError(f"bad names {v!r}")
    return tuple(_str(x) for x in v)


def go_to_json(go: Go) -> dict[str, Any]:
    return {
        "player": go.player,
        "rolls": go.rolls,
        "farmed": list(go.farmed),
        "roll": list(go.roll),
    }


def _go(o: Mapping[str, Any]) -> Go:
    return Go(_str(o["player"]), _int(o["rolls"]), _dice(o["farmed"]), _dice(o["roll"]))


def result_to_json(r: Result) -> dict[str, Any]:
    return {"player": r.player, "value": r.value, "rolls": r.rolls, "dice": list(r.dice)}


def _result(o: Mapping[str, Any]) -> Result:
    return Result(_str(o["player"]), _opt_int(o["value"]), _int(o["rolls"]), _dice(o["dice"]))


def round_to_json(r: Round) -> dict[str, Any]:
    return {
        "kind": r.kind,
        "number": r.number,
        "roster": list(r.roster),
        "max_rolls": r.max_rolls,
        "results": [result_to_json(x) for x in r.results],
        "go": None if r.go is None else go_to_json(r.go),
        "resets": r.resets,
        "purpose": r.purpose,
        "rolled": list(r.rolled),
        "turn_hammer": r.turn_hammer,
    }


def _round(o: Mapping[str, Any]) -> Round:
    kind = _str(o["kind"])
    if kind not in KINDS:
        raise ValueError(f"bad round kind {kind!r}")
    return Round(
        kind,
        _int(o["number"]),
        _names(o["roster"]),
        _int(o["max_rolls"]),
        tuple(_result(x) for x in o["results"]),
        None if o["go"] is None else _go(o["go"]),
        _int(o["resets"]),
        _str(o["purpose"]),
        _names(o["rolled"]),
        _str(o["turn_hammer"]),
    )


def _plain(obj: Any) -> dict[str, Any]:
    """A flat dataclass of str/int/None/dice fields as JSON."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(obj).items()}


def state_core_to_json(s: BarDiceState) -> dict[str, Any]:
    """Everything :func:`state_from_json` needs to rebuild ``s`` exactly."""
    return {
        "rules": rules_to_json(s.rules),
        "players": list(s.players),
        "phase": s.phase,
        "round": None if s.round is None else round_to_json(s.round),
        "hammer": s.hammer,
        "safe": [_plain(x) for x in s.safe],
        "finalists": list(s.finalists),
        "turns_won": list(s.turns_won),
        "turns": [_plain(x) for x in s.turns],
        "sponsor": s.sponsor,
        "ended": s.ended,
        "penalties": [_plain(x) for x in s.penalties],
        "news": [_plain(x) for x in s.news],
        "throw": None
        if s.throw is None
        else {
            "before": state_core_to_json(s.throw.before),
            "kept": list(s.throw.kept),
            "thrown": list(s.throw.thrown),
        },
        "rethrow": None
        if s.rethrow is None
        else {"kept": list(s.rethrow.kept), "count": s.rethrow.count, "reason": s.rethrow.reason},
    }


def state_core_from_json(o: Mapping[str, Any], rules: HouseRules) -> BarDiceState:
    """Inverse of :func:`state_core_to_json` (``rules`` already parsed by the caller)."""
    phase = _str(o["phase"])
    if phase not in PHASES:
        raise ValueError(f"bad phase {phase!r}")
    throw = o["throw"]
    rethrow = o["rethrow"]
    ended = o["ended"]
    if not isinstance(ended, bool):
        raise ValueError("ended must be true or false")
    return BarDiceState(
        rules=rules,
        players=_names(o["players"]),
        phase=phase,
        round=None if o["round"] is None else _round(o["round"]),
        hammer=_opt_str(o["hammer"]),
        safe=tuple(
            Standing(_str(x["player"]), _int(x["round"]), _opt_int(x["value"]), _int(x["rolls"]))
            for x in o["safe"]
        ),
        finalists=_names(o["finalists"]),
        turns_won=tuple(_int(x) for x in o["turns_won"]),
        turns=tuple(
            TurnResult(_int(x["number"]), _str(x["winner"]), _str(x["loser"]), _str(x["text"]))
            for x in o["turns"]
        ),
        sponsor=_opt_str(o["sponsor"]),
        ended=ended,
        penalties=tuple(
            Penalty(_str(x["player"]), _str(x["kind"]), _str(x["text"])) for x in o["penalties"]
        ),
        news=tuple(
            News(
                _str(x["kind"]),
                _opt_str(x["player"]),
                _str(x["text"]),
                _opt_int(x["value"]),
                _dice(x["dice"]),
            )
            for x in o["news"]
        ),
        throw=None
        if throw is None
        else Throw(
            state_core_from_json(throw["before"], rules),
            _dice(throw["kept"]),
            _dice(throw["thrown"]),
        ),
        rethrow=None
        if rethrow is None
        else Rethrow(_dice(rethrow["kept"]), _int(rethrow["count"]), _str(rethrow["reason"])),
    )
