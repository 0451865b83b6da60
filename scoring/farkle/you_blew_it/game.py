"""You Blew It: team Farkle with six dice, exactly as in RULES.md section 1.

Rounds: every player takes one turn, in the line-up order (team by team as listed, or
alternating seats, or as a ``lineup`` action set it before the round). A blown roll loses the
blower's turn points *and* those of his teammates who banked earlier in the round (YBI-8/Y8);
points of finished rounds are locked (YBI-10). The game ends at the end of a round in which a
team has reached the target (YBI-11), or per ``end_rule``.

Keeps: after a roll the player keeps one of the legal keeps of :mod:`scoring.farkle.combos`, then
rolls the rest or banks. A ``bank`` straight after a roll (no keep) is accepted only when the
roll has exactly one legal keep, so the engine never chooses between keeps for the player
(RULES.md C4); otherwise it is refused with the list of keeps.

A blown roll stays on the pad until the next action, so that a cocked-die re-roll (Y16, C1)
can still turn it into a scoring roll; every view (scores, ``expecting``, ``outcome``, the
JSON) already shows the blow settled, and the next action settles it for real.

This module is the Game protocol (what the table may do and waits for, the high-roll wall,
the JSON); the house rules are :mod:`~scoring.farkle.you_blew_it.rules`, the frozen state
:mod:`~scoring.farkle.you_blew_it.state`, and how a turn ends
:mod:`~scoring.farkle.you_blew_it.play`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from scoring.actions import (
    Action,
    Bank,
    End,
    Keep,
    Lineup,
    Reroll,
    Roll,
    SetRule,
)
from scoring.errors import IllegalActionError
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
from scoring.farkle.you_blew_it.play import bank, default_lineup, settle
from scoring.farkle.you_blew_it.rules import DICE, IDS, HouseRules, cocked_rule, table
from scoring.farkle.you_blew_it.state import (
    RoundRecord,
    State,
    TurnRecord,
    provisional,
)
from scoring.game import Expecting, Game, Highlight, n_dice
from scoring.rules import rules_to_json

#: A single roll or a banked turn worth at least this goes to the high-roll wall.
HIGHLIGHT_MIN = 1000


class YouBlewIt(FarkleGame[State, HouseRules]):
    """The You Blew It rules (stateless; see :data:`GAME`)."""

    name = "you-blew-it"
    title = "You Blew It"
    rules_prefix = "ybi"
    rules_type = HouseRules
    uses_teams = True
    all_dice_word = "all six"

    # -- setup ---------------------------------------------------------------------------
    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | HouseRules | None = None,
    ) -> State:
        parsed = self.parse_rules(rules)
        if teams is None:
            if players is None:
                raise ValueError("You Blew It is played by teams: give teams {name: [players]}")
            teams = {p: [p] for p in players}  # one-player teams: the plain game (Y14)
        line = tuple((str(t).strip(), tuple(str(p).strip() for p in m)) for t, m in teams.items())
        if len(line) != parsed.teams:
            raise ValueError(f"Y14: this game has {parsed.teams} teams, got {len(line)}")
        names = [p for _, m in line for p in m]
        if any(not m for _, m in line) or any(not n for n in names) or any(not t for t, _ in line):
            raise ValueError("YBI-1: every team needs a name and at least one player")
        if len(set(names)) != len(names) or len({t for t, _ in line}) != len(line):
            raise ValueError("YBI-1: team and player names must be unique")
        if len({len(m) for _, m in line}) > 1 and parsed.unequal_teams == "forbid":
            raise ValueError("Y14 (unequal_teams=forbid): teams must have the same size")
        return State(
            rules=parsed,
            teams=line,
            order=default_lineup(line, parsed.seating),
            locked=(0,) * len(line),
        )

    # -- play ----------------------------------------------------------------------------
    def apply(self, state: State, action: Action) -> State:
        if isinstance(action, Reroll) and state.turn.phase in ("keep", "blown"):
            turn = apply_reroll(state.turn, action.dice, cocked_rule(state.rules), IDS)
            return replace(state, turn=turn)
        state = settle(state)
        if state.over:
            raise IllegalActionError("YBI-11: the game is over")
        turn = state.turn
        tbl = table(state.rules)
        if type(action) is Roll:  # a Reveal is Gords' (a Roll subclass)
            return replace(state, turn=apply_roll(turn, action.dice, DICE, tbl, IDS))
        if type(action) is Keep:  # Reroll and Fix are Keep subclasses
            return replace(state, turn=apply_keep(turn, action.dice, DICE, tbl, IDS))
        if isinstance(action, Bank):
            return self._apply_bank(state, tbl)
        if isinstance(action, Reroll):
            raise IllegalActionError(f"{IDS.cocked}: a re-roll follows a roll, before any keep")
        if isinstance(action, Lineup):
            return self._apply_lineup(state, action)
        if isinstance(action, End):
            why = "ended by the scorekeeper"
            return replace(state, over=True, winners=(), reason=why, turn=Turn())
        if isinstance(action, SetRule):
            raise IllegalActionError("C6: You Blew It house rules are fixed at game start")
        if action.type in ("undo", "fix"):
            raise IllegalActionError(f"{action.type} replays the log: use scoring.history")
        raise IllegalActionError(f"You Blew It has no {action.type!r} action")

    def _apply_bank(self, state: State, tbl: ComboTable) -> State:
        why = "YBI-7: choose which dice to keep before banking"
        turn = keep_sole_option(state.turn, tbl, DICE, why)
        state = replace(state, turn=turn)
        if turn.phase != "decide":
            raise IllegalActionError("YBI-7: bank after keeping dice from a roll")
        if turn.hot:
            raise IllegalActionError(
                "YBI-6: all six dice scored: gather them up and roll again (no banking now)"
            )
        return bank(state)

    def _apply_lineup(self, state: State, action: Lineup) -> State:
        if state.turn_no or state.turn.started:
            raise IllegalActionError(
                "YBI-2: the line-up changes only before the first roll or between rounds"
            )
        if sorted(action.order) != sorted(state.order):
            raise IllegalActionError(
                f"YBI-2: the line-up must name every player once: {', '.join(state.order)}"
            )
        return replace(state, order=tuple(action.order))

    def legal_actions(self, state: State) -> list[Action]:
        out: list[Action] = []
        turn = state.turn
        if turn.phase in ("keep", "blown"):
            out.append(Reroll(()))
        settled = settle(state)
        if settled.over:
            return out
        turn = settled.turn
        tbl = table(state.rules)
        if turn.phase == "keep":
            options = roll_score(turn, tbl).options
            out.extend(Keep(o.keep) for o in options)
            if len(options) == 1 and options[0].may_stop:
                out.append(Bank())
        elif turn.phase == "decide" and not turn.hot:
            out.append(Bank())
        if settled.turn_no == 0 and not turn.started:
            out.append(Lineup(settled.order))
        out.append(End())
        return out

    def expecting(self, state: State) -> Expecting:
        settled = settle(state)
        if settled.over:
            return Expecting(None, "none", 0, f"Game over: {settled.reason}")
        player = settled.player
        team = settled.team_of(player)
        turn = settled.turn
        n = turn.dice_wanted(DICE)
        dice = n_dice(n)
        if turn.phase == "keep":
            count = len(roll_score(turn, table(state.rules)).options)
            text = f"{player}: keep scoring dice ({count} choice{'' if count == 1 else 's'})"
            return Expecting(player, "keep", 0, text, team)
        if turn.phase == "decide" and not turn.hot:
            return Expecting(
                player, "roll_or_bank", n, f"{player}: roll {dice} or bank {turn.points}", team
            )
        if turn.phase == "reroll":
            return Expecting(player, "roll", n, f"{player}: re-roll {dice}", team)
        if turn.hot:
            text = f"{player}: hot dice! roll all six again ({turn.points} so far)"
        else:
            text = f"{player}: roll {dice}"
        return Expecting(player, "roll", n, text, team)

    def highlights(self, before: State, action: Action, after: State) -> tuple[Highlight, ...]:
        """A roll worth >= HIGHLIGHT_MIN kept, a banked turn worth >= HIGHLIGHT_MIN."""
        if not isinstance(action, Keep | Bank) or isinstance(action, Reroll):
            return ()
        prior = settle(before).turn.steps
        record = _last_record(after) if isinstance(action, Bank) else None
        steps = record.steps if record is not None else after.turn.steps
        player = record.player if record is not None else after.player
        out: list[Highlight] = []
        if len(steps) > len(prior) and steps[-1].points >= HIGHLIGHT_MIN:
            step = steps[-1]
            text = f"{player}: {step.points} in one roll ({words(step.roll)})"
            out.append(Highlight("roll", player, step.points, step.roll, text))
        if record is not None and record.status == "banked" and record.points >= HIGHLIGHT_MIN:
            text = f"{player} banked {record.points} in one turn"
            out.append(Highlight("turn", player, record.points, (), text))
        return tuple(out)

    # -- the hooks of FarkleGame ----------------------------------------------------------
    _settled = staticmethod(settle)
    _table = staticmethod(table)

    def _scores(self, settled: State) -> dict[str, int]:
        return dict(zip(settled.team_names, provisional(settled), strict=True))

    def _board(self, state: State, settled: State) -> dict[str, Any]:
        """The turn (a blow shown settled), the keeps, and a warning for unequal teams."""
        sizes = {len(m) for _, m in state.teams}
        warnings = []
        if len(sizes) > 1 and state.rules.unequal_teams == "allow_with_warning":
            warnings.append("Y14: teams of different sizes: the bigger team gets more turns")
        return {
            **turn_view(state.turn, settled.turn, DICE),
            "options": options_view(state.turn, table(state.rules)),
            "warnings": warnings,
        }

    def _fields(self, state: State) -> dict[str, Any]:
        """Everything :meth:`_decode` needs, plus the team and turn sheets."""
        names = state.team_names
        return {
            "rules": rules_to_json(state.rules),
            "teams": {name: list(m) for name, m in state.teams},
            "round": state.round,
            "order": list(state.order),
            "turn_no": state.turn_no,
            "turn": state.turn.to_json(),
            "locked": dict(zip(names, state.locked, strict=True)),
            "on_board": list(state.on_board),
            "this_round": [r.to_json() for r in state.this_round],
            "rounds": [r.to_json(names) for r in state.rounds],
            "final_turns": state.final_turns,
            "state_over": state.over,
            "state_winners": list(state.winners),
            "state_reason": state.reason,
        }

    def _decode(self, src: Mapping[str, Any]) -> State:
        teams = tuple((str(t), tuple(map(str, m))) for t, m in src["teams"].items())
        names = [t for t, _ in teams]
        final = src["final_turns"]
        return State(
            rules=self.parse_rules(src["rules"]),
            teams=teams,
            order=tuple(src["order"]),
            locked=tuple(int(src["locked"][t]) for t in names),
            round=int(src["round"]),
            turn_no=int(src["turn_no"]),
            turn=Turn.from_json(src["turn"]),
            this_round=tuple(TurnRecord.from_json(r) for r in src["this_round"]),
            rounds=tuple(RoundRecord.from_json(r, names) for r in src["rounds"]),
            on_board=tuple(src["on_board"]),
            final_turns=None if final is None else int(final),
            over=bool(src["state_over"]),
            winners=tuple(src["state_winners"]),
            reason=str(src["state_reason"]),
        )


def _last_record(state: State) -> TurnRecord | None:
    if state.this_round:
        return state.this_round[-1]
    if state.rounds and state.rounds[-1].turns:
        return state.rounds[-1].turns[-1]
    return None


GAME = YouBlewIt()
_PROTOCOL_CHECK: Game[State] = GAME  # mypy proves YouBlewIt implements the Game protocol

__all__ = ["GAME", "YouBlewIt"]
