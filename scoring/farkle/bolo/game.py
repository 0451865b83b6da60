"""Bolo: five-dice Farkle with full house, straights, 4/5 of a kind and the board (RULES.md 2).

Each player keeps a board score. A turn is tallied only if it reaches the minimum set by the
board at the start of the turn (650 to get on, then 350, 750 from 7000, 1000 from 9000; B-6,
B10); a player may stop only with a non-scoring die left to pick up (B-4, B4); the first
player to reach the target wins at once (B-7, B11), or with ``final_round`` after one more
turn for every other player, tied leaders then playing sudden death. One player is a solo
game: it ends when the board reaches the target, and the reason says in how many turns.
Bong hits: one per full 1000 of a banked turn (B-8, B12), plus one for a board of exactly
5150 (Van Halen, B14). A ``rule`` action is the table's vote (B-11, B17): it changes a house
rule for the rest of this game and is logged.

Keeps and banking follow :mod:`scoring.farkle.you_blew_it`: a ``keep`` names one legal keep of the
roll (the player chooses between readings such as full house 500 or 1100, B-5); a ``bank``
straight after a roll is accepted only when the roll has exactly one legal keep (C4). A
BOLO stays on the pad until the next action, so that a sloppy-die re-roll (B16) or the
Yahtzee clause (B13, a ``reroll`` with reason ``"yahtzee"``) can still apply; every view
already shows it settled.

This module is the Game protocol (what the table may do and waits for, the high-roll wall,
the JSON); the house rules are :mod:`~scoring.farkle.bolo.rules`, the frozen state
:mod:`~scoring.farkle.bolo.state`, and how a turn ends :mod:`~scoring.farkle.bolo.play`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from scoring.actions import Action, Bank, End, Keep, Lineup, Reroll, Roll, SetRule
from scoring.errors import IllegalActionError, RulesError
from scoring.farkle.bolo.play import (
    after_five,
    apply_order,
    bank,
    may_bank_points,
    reroll_order,
    settle,
    yahtzee_ready,
)
from scoring.farkle.bolo.rules import DICE, IDS, HouseRules, cocked_rule, minimum, table
from scoring.farkle.bolo.state import State, TurnRecord
from scoring.farkle.combos import ComboTable
from scoring.farkle.game import FarkleGame
from scoring.farkle.turn import (
    Turn,
    apply_keep,
    apply_reroll,
    apply_roll,
    keep_sole_option,
    options_view,
    roll_score,
    turn_view,
    words,
)
from scoring.game import Expecting, Game, Highlight, n_dice
from scoring.rules import parse_rules, rules_to_json

#: A single roll or a banked turn worth at least this goes to the high-roll wall.
HIGHLIGHT_MIN = 1000


class Bolo(FarkleGame[State, HouseRules]):
    """The Bolo rules (stateless; see :data:`GAME`)."""

    name = "bolo"
    title = "Bolo"
    rules_prefix = "bolo"
    rules_type = HouseRules
    uses_teams = False
    all_dice_word = "all five"

    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | HouseRules | None = None,
    ) -> State:
        """A new game. One player is a solo game (practice, or a race against the turn count):
        the same turns, minimums and board, over when the board reaches the target."""
        parsed = self.parse_rules(rules)
        if teams is not None:
            raise ValueError("Bolo is played by players, not teams")
        names = tuple(str(p).strip() for p in players or ())
        if not names or any(not n for n in names):
            raise ValueError("B-1: Bolo needs at least one named player")
        if len(set(names)) != len(names):
            raise ValueError("B-1: player names must be unique")
        n = len(names)
        order = tuple(range(n)) if parsed.start_order == "roll" and n > 1 else ()
        return State(parsed, names, (0,) * n, (False,) * n, (0,) * n, order=order)

    # -- play ----------------------------------------------------------------------------
    def apply(self, state: State, action: Action) -> State:
        if isinstance(action, Reroll) and state.order_faces:
            return reroll_order(state, action)
        if isinstance(action, Reroll) and state.turn.phase in ("keep", "blown"):
            return self._apply_reroll(state, action)
        state = settle(state)
        if state.over:
            raise IllegalActionError("B-7: the game is over")
        if state.order and not isinstance(action, Lineup | End | SetRule):
            return apply_order(state, action)
        turn = state.turn
        tbl = table(state.rules)
        if type(action) is Roll:  # a Reveal is Gords' (a Roll subclass)
            return replace(state, turn=apply_roll(turn, action.dice, DICE, tbl, IDS))
        if type(action) is Keep:  # Reroll and Fix are Keep subclasses
            turn = apply_keep(turn, action.dice, DICE, tbl, IDS)
            state = replace(state, turn=turn)
            if state.rules.five_ones_wins_instantly and "five 1s" in turn.steps[-1].combos:
                return bank(state, win=True)
            return state
        if isinstance(action, Bank):
            return self._apply_bank(state, tbl)
        if isinstance(action, Reroll):
            raise IllegalActionError(f"{IDS.cocked}: a re-roll follows a roll, before any keep")
        if isinstance(action, SetRule):
            return self._apply_rule(state, action)
        if isinstance(action, Lineup):
            if state.turns or state.turn.started:
                raise IllegalActionError("B-1: the order of play is set before the first roll")
            if sorted(action.order) != sorted(state.players):
                raise IllegalActionError(
                    f"B-1: the order must name every player once: {', '.join(state.players)}"
                )
            return replace(state, players=tuple(action.order), order=(), order_faces=(), current=0)
        if isinstance(action, End):
            why = "ended by the scorekeeper"
            return replace(state, over=True, winners=(), reason=why, turn=Turn(), tied=())
        if action.type in ("undo", "fix"):
            raise IllegalActionError(f"{action.type} replays the log: use scoring.history")
        raise IllegalActionError(f"Bolo has no {action.type!r} action")

    def _apply_reroll(self, state: State, action: Reroll) -> State:
        if action.reason == "yahtzee":
            if not yahtzee_ready(state):
                raise IllegalActionError(
                    "B13: the Yahtzee clause applies only when the three or four kept dice "
                    "of one face 2/3/4/6 are matched by every die of the next roll"
                )
            if action.dice and tuple(sorted(action.dice)) != state.turn.roll:
                raise IllegalActionError(f"B13: re-roll all of {words(state.turn.roll)}")
            turn = replace(
                state.turn,
                phase="reroll",
                roll=(),
                rerolling=len(state.turn.roll),
                clause_rerolls=state.turn.clause_rerolls + 1,
            )
            return replace(state, turn=turn)
        turn = apply_reroll(state.turn, action.dice, cocked_rule(state.rules), IDS)
        return replace(state, turn=turn)

    def _apply_bank(self, state: State, tbl: ComboTable) -> State:
        why = "B-5: choose which dice to keep before stopping"
        turn = keep_sole_option(state.turn, tbl, DICE, why)
        state = replace(state, turn=turn)
        if turn.phase != "decide":
            raise IllegalActionError("B-2: stop after keeping scoring dice from a roll")
        if turn.hot:
            raise IllegalActionError(
                "B-4: every die rolled scored: pick up all five and continue the turn"
            )
        if not turn.may_stop:
            raise IllegalActionError(
                "B-4: a player may stop only with a non-scoring die left to pick up"
            )
        return bank(state)

    def _apply_rule(self, state: State, action: SetRule) -> State:
        current = rules_to_json(state.rules)
        short = action.name.removeprefix(self.rules_prefix + ".")
        if short == "rule_overrides":
            raise IllegalActionError("B17: rule_overrides cannot be voted on")
        try:
            rules = parse_rules(HouseRules, {**current, action.name: action.value}, "bolo")
        except RulesError as exc:
            raise IllegalActionError(f"B17: {exc}") from None
        return replace(state, rules=rules, overrides=(*state.overrides, (short, action.value)))

    def legal_actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        if state.order_faces:
            out.append(Reroll(state.order_faces[-1:]))
        if state.turn.phase in ("keep", "blown"):
            out.append(Reroll(()))
            if yahtzee_ready(state):
                out.append(Reroll(state.turn.roll, "yahtzee"))
        settled = settle(state)
        if settled.over:
            return out
        turn = settled.turn
        if turn.phase == "keep":
            options = roll_score(turn, table(settled.rules)).options
            out.extend(Keep(o.keep) for o in options)
            sole = options[0] if len(options) == 1 else None
            if sole is not None and sole.may_stop and may_bank_points(settled, sole.points):
                out.append(Bank())
        elif turn.phase == "decide" and turn.may_stop and may_bank_points(settled):
            out.append(Bank())
        if not settled.turns and not turn.started:
            out.append(Lineup(settled.players))
        out.append(End())
        return out

    def expecting(self, state: State) -> Expecting:
        if yahtzee_ready(state):
            n = len(state.turn.roll)
            text = f"{state.player}: Yahtzee clause! re-roll the {n} {state.turn.roll[0]}s"
            return Expecting(state.player, "reroll", n, text)
        settled = settle(state)
        if settled.over:
            return Expecting(None, "none", 0, f"Game over: {settled.reason}")
        if settled.order:
            again = " again (a tie)" if len(settled.order) < len(settled.players) else ""
            text = f"{settled.player}: roll 1 die for the order of play{again}"
            return Expecting(settled.player, "roll", 1, text)
        player, turn = settled.player, settled.turn
        n = turn.dice_wanted(DICE)
        dice = n_dice(n)
        if turn.phase == "keep":
            count = len(roll_score(turn, table(settled.rules)).options)
            choices = "1 choice" if count == 1 else f"{count} choices"
            return Expecting(player, "keep", 0, f"{player}: keep scoring dice ({choices})")
        if turn.phase == "decide" and turn.may_stop:
            least = settled.minimum()
            take = "stop" if turn.points >= least else f"pass (under {least})"
            text = f"{player}: roll {dice} or {take} with {turn.points}"
            return Expecting(player, "roll_or_bank", n, text)
        if turn.phase == "reroll":
            return Expecting(player, "roll", n, f"{player}: re-roll {dice}")
        if turn.hot:
            text = f"{player}: all dice scored! roll all five again ({turn.points} so far)"
        elif turn.steps:
            text = f"{player}: roll {dice} ({turn.points} so far)"
        else:
            text = f"{player}: roll {dice} (needs {settled.minimum()} to take points)"
            if settled.tied:
                text += f"; sudden death, tied at {settled.boards[settled.current]} (B11)"
        return Expecting(player, "roll", n, text)

    def highlights(self, before: State, action: Action, after: State) -> tuple[Highlight, ...]:
        """Rolls and banked turns of 1000+, high rollers (B-10/B15), Van Halen (B14)."""
        out: list[Highlight] = []
        rules = before.rules
        turn = after.turn
        if (
            type(action) is Roll
            and turn.phase == "blown"
            and after_five(turn.steps)
            and not yahtzee_ready(after)
        ):  # B-10: the roll that BOLOs right after a five of a kind signs the pad too
            text = f"{after.player} BOLOed right after five of a kind ({words(turn.roll)})"
            out.append(Highlight("high_roller", after.player, turn.points, turn.roll, text))
        if not isinstance(action, Keep | Bank) or isinstance(action, Reroll):
            return tuple(out)
        settled = settle(before)
        prior = settled.turn.steps
        banked = after.turns[-1] if len(after.turns) > len(settled.turns) else None
        steps = banked.steps if banked is not None else after.turn.steps
        player = banked.player if banked is not None else after.player
        by_roll = rules.high_roller_on == "roll"
        if len(steps) > len(prior):
            step = steps[-1]
            if by_roll and step.points >= rules.high_roller_min:
                text = f"{player}: HIGH ROLLER, {step.points} in one roll ({words(step.roll)})"
                out.append(Highlight("high_roller", player, step.points, step.roll, text))
            elif step.points >= HIGHLIGHT_MIN:
                text = f"{player}: {step.points} in one roll ({words(step.roll)})"
                out.append(Highlight("roll", player, step.points, step.roll, text))
        if banked is not None and banked.status == "banked":
            if not by_roll and banked.points >= rules.high_roller_min:
                text = f"{player}: HIGH ROLLER, {banked.points} in one turn"
                out.append(Highlight("high_roller", player, banked.points, (), text))
            elif banked.points >= HIGHLIGHT_MIN:
                text = f"{player} took {banked.points} in one turn ({banked.hits} bong hits)"
                out.append(Highlight("turn", player, banked.points, (), text))
            if any(n.startswith("Van Halen") for n in banked.notes):
                text = f"{player}: Van Halen! exactly {banked.board}"
                out.append(Highlight("van_halen", player, banked.board, (), text))
        return tuple(out)

    # -- the hooks of FarkleGame ----------------------------------------------------------
    _settled = staticmethod(settle)
    _table = staticmethod(table)

    def _scores(self, settled: State) -> dict[str, int]:
        return dict(zip(settled.players, settled.boards, strict=True))

    def _board(self, state: State, settled: State) -> dict[str, Any]:
        """Each player's minimum, the thresholds, the turn (a BOLO shown settled), the keeps."""
        rules = settled.rules
        return {
            "minimum": {
                p: minimum(rules, b, o)
                for p, b, o in zip(settled.players, settled.boards, settled.on_board, strict=True)
            },
            "thresholds": {
                "entry": rules.entry_min,
                "take": rules.take_min,
                "from_7000": rules.take_min_7000,
                "from_9000": rules.take_min_9000,
            },
            **turn_view(state.turn, settled.turn, DICE),
            "yahtzee_clause": yahtzee_ready(state),
            "options": options_view(state.turn, table(rules)),
            "order_roll": [  # B-1 under way: this round's rollers and the faces they rolled
                [settled.players[p], f]
                for p, f in itertools.zip_longest(settled.order, settled.order_faces)
            ],
        }

    def _fields(self, state: State) -> dict[str, Any]:
        """Everything :meth:`_decode` needs, plus the turn sheet."""
        players = state.players
        return {
            "rules": rules_to_json(state.rules),
            "players": list(players),
            "boards": dict(zip(players, state.boards, strict=True)),
            "on_board": dict(zip(players, state.on_board, strict=True)),
            "hits": dict(zip(players, state.hits, strict=True)),
            "current": state.current,
            "turn": state.turn.to_json(),
            "turns": [t.to_json() for t in state.turns],
            "overrides": [{"name": n, "value": v} for n, v in state.overrides],
            "final_turns": state.final_turns,
            "state_over": state.over,
            "state_winners": list(state.winners),
            "state_reason": state.reason,
            "order": list(state.order),
            "order_faces": list(state.order_faces),
            "tied": [state.players[j] for j in state.tied],
        }

    def _decode(self, src: Mapping[str, Any]) -> State:
        players = tuple(map(str, src["players"]))
        final = src["final_turns"]
        return State(
            rules=self.parse_rules(src["rules"]),
            players=players,
            boards=tuple(int(src["boards"][p]) for p in players),
            on_board=tuple(bool(src["on_board"][p]) for p in players),
            hits=tuple(int(src["hits"][p]) for p in players),
            current=int(src["current"]),
            turn=Turn.from_json(src["turn"]),
            turns=tuple(TurnRecord.from_json(t) for t in src["turns"]),
            overrides=tuple((str(o["name"]), o["value"]) for o in src["overrides"]),
            final_turns=None if final is None else int(final),
            over=bool(src["state_over"]),
            winners=tuple(src["state_winners"]),
            reason=str(src["state_reason"]),
            order=tuple(int(p) for p in src.get("order", ())),  # absent in older digests
            order_faces=tuple(int(f) for f in src.get("order_faces", ())),
            tied=tuple(players.index(str(p)) for p in src.get("tied", ())),  # absent in older
        )


GAME = Bolo()
_PROTOCOL_CHECK: Game[State] = GAME  # mypy proves Bolo implements the Game protocol

__all__ = ["GAME", "Bolo"]
