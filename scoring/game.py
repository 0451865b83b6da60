"""The contract every game implements, and the value types it answers with.

Modelled on python-chess: the state is an immutable value, ``apply`` returns a new one and
always validates (an illegal action raises :class:`IllegalActionError` naming the rule),
``outcome`` is ``None`` while the game goes on. The server, the CLI and the coach only ever
talk to a game through this protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from scoring.actions import Action, Dice

S = TypeVar("S")


@dataclass(frozen=True)
class Expecting:
    """What the table waits for next.

    ``action`` is one of ``roll`` (throw ``dice`` dice), ``keep`` (choose dice to set aside),
    ``keep_or_bank``, ``roll_or_bank``, ``roll_or_stand``, ``farm_or_roll``, ``bid``,
    ``bid_or_call``, ``reveal`` (show all ``dice`` dice), ``lineup`` or ``none`` (game over).
    ``text`` is the sentence for the scoreboard ("Jane: roll 4 dice").
    """

    player: str | None
    action: str
    dice: int
    text: str
    team: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "team": self.team,
            "action": self.action,
            "dice": self.dice,
            "text": self.text,
        }


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: ``winners`` (one name, or several on a shared result)."""

    winners: tuple[str, ...]
    reason: str

    @property
    def winner(self) -> str | None:
        return self.winners[0] if len(self.winners) == 1 else None

    def to_json(self) -> dict[str, Any]:
        return {"winners": list(self.winners), "winner": self.winner, "reason": self.reason}


@dataclass(frozen=True)
class Highlight:
    """A fact worth keeping for the high-roll wall, produced when an action is applied.

    ``kind``: ``roll`` (points of one roll), ``turn`` (a banked turn), ``high_roller``
    (Bolo pad honours), ``hand`` (a Bar Dice hand), or a game-specific word
    (``too_lucky``, ``van_halen``...).
    """

    kind: str
    player: str
    points: int
    dice: Dice
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "player": self.player,
            "points": self.points,
            "dice": list(self.dice),
            "text": self.text,
        }


def n_dice(n: int) -> str:
    """ "1 die", "5 dice": how every game's texts and messages count dice."""
    return "1 die" if n == 1 else f"{n} dice"


class Game(Protocol[S]):
    """One game's rules. Implementations are stateless singletons."""

    name: str  #: ``you-blew-it``, ``bolo``, ``bar-dice``, ``gords``
    title: str  #: "You Blew It"
    rules_prefix: str  #: ``ybi``, ``bolo``, ``bardice``, ``gords``
    rules_type: type[Any]  #: the game's frozen ``HouseRules`` dataclass
    uses_teams: bool

    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | None = None,
    ) -> S:
        """A fresh game; raises ``ValueError`` for a bad line-up or unknown rule."""
        ...

    def apply(self, state: S, action: Action) -> S:
        """The state after ``action``; raises ``IllegalActionError`` naming the rule."""
        ...

    def legal_actions(self, state: S) -> list[Action]:
        """Every legal decision now. Chance (``roll``/``reveal``) is not enumerated:
        ``expecting`` says how many dice are wanted."""
        ...

    def expecting(self, state: S) -> Expecting: ...

    def outcome(self, state: S) -> Outcome | None: ...

    def highlights(self, before: S, action: Action, after: S) -> tuple[Highlight, ...]:
        """Facts for the record wall produced by ``action`` (may be empty)."""
        ...

    def state_to_json(self, state: S) -> dict[str, Any]:
        """JSON for the scoreboard; always has ``game``, ``rules``, ``scores``, ``over``,
        ``winner`` and ``expecting``; :meth:`state_from_json` reads it back exactly."""
        ...

    def state_from_json(self, obj: Mapping[str, Any]) -> S: ...

    def score_report(
        self, dice: Dice, rules: Any = None, *, bid: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        """``dicepad score --json`` for one roll under ``rules`` (the game's ``HouseRules``,
        defaults when ``None``); ``bid`` is Gords' ``(count, face)``."""
        ...

    def describe_report(self, report: Mapping[str, Any]) -> str:
        """The same report in words for ``dicepad score`` without ``--json``."""
        ...
