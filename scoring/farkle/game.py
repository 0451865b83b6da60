"""The Game-protocol methods You Blew It and Bolo answer alike, in one base class.

Both Farkle games leave a blown roll on the pad until the next action (see
:mod:`scoring.farkle.turn`), so every view reads the *settled* state. The outcome, the
scoreboard JSON around each game's own fields, reading a saved state back and ``dicepad
score`` need no more of a game than how it settles, its combo table, its scores and its saved
fields: a game subclasses :class:`FarkleGame` and supplies those (the abstract methods); its
play (``apply``, ``legal_actions``, ``expecting``, ``highlights``) stays its own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar, cast

from scoring.actions import Dice
from scoring.farkle.combos import ComboTable
from scoring.farkle.report import describe, roll_report
from scoring.game import Expecting, Outcome
from scoring.rules import parse_rules


class FarkleState(Protocol):
    """What the shared methods read of a game's (frozen) state."""

    @property
    def over(self) -> bool: ...

    @property
    def winners(self) -> tuple[str, ...]: ...

    @property
    def reason(self) -> str: ...

    @property
    def player(self) -> str: ...


S = TypeVar("S", bound=FarkleState)
R = TypeVar("R")


class FarkleGame(ABC, Generic[S, R]):
    """Base of :class:`~scoring.farkle.you_blew_it.YouBlewIt` and
    :class:`~scoring.farkle.bolo.Bolo`."""

    name: str
    title: str
    rules_prefix: str
    rules_type: type[R]
    all_dice_word: str  #: "all six": how ``dicepad score`` says "every die of the game"

    # -- the hooks each game supplies ----------------------------------------------------
    @abstractmethod
    def _settled(self, state: S) -> S:
        """``state`` with a blow waiting on the pad applied (``state`` itself if none)."""

    @abstractmethod
    def _table(self, rules: R) -> ComboTable:
        """The combination table under ``rules``."""

    @abstractmethod
    def expecting(self, state: S) -> Expecting:
        """What the table waits for (the Game protocol; its texts differ per game)."""

    @abstractmethod
    def _scores(self, settled: S) -> dict[str, int]:
        """The scoreboard's ``scores``: points per player or team."""

    @abstractmethod
    def _board(self, state: S, settled: S) -> dict[str, Any]:
        """The game's own scoreboard fields (turn, keeps, thresholds...)."""

    @abstractmethod
    def _fields(self, state: S) -> dict[str, Any]:
        """Everything :meth:`_decode` needs to rebuild ``state`` exactly."""

    @abstractmethod
    def _decode(self, src: Mapping[str, Any]) -> S:
        """The state of :meth:`_fields`; a damaged one raises KeyError/TypeError."""

    # -- shared --------------------------------------------------------------------------
    def parse_rules(self, rules: Mapping[str, object] | R | None) -> R:
        if isinstance(rules, self.rules_type):
            return rules
        given = cast("Mapping[str, object] | None", rules)  # not an R, so loose input
        return parse_rules(self.rules_type, given, self.rules_prefix)

    def outcome(self, state: S) -> Outcome | None:
        settled = self._settled(state)
        return Outcome(settled.winners, settled.reason) if settled.over else None

    def state_to_json(self, state: S) -> dict[str, Any]:
        """The scoreboard view. A blow waiting on the pad is shown settled (scores, sheets,
        who is next) with the blown roll in ``current_roll``; the exact unsettled state is
        then kept under ``"pending"`` so that :meth:`state_from_json` restores it."""
        settled = self._settled(state)
        outcome = self.outcome(state)
        out: dict[str, Any] = {
            "game": self.name,
            "scores": self._scores(settled),
            "over": outcome is not None,
            "winner": outcome.winner if outcome else None,
            "winners": list(outcome.winners) if outcome else [],
            "reason": outcome.reason if outcome else "",
            "expecting": self.expecting(state).to_json(),
            "player": None if settled.over else settled.player,
            **self._board(state, settled),
            **self._fields(settled),
        }
        if settled is not state:
            out["pending"] = self._fields(state)
        return out

    def state_from_json(self, obj: Mapping[str, Any]) -> S:
        if obj.get("game") != self.name:
            raise ValueError(f"not a {self.title} state: game={obj.get('game')!r}")
        try:
            return self._decode(obj.get("pending") or obj)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"bad {self.name} state: {exc!r}") from None

    # -- dicepad score -------------------------------------------------------------------
    def score_report(
        self, dice: Dice, rules: Any = None, *, bid: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        if bid is not None:
            raise ValueError("--bid is for gords only")
        return roll_report(self.name, dice, self._table(self.parse_rules(rules)))

    def describe_report(self, report: Mapping[str, Any]) -> str:
        return describe(report, all_dice_word=self.all_dice_word)
