"""Bar Dice (Layman Brewing, Wisconsin; RULES.md 3): who buys the next round.

Order roll (one die each, D-1) → elimination rounds while three or more are in (one flop
each, highest is out, one tie all tie, D-3..D-5, D-12) → sponsor phase for the last two (best
two turns of three, up to three rolls, the hammer sets the pace, farming, roll-offs, horses;
D-6..D-11). Every round runs through the same code: a roster rolling in order, each player
taking one *go*. The engine never rolls: a ``roll`` is what the camera (or a phone) read.

A ``reroll`` right after a throw undoes that throw (cocked/stacked dice, D-16; a dropped
die, D15): the state keeps the one before it (:class:`~scoring.bar_dice.state.Throw`).
This module is the Game protocol (what the table waits for, legal decisions, JSON, reports);
the rules themselves are in :mod:`scoring.bar_dice.play` (each action) and
:mod:`scoring.bar_dice.rounds` (a finished go or round).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from scoring.actions import (
    Action,
    Dice,
    End,
    Fix,
    Keep,
    Lineup,
    Reroll,
    Reveal,
    Roll,
    Stand,
    Undo,
)
from scoring.bar_dice.hand import (
    ACE,
    DICE,
    hand_of,
    is_five_aces,
    pace_text,
    value_words,
)
from scoring.bar_dice.play import end, farm, lineup, over_text, reroll, result_of, roll, stand
from scoring.bar_dice.rounds import current, horses_text, roll_limit, show
from scoring.bar_dice.rules import HouseRules
from scoring.bar_dice.state import (
    BarDiceState,
    Go,
    Round,
    result_to_json,
    state_core_from_json,
    state_core_to_json,
)
from scoring.errors import IllegalActionError
from scoring.game import Expecting, Highlight, Outcome, n_dice
from scoring.rules import parse_rules
from scoring.saved_state import load_saved_state
from scoring.seating import seat_players

MAX_PLAYERS = 12

__all__ = ["GAME", "BarDice"]


# -- the game ---------------------------------------------------------------------------------


class BarDice:
    """The ``bar-dice`` game (RULES.md 3)."""

    name = "bar-dice"
    title = "Bar Dice"
    rules_prefix = "bardice"
    rules_type = HouseRules
    uses_teams = False

    # -- setup --

    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | None = None,
    ) -> BarDiceState:
        names = seat_players(
            self.title,
            players,
            teams,
            lo=2,
            hi=MAX_PLAYERS,
            count_error="Bar Dice needs {lo} to {hi} players, got {n}",
        )
        parsed = parse_rules(HouseRules, rules, self.rules_prefix)
        return BarDiceState(
            rules=parsed,
            players=names,
            phase="order",
            round=Round("order", 1, names, 1),
            turns_won=(0,) * len(names),
        )

    # -- actions --

    def apply(self, state: BarDiceState, action: Action) -> BarDiceState:
        if isinstance(action, Reroll):  # may take back the throw that ended the game
            return reroll(state, action)
        if state.phase == "over":
            raise IllegalActionError(f"the game is over: {over_text(state)}")
        if isinstance(action, Undo | Fix):
            raise IllegalActionError("undo and fix are resolved by the game's history")
        if isinstance(action, Reveal):
            raise IllegalActionError("Bar Dice has no reveal: every roll is in the open")
        if isinstance(action, Roll):
            return roll(state, action.dice)
        if isinstance(action, Keep):
            after = farm(state, action.dice)
        elif isinstance(action, Stand):
            after = stand(state)
        elif isinstance(action, Lineup):
            after = lineup(state, action.order)
        elif isinstance(action, End):
            after = end(state)
        else:
            raise IllegalActionError(
                f"Bar Dice has no {action.type!r} action (roll, keep, stand, reroll, end)"
            )
        return replace(after, throw=None)

    def legal_actions(self, state: BarDiceState) -> list[Action]:
        rnd = state.round
        if state.phase == "over" or state.rethrow or rnd is None or rnd.go is None:
            return []
        go = rnd.go
        if go.rolls == 0 or rnd.max_rolls == 1:
            return []
        out: list[Action] = [Stand()]
        if go.rolls >= roll_limit(rnd):
            return out
        subsets = {
            c
            for k in range(1, len(go.roll) + 1)
            for c in itertools.combinations(sorted(go.roll), k)
        }
        for dice in sorted(subsets, key=lambda c: (len(c), c)):
            if go.farmed or not state.rules.first_farm_needs_ace or ACE in dice:
                out.append(Keep(dice))
        return out

    def expecting(self, state: BarDiceState) -> Expecting:
        rnd = state.round
        if state.phase == "over" or rnd is None:
            return Expecting(None, "none", 0, f"Game over: {over_text(state)}")
        player = current(rnd)
        if state.rethrow is not None:
            n = state.rethrow.count
            why = state.rethrow.reason or "cocked"
            return Expecting(player, "roll", n, f"{player}: re-roll {n_dice(n)} ({why})")
        if rnd.kind == "order":
            return Expecting(player, "roll", 1, f"{player}: roll 1 die for the order of play")
        go = rnd.go or Go(player)
        want = DICE - len(go.farmed)
        if rnd.max_rolls == 1:
            what = "roll-off" if rnd.kind == "rolloff" else "flop"
            return Expecting(player, "roll", want, f"{player}: {what}, roll {n_dice(want)}")
        limit = roll_limit(rnd)
        if rnd.results:
            lead = rnd.results[0]
            target = f"to beat {pace_text(lead.value, lead.rolls)}"
        else:
            target = "setting the pace"
        if go.rolls == 0:
            return Expecting(
                player,
                "roll",
                want,
                f"{player}: roll {n_dice(want)}, up to {limit} rolls {target}",
            )
        hand = result_of(go, state.rules)
        if go.rolls >= limit or not want:
            return Expecting(
                player,
                "stand",
                0,
                f"{player}: stand on {pace_text(hand.value, go.rolls)} ({show(hand.dice)}), "
                "no rolls left",
            )
        can_farm = bool(go.roll) and (
            bool(go.farmed) or not state.rules.first_farm_needs_ace or ACE in go.roll
        )
        return Expecting(
            player,
            "farm_or_roll" if can_farm else "roll_or_stand",
            want,
            f"{player}: {'farm, ' if can_farm else ''}roll {n_dice(want)} or stand "
            f"(roll {go.rolls} of {limit}, {target})",
        )

    def outcome(self, state: BarDiceState) -> Outcome | None:
        if state.phase != "over":
            return None
        if state.ended or state.sponsor is None:
            return Outcome((), "ended by the scorekeeper before a sponsor was found")
        winners = tuple(p for p in state.players if p != state.sponsor)
        return Outcome(winners, over_text(state))

    def highlights(
        self, before: BarDiceState, action: Action, after: BarDiceState
    ) -> tuple[Highlight, ...]:
        out = []
        for n in after.news:
            if n.kind in ("hand", "too_lucky") and n.player is not None:
                out.append(Highlight(n.kind, n.player, n.value or 0, n.dice, n.text))
        return tuple(out)

    # -- JSON --

    def state_to_json(self, state: BarDiceState) -> dict[str, Any]:
        outcome = self.outcome(state)
        core = state_core_to_json(state)
        finals = state.finalists
        lost = [sum(t.loser == p for t in state.turns) for p in finals]
        rnd = state.round
        pace = None
        if rnd is not None and rnd.max_rolls > 1 and rnd.results:
            lead = rnd.results[0]
            pace = {
                "player": lead.player,
                "value": lead.value,
                "rolls": lead.rolls,
                "text": pace_text(lead.value, lead.rolls),
            }
        go = rnd.go if rnd is not None else None
        return {
            "game": self.name,
            **core,
            "scores": _scores(state),
            "over": state.phase == "over",
            "winner": None if outcome is None else outcome.winner,
            "winners": [] if outcome is None else list(outcome.winners),
            "expecting": self.expecting(state).to_json(),
            "pace": pace,
            "limit": None if rnd is None or rnd.kind == "order" else roll_limit(rnd),
            "farmed": [] if go is None else list(go.farmed),
            "standings": [
                {
                    "player": s.player,
                    "round": s.round,
                    "value": s.value,
                    "text": f"{s.player}: out in round {s.round} with {value_words(s.value)}",
                }
                for s in state.safe
            ],
            "horses": horses_text(finals, lost),
            "round_results": [] if rnd is None else [result_to_json(r) for r in rnd.results],
        }

    def state_from_json(self, obj: Mapping[str, Any]) -> BarDiceState:
        return load_saved_state(obj, self.name, HouseRules, self.rules_prefix, state_core_from_json)

    # -- one roll --

    def score_report(
        self, dice: Dice, rules: Any = None, *, bid: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        if bid is not None:
            raise ValueError("Bar Dice takes no bid (bids are for gords)")
        r = parse_rules(HouseRules, rules, self.rules_prefix)
        if len(dice) != DICE or any(not 1 <= d <= 6 for d in dice):
            raise ValueError(f"C3: a Bar Dice hand is {DICE} dice of 1-6, got {list(dice)}")
        hand = hand_of(dice, ace_required=r.ace_required, five_aces_value=r.five_aces_value)
        return {
            "dice": list(dice),
            "counts": hand is not None,
            "count": None if hand is None else hand.count,
            "face": None if hand is None else hand.face,
            "value": None if hand is None else hand.value,
        }

    def describe_report(self, report: Mapping[str, Any]) -> str:
        dice = " ".join(map(str, report["dice"]))
        if not report["counts"]:
            return f"{dice}: nothing (no ace, D-4): below every counting hand"
        extra = " and too lucky: buy everyone a shot (D-15)" if is_five_aces(report["dice"]) else ""
        return (
            f"{dice}: {report['value']}, {value_words(report['value'])} "
            f"({report['count']} × {report['face']}, aces wild){extra}"
        )


GAME = BarDice()


def _scores(state: BarDiceState) -> dict[str, dict[str, Any]]:
    out_round = {s.player: s.round for s in state.safe}
    out: dict[str, dict[str, Any]] = {}
    for p, won in zip(state.players, state.turns_won, strict=True):
        if p == state.sponsor:
            status = "sponsor"
        elif p in out_round:
            status = "safe"
        elif p in state.finalists:
            status = "free" if state.sponsor else "finalist"
        else:
            status = "in"
        out[p] = {
            "status": status,
            "out_in_round": out_round.get(p),
            "turns_won": won,
            "turns_lost": sum(t.loser == p for t in state.turns),
        }
    return out
