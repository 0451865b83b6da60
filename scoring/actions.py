"""The action vocabulary shared by every game, the HTTP API and the event log.

Actions are small frozen value types (like python-chess's ``Move``): they say what happened at
the table, never what it is worth. The engine never rolls dice: a ``Roll`` comes from the
camera, a phone, a button or a seeded demo camera (OpenSpiel's chance-node convention).

Every action round-trips through a plain JSON object (``{"type": "roll", "dice": [..]}``);
:func:`action_from_json` validates the shape strictly, so a malformed request is rejected
before it reaches a game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from scoring.errors import MalformedActionError

Dice: TypeAlias = tuple[int, ...]

MAX_DICE = 30  # no game here has more dice on the table (Gords: 6 players x 5 dice)


def _dice(value: object, what: str = "dice", *, allow_empty: bool = False) -> Dice:
    """Validate a list of pip values 1..6 and return them as a tuple (order kept)."""
    if not isinstance(value, list | tuple):
        raise MalformedActionError(f"{what} must be a list of pip values 1-6")
    if not value and not allow_empty:
        raise MalformedActionError(f"{what} must not be empty")
    if len(value) > MAX_DICE:
        raise MalformedActionError(f"{what}: at most {MAX_DICE} dice")
    out = []
    for d in value:
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6:
            raise MalformedActionError(f"{what} must be pip values 1-6, got {d!r}")
        out.append(d)
    return tuple(out)


def _int(value: object, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise MalformedActionError(f"{what} must be a whole number from {lo} to {hi}")
    return value


def _names(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not value:
        raise MalformedActionError(f"{what} must be a non-empty list of names")
    out = []
    for v in value:
        if not isinstance(v, str) or not v.strip() or len(v) > 40:
            raise MalformedActionError(f"{what}: each name is 1-40 characters")
        out.append(v.strip())
    return tuple(out)


def _player(value: object) -> str | None:
    return None if value is None else _names([value], "player")[0]


@dataclass(frozen=True)
class Action:
    """Base of every action; ``type`` is the JSON discriminator."""

    type: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        return cls()


@dataclass(frozen=True)
class Roll(Action):
    """Dice that came to rest flat on the pad (order does not matter).

    ``owners`` optionally names, per die, whose die it is (Gords reveals read by colour).
    """

    type: ClassVar[str] = "roll"
    dice: Dice = ()
    owners: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "dice": list(self.dice)}
        if self.owners is not None:
            out["owners"] = list(self.owners)
        return out

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        dice = _dice(obj.get("dice"))
        owners = obj.get("owners")
        if owners is None:
            return cls(dice)
        names = _names(owners, "owners")
        if len(names) != len(dice):
            raise MalformedActionError("owners must name one owner per die")
        return cls(dice, names)


@dataclass(frozen=True)
class Reveal(Roll):
    """Every hidden die shown after a call (Gords); same shape as a roll."""

    type: ClassVar[str] = "reveal"


@dataclass(frozen=True)
class Keep(Action):
    """Dice set aside from the last roll (Farkle keeps, Bar Dice farming)."""

    type: ClassVar[str] = "keep"
    dice: Dice = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "dice": list(self.dice)}

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        return cls(_dice(obj.get("dice")))


@dataclass(frozen=True)
class Reroll(Keep):
    """Dice of the last roll that must be thrown again (cocked, sloppy, house clauses).

    An empty list means "every die just rolled".
    """

    type: ClassVar[str] = "reroll"
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "dice": list(self.dice)}
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        reason = obj.get("reason", "")
        if not isinstance(reason, str) or len(reason) > 40:
            raise MalformedActionError("reason must be a short string")
        return cls(_dice(obj.get("dice", []), allow_empty=True), reason)


@dataclass(frozen=True)
class Fix(Keep):
    """Correct the dice of the most recent roll (a misread die); later actions are replayed."""

    type: ClassVar[str] = "fix"


@dataclass(frozen=True)
class Bank(Action):
    """End the turn and take the points."""

    type: ClassVar[str] = "bank"


@dataclass(frozen=True)
class Stand(Action):
    """Stop rolling and stand on the hand (Bar Dice: "in one", "in two")."""

    type: ClassVar[str] = "stand"


@dataclass(frozen=True)
class Bid(Action):
    """A Gords bid of ``count`` dice showing ``face``; ``player`` optionally names the bidder
    (checked against the turn order; omitted = whoever's turn it is)."""

    type: ClassVar[str] = "bid"
    count: int = 1
    face: int = 2
    player: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "count": self.count, "face": self.face}
        if self.player is not None:
            out["player"] = self.player
        return out

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        return cls(
            _int(obj.get("count"), "count", 1, MAX_DICE),
            _int(obj.get("face"), "face", 1, 6),
            _player(obj.get("player")),
        )


@dataclass(frozen=True)
class Call(Action):
    """Challenge the last bid (Gords); ``player`` optionally names the caller, ``spot_on``
    claims the bid is exactly right (house rule ``gords.spot_on``)."""

    type: ClassVar[str] = "call"
    player: str | None = None
    spot_on: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.player is not None:
            out["player"] = self.player
        if self.spot_on:
            out["spot_on"] = True
        return out

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        spot_on = obj.get("spot_on", False)
        if not isinstance(spot_on, bool):
            raise MalformedActionError("spot_on must be true or false")
        return cls(_player(obj.get("player")), spot_on)


@dataclass(frozen=True)
class Undo(Action):
    """Take back the last action; handled by the history, never by a game."""

    type: ClassVar[str] = "undo"


@dataclass(frozen=True)
class Lineup(Action):
    """Set the order of play (before the first roll, or between rounds)."""

    type: ClassVar[str] = "lineup"
    order: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "order": list(self.order)}

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        return cls(_names(obj.get("order"), "order"))


@dataclass(frozen=True)
class SetRule(Action):
    """A mid-game house-rule change agreed by the table (Bolo's vote, RULES.md B17 / C6)."""

    type: ClassVar[str] = "rule"
    name: str = ""
    value: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "value": self.value}

    @classmethod
    def _from_fields(cls, obj: Mapping[str, Any]) -> Action:
        name = obj.get("name")
        if not isinstance(name, str) or not name or len(name) > 60:
            raise MalformedActionError("rule name must be a non-empty string")
        value = obj.get("value")
        if not isinstance(value, bool | int | str) or (isinstance(value, str) and len(value) > 60):
            raise MalformedActionError("rule value must be a number, true/false or a short word")
        return cls(name, value)


@dataclass(frozen=True)
class End(Action):
    """The scorekeeper ends the game early (no winner is declared by the rules)."""

    type: ClassVar[str] = "end"


ACTION_TYPES: dict[str, type[Action]] = {
    cls.type: cls
    for cls in (Roll, Reveal, Keep, Reroll, Fix, Bank, Stand, Bid, Call, Undo, Lineup, SetRule, End)
}


def action_from_json(obj: object) -> Action:
    """Parse and validate one action object; raises :class:`MalformedActionError`."""
    if not isinstance(obj, Mapping):
        raise MalformedActionError("an action must be a JSON object with a 'type'")
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in ACTION_TYPES:
        known = ", ".join(sorted(ACTION_TYPES))
        raise MalformedActionError(f"unknown action type {kind!r}; expected one of {known}")
    return ACTION_TYPES[kind]._from_fields(obj)


def action_to_json(action: Action) -> dict[str, Any]:
    return action.to_json()
