"""The coach's single entry point: ``hint(game_name, state, rules)`` for any game.

The scoreboard calls :func:`hint` with the table's current state (the game's ``State`` value
or its ``state_to_json`` object) and shows ``hint["text"]``; the other keys are the figures
behind it. Every hint carries ``game``, ``advice`` and ``text``:

- ``you-blew-it`` / ``bolo``: ``p_blow``, ``expected_turn``, ``roll_value``, ``bank_value``,
  ``roll_gain``, ``advice`` (``roll`` / ``bank`` / ``keep`` / ``none``), ``keep`` and ``then``
  (see :func:`scoring.coach.farkle.turn_hint`). ``state=None`` describes the start of a
  turn under ``rules``.
- ``bar-dice``: ``p_win`` (against the pace; in an elimination round, the chance to win it
  against the hands so far, ties settled by ``bardice.one_tie_all_tie``), ``p_goal`` (beat or
  tie it), ``p_beat``,
  ``advice`` (``roll``: throw every unfarmed die / ``farm`` / ``stand`` / ``none``) and
  ``farm`` (see :func:`scoring.coach.bar_dice.go_hint`).
- ``gords``: ``p_bid`` (the standing bid is true), ``most_likely``, ``advice`` (``raise`` /
  ``call`` / ``spot_on``: a spot-on call, under ``gords.spot_on``), ``raise`` and ``loss``
  (the dice the player expects to lose by each option, under ``gords.dice_lost`` and
  ``gords.spot_on``; see :func:`scoring.coach.gords.advise`); pass the player's own dice as
  ``own=`` (hidden from the table, so without them every die counts as unknown).

Farkle policies are solved on first use and memoised; a server warms them at startup from its
data directory with :func:`scoring.coach.solver_cache.warm` so that a hint is a lookup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from scoring import bar_dice, gords
from scoring.actions import Bid
from scoring.bar_dice.rounds import rank, roll_limit
from scoring.bar_dice.state import BarDiceState, Go
from scoring.coach.bar_dice import elimination_round, go_hint
from scoring.coach.farkle import TurnState, spec_for, state_hint, turn_hint
from scoring.coach.gords import advise
from scoring.coach.solver import solve
from scoring.farkle import bolo, you_blew_it
from scoring.games import NAMES, find
from scoring.gords.bids import parse_board
from scoring.gords.state import GordsState
from scoring.rules import parse_rules

_STATES: dict[str, type] = {
    "you-blew-it": you_blew_it.State,
    "bolo": bolo.State,
    "bar-dice": BarDiceState,
    "gords": GordsState,
}


def hint(
    game_name: str,
    state: Any = None,
    rules: Mapping[str, object] | object | None = None,
    *,
    own: Iterable[int] | None = None,
) -> dict[str, Any]:
    """The coach's hint for the player to act in ``state`` (a state value, its JSON object
    or JSON text; ``None``: the start of a turn under ``rules``). Raises ``ValueError`` for an
    unknown game or a malformed state."""
    if game_name not in NAMES:
        raise ValueError(f"unknown game {game_name!r}; known games: {', '.join(NAMES)}")
    game = find(game_name)
    if state is None:
        if not isinstance(rules, game.rules_type):
            rules = parse_rules(game.rules_type, rules, game.rules_prefix)  # type: ignore[arg-type]
        return _fresh(game_name, rules)
    if isinstance(state, str | bytes):
        try:
            state = json.loads(state)
        except json.JSONDecodeError as exc:
            raise ValueError(f"state is not JSON: {exc}") from None
    if isinstance(state, Mapping):
        try:
            state = game.state_from_json(state)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"bad {game_name} state: {exc!r}") from None
    if not isinstance(state, _STATES[game_name]):
        raise ValueError(f"not a {game_name} state: {type(state).__name__}")
    if isinstance(state, you_blew_it.State | bolo.State):
        return state_hint(state)
    if isinstance(state, BarDiceState):
        return bar_dice_hint(state)
    assert isinstance(state, GordsState)
    return gords_hint(state, own=own)


def _fresh(game_name: str, rules: Any) -> dict[str, Any]:
    if isinstance(rules, you_blew_it.HouseRules | bolo.HouseRules):
        minimum = rules.entry_min if isinstance(rules, bolo.HouseRules) else rules.on_board_min
        policy = solve(spec_for(game_name, rules, minimum=minimum))
        return turn_hint(policy, TurnState("roll", 0, policy.spec.table.dice))
    if isinstance(rules, bar_dice.HouseRules):
        return go_hint(rolls_left=3, rules=rules)
    return {
        "game": "gords",
        "advice": "none",
        "text": "Gords hints need the bid, your dice and the dice in play.",
    }


def bar_dice_hint(state: BarDiceState) -> dict[str, Any]:
    """The hint for the player rolling in a Bar Dice state."""
    rnd = state.round
    none = {"game": "bar-dice", "advice": "none"}
    if state.phase == "over" or rnd is None:
        return {**none, "text": "Game over."}
    if rnd.kind == "order":
        return {**none, "text": "Roll one die each for the order of play."}
    player = rnd.roster[len(rnd.results)]
    if state.rethrow is not None:
        return {**none, "player": player, "advice": "reroll", "text": "Re-roll the cocked dice."}
    go = rnd.go or Go(player)
    limit = roll_limit(rnd)
    counting = [r for r in rnd.results if r.value is not None]
    pace_rolls = None
    versus = "win the turn against"
    round_goal = None
    reset = ""
    if rnd.kind == "sponsor":  # the opponent plays against the hammer's pace
        target = rnd.results[0].value if rnd.results else None
        beat_nothing = bool(rnd.results) and target is None
        pace_rolls = rnd.results[0].rolls if rnd.results else None
    elif counting:  # elimination or roll-off: top the best hand so far, not the first one
        best = max(counting, key=lambda r: rank(r, state.rules))
        target, beat_nothing, pace_rolls = best.value, False, best.rolls
        versus = "win the roll-off against" if rnd.kind == "rolloff" else "win the round against"
        if rnd.purpose != "sponsor":  # an elimination round: ties follow one tie all tie
            rules = state.rules
            keys = [rank(r, rules) for r in counting]
            tie_rule = "off" if rnd.kind == "rolloff" else rules.one_tie_all_tie
            round_goal = elimination_round(
                keys,
                players=len(rnd.roster),
                limit=limit,
                tie_rule=tie_rule,
                fewer_rolls_wins_tie=rules.fewer_rolls_wins_tie,
                nothing_in_fewer_rolls_wins=rules.nothing_in_fewer_rolls_wins,
            )
            if tie_rule == "any_counting" and len(set(keys)) < len(keys):
                matched = [r.player for r in counting if keys.count(rank(r, rules)) > 1]
                reset = (
                    f"{' and '.join(matched)} match: one tie all tie (D-12) resets the round "
                    "whatever is thrown now"
                )
    else:  # nothing counts yet: any counting hand (the first all-day go sets a pace)
        target = None
        beat_nothing = bool(rnd.results) or rnd.max_rolls == 1
    out = go_hint(
        rolls_left=max(limit - go.rolls, 0),
        farmed=go.farmed,
        roll=go.roll if go.rolls else (),
        target=target,
        beat_nothing=beat_nothing,
        pace_rolls=pace_rolls,
        limit=limit,
        versus=versus,
        rules=state.rules,
        round_goal=round_goal,
    )
    out["player"] = player
    if reset:
        out["text"] = f"{reset}. {out['text']}"
    return out


def gords_hint(state: GordsState, *, own: Iterable[int] | None = None) -> dict[str, Any]:
    """Raise, call or call spot on for the player to bid, from the engine's legal bids."""
    if state.phase == "over":
        return {"game": "gords", "advice": "none", "text": "Game over."}
    if state.phase != "bidding":
        return {"game": "gords", "advice": "none", "text": "Reveal every die to settle the call."}
    dice = tuple(own or ())
    in_play = gords.dice_in_play(state)
    if len(dice) > in_play:
        raise ValueError(f"{len(dice)} own dice but only {in_play} in play")
    rules = state.rules
    board = parse_board(rules.board) if rules.ones_bid_rank == "board_order" else ()
    raises = [(a.count, a.face) for a in gords.GAME.legal_actions(state) if isinstance(a, Bid)]
    current = (state.bids[-1].count, state.bids[-1].face) if state.bids else None
    out = advise(
        current,
        raises,
        own=dice,
        unknown=in_play - len(dice),
        ones_wild=not state.palifico,
        ones_rank=rules.ones_bid_rank,
        board=board,
        spot_on=rules.spot_on and current is not None,
        dice_lost=rules.dice_lost,
        my_dice=state.dice[state.players.index(state.turn)],
    )
    out["player"] = state.turn
    return out
