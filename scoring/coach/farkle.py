"""Farkle-family hints: the policy's advice for one turn state, as JSON for phones and the CLI.

:func:`spec_for` turns a game's house rules and the turn's circumstances (Bolo's board, You
Blew It's teammates' points and on-board minimum) into a :class:`FarkleSpec`;
:func:`turn_hint` reads the solved policy for one state; :func:`state_hint` does both for a
live ``you_blew_it.State`` / ``bolo.State``. Every value is in *turn points* (what this turn
adds to the team or board, so a You Blew It blow that wipes teammates' points is negative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from scoring.coach.solver import (
    CLAUSE_FACES,
    STEP,
    FarkleSpec,
    Policy,
    dice_text,
    multisets,
    p_blow,
    solve,
)
from scoring.farkle import bolo, you_blew_it
from scoring.farkle.turn import Turn
from scoring.game import n_dice

GAMES = ("you-blew-it", "bolo")
FINISH_MAX = 10000  #: the finishing policy covers needs up to this many points
ENDGAME_TEXT = 3000  #: the hint's sentence mentions the chance to finish from this need on


def spec_for(
    game: str,
    rules: you_blew_it.HouseRules | bolo.HouseRules,
    *,
    minimum: int = 0,
    teammates: int = 0,
) -> FarkleSpec:
    """The policy spec of a turn: ``minimum`` is the least turn that counts (Bolo's board
    minimum, YBI's on-board minimum when not yet on the board), ``teammates`` the points
    this player's teammates banked earlier in the round (YBI: lost on a blow)."""
    if isinstance(rules, bolo.HouseRules):
        return FarkleSpec(
            "bolo",
            bolo.table(rules),
            minimum=minimum,
            may_pass=rules.below_min_may_pass,
            clause_rerolls=rules.yahtzee_rerolls if rules.yahtzee_clause else None,
            five_ones_win=rules.five_ones_wins_instantly,
        )
    if teammates and minimum:  # player scope: the teammates' points stay if the bank is short
        return FarkleSpec(
            "you-blew-it", you_blew_it.table(rules), minimum=teammates + minimum, floor=teammates
        )
    return FarkleSpec("you-blew-it", you_blew_it.table(rules), minimum=minimum)


def finish_spec(rules: bolo.HouseRules) -> FarkleSpec:
    """Bolo's finishing policy: maximise P(this turn reaches the target), for every need up to
    :data:`FINISH_MAX` at once (the value depends only on the points still needed, since a
    pass below the need is worth no more than a BOLO)."""
    goal = min(-(-rules.target // STEP) * STEP, FINISH_MAX)
    return replace(spec_for("bolo", rules, minimum=0), may_pass=True, goal=goal)


def standard_specs(rules: you_blew_it.HouseRules | bolo.HouseRules) -> list[FarkleSpec]:
    """The policies a table of this rule set needs (one per board minimum, and Bolo's
    finishing policy): solve these at startup (:func:`scoring.coach.solver_cache.warm`)."""
    if isinstance(rules, bolo.HouseRules):
        mins = (rules.entry_min, rules.take_min, rules.take_min_7000, rules.take_min_9000)
        specs = [spec_for("bolo", rules, minimum=m) for m in dict.fromkeys(mins)]
        return [*specs, finish_spec(rules)]
    mins2 = (0, rules.on_board_min) if rules.on_board_min else (0,)
    return [spec_for("you-blew-it", rules, minimum=m) for m in mins2]


@dataclass(frozen=True)
class TurnState:
    """Where a turn stands, as the coach sees it.

    ``phase``: ``roll`` (dice about to be thrown, the choice is made), ``decide`` (after a
    keep: roll ``dice`` or bank), ``keep`` (choose a keep of ``roll``), ``blown``.
    """

    phase: str
    turn_points: int = 0
    dice: int = 0
    may_stop: bool = False
    clause: bool = False
    roll: tuple[int, ...] = ()
    teammates: int = 0


def _pct(p: float) -> str:
    return f"{100 * p:.1f} %"


def turn_hint(policy: Policy, turn: TurnState) -> dict[str, Any]:
    """The advice for one state: ``p_blow`` of the dice about to be rolled, ``expected_turn``
    (a fresh turn under best play, same circumstances), ``roll_value`` / ``bank_value``
    (expected turn points of rolling on / banking now; ``bank_value`` is ``None`` when
    banking is not allowed), ``advice`` (``roll``, ``bank``, ``keep`` or ``none``), the best
    ``keep`` with what to do ``then``, and ``text``."""
    spec, w = policy.spec, turn.teammates
    risk = w + turn.turn_points
    out: dict[str, Any] = {
        "game": spec.game,
        "phase": turn.phase,
        "turn_points": turn.turn_points,
        "teammates_at_risk": w,
        "minimum": max(spec.minimum - w, 0),
        "expected_turn": round(policy.expected_turn(w), 1),
        "dice_left": turn.dice,
        "p_blow": None,
        "roll_value": None,
        "bank_value": None,
        "roll_gain": None,
        "advice": "none",
        "keep": None,
        "then": None,
        "keeps": [],
    }
    if turn.phase == "blown":
        lost = f" and {w} of the team's" if w else ""
        out["text"] = f"Blown: the turn's {turn.turn_points}{lost} points are lost."
        out["advice"] = "none"
        return out
    if turn.phase == "keep":
        ranked = policy.keep_values(turn.roll, risk)
        if not ranked:
            out["text"] = f"{dice_text(turn.roll)} scores nothing: blown."
            out["phase"] = "blown"
            return out
        listed = []
        for option, value, (n, stop, clause) in ranked:
            bank = spec.bank(risk + option.points) if stop and n else None
            roll = policy.roll_value(risk + option.points, n, clause) if n else None
            then = "bank" if roll is None or (bank is not None and bank >= roll) else "roll"
            listed.append(
                {
                    "keep": list(option.keep),
                    "points": option.points,
                    "value": round(value - w, 1),
                    "then": then,
                    "dice_left": n,
                }
            )
        best = ranked[0]
        option, value, (n, stop, clause) = best
        out.update(
            advice="keep",
            keep=list(option.keep),
            then=listed[0]["then"],
            keeps=listed,
            dice_left=n,
        )
        after = TurnState("decide", turn.turn_points + option.points, n, stop, clause, (), w)
        nested = turn_hint(policy, after) if n else None
        if nested is not None:
            for k in ("p_blow", "roll_value", "bank_value", "roll_gain"):
                out[k] = nested[k]
        what = (
            "and bank"
            if listed[0]["then"] == "bank"
            else f"and roll {n_dice(n)}"
            if n
            else "(the turn ends)"
        )
        out["text"] = (
            f"Keep {dice_text(option.keep)} ({option.points}) {what}: worth "
            f"{value - w:.0f} on average."
        )
        return out
    n = turn.dice
    roll = policy.roll_value(risk, n, turn.clause) - w
    bank_raw = spec.bank(risk) if turn.phase == "decide" and turn.may_stop else None
    bank = None if bank_raw is None else bank_raw - w
    pb = p_blow(n, spec.table)
    out.update(
        p_blow=round(pb, 4),
        roll_value=round(roll, 1),
        bank_value=None if bank is None else round(bank, 1),
        roll_gain=None if bank is None else round(roll - bank, 1),
    )
    head = f"Roll {n_dice(n)}: {_pct(pb)} to blow it"
    if bank is None:
        out["advice"] = "roll"
        why = "" if turn.phase == "roll" else " (banking is not allowed now)"
        out["text"] = f"{head}; the turn is worth {roll:.0f} on average{why}."
    else:
        out["advice"] = "bank" if bank >= roll else "roll"
        word = "Bank" if bank >= roll else "Roll on"
        out["text"] = (
            f"{head}; rolling on is worth {roll - bank:+.0f} points against banking "
            f"{bank:.0f}. {word}."
        )
    return out


def clause_live(rules: bolo.HouseRules, kept: Sequence[int], cycle_steps: int, used: int) -> bool:
    """B13 is live for the next roll (as :func:`scoring.farkle.bolo.yahtzee_ready` checks it
    later)."""
    if not rules.yahtzee_clause or (rules.yahtzee_rerolls and used >= rules.yahtzee_rerolls):
        return False
    return (
        cycle_steps == 1 and len(kept) in (3, 4) and len(set(kept)) == 1 and kept[0] in CLAUSE_FACES
    )


def state_hint(state: you_blew_it.State | bolo.State) -> dict[str, Any]:
    """The hint for the player to act in a live game state (either Farkle game)."""
    if state.over:
        return {"game": _name(state), "phase": "over", "advice": "none", "text": "Game over."}
    if isinstance(state, bolo.State) and state.order:  # B-1: one die each, not a turn
        text = "Roll one die each for the order of play."
        return {"game": "bolo", "phase": "order", "advice": "none", "text": text}
    turn = state.turn
    if isinstance(state, bolo.State):
        spec = spec_for("bolo", state.rules, minimum=state.minimum())
        w = 0
        full = bolo.DICE
        clause = clause_live(state.rules, turn.kept, len(turn.cycle_steps()), turn.clause_rerolls)
    else:
        team = state.team_of(state.player)
        w = sum(r.points for r in state.this_round if r.team == team and r.status == "banked")
        rules = state.rules
        key = team if rules.on_board_scope == "team" else state.player
        minimum = rules.on_board_min if rules.on_board_min and key not in state.on_board else 0
        spec = spec_for("you-blew-it", rules, minimum=minimum, teammates=w)
        full = you_blew_it.DICE
        clause = False
    policy = solve(spec)
    n = turn.dice_wanted(full)
    if turn.phase == "reroll":
        n = full - len(turn.kept)
    phase = {"roll": "roll", "reroll": "roll", "decide": "decide", "keep": "keep"}.get(
        turn.phase, "blown"
    )
    ts = TurnState(
        phase,
        turn.points,
        n,
        turn.may_stop and not turn.hot,
        clause,
        turn.roll if phase == "keep" else (),
        w,
    )
    out = turn_hint(policy, ts)
    out["player"] = state.player
    if isinstance(state, bolo.State) and phase != "blown":
        need = state.rules.target - state.boards[state.current]
        out.update(endgame(state.rules, ts, max(need, state.minimum()), out))
    if isinstance(state, bolo.State) and bolo.yahtzee_ready(state):
        # B13: the would-be BOLO is re-rolled, with the same dice at risk.
        live = clause_live(state.rules, turn.kept, len(turn.cycle_steps()), turn.clause_rerolls + 1)
        again = TurnState("roll", turn.points, len(turn.roll), clause=live, teammates=w)
        out.update({k: v for k, v in turn_hint(policy, again).items() if k != "phase"})
        need = state.rules.target - state.boards[state.current]
        out.update(endgame(state.rules, again, max(need, state.minimum()), out, how="reroll"))
        out["advice"] = "reroll"
        out["reroll"] = list(turn.roll)
        out["text"] = f"Yahtzee clause: re-roll {dice_text(turn.roll)}. {out['text']}"
    if turn.phase == "reroll" and turn.roll:
        face, again_live = None, False
        if isinstance(state, bolo.State):
            face, again_live = reroll_clause(state.rules, turn)
        pb, value = reroll_odds(
            policy, turn.roll, turn.rerolling, w + turn.points, clause=face, clause_after=again_live
        )
        out.update(p_blow=round(pb, 4), roll_value=round(value - w, 1))
        out.pop("endgame", None)  # a fresh throw of every die's: the re-roll's own is below
        out["text"] = (
            f"Re-roll {n_dice(turn.rerolling)} (with {dice_text(turn.roll)} standing): "
            f"{_pct(pb)} to blow it; the turn is worth {value - w:.0f} on average."
        )
        if isinstance(state, bolo.State):
            need = max(state.rules.target - state.boards[state.current], state.minimum())
            out.update(reroll_endgame(state.rules, turn, need, out))
    elif turn.phase == "reroll":
        out["text"] = f"Re-roll the cocked or sloppy dice first. {out['text']}"
        if "endgame" in out:  # every die of the roll is thrown again: a fresh throw's odds
            out["endgame"]["finish_advice"] = "reroll"
    return out


def reroll_odds(
    policy: Policy,
    standing: Sequence[int],
    rerolling: int,
    at_risk: int,
    *,
    clause: int | None = None,
    clause_after: bool = False,
) -> tuple[float, float]:
    """P(blow) and the value of re-rolling ``rerolling`` cocked or sloppy dice while
    ``standing`` stay on the pad: the roll is scored whole, so its odds are not those of a
    fresh throw of every die (1 1 1 1 standing cannot blow). ``clause``: Bolo's Yahtzee
    clause (B13) is live for this roll on that face, so a whole roll of it that scores
    nothing is thrown again (``clause_after``: still live for that throw), not a BOLO.
    The value is in the policy's units: points, or P(finish) for a finishing policy."""
    blow = value = 0.0
    for dice, ways in multisets(rerolling):
        p = ways / 6**rerolling
        whole = (*standing, *dice)
        ranked = policy.keep_values(whole, at_risk)
        if ranked:
            value += p * ranked[0][1]
        elif clause is not None and set(whole) == {clause}:
            value += p * policy.roll_value(at_risk, len(whole), clause_after)
        else:
            blow += p
    return blow, value


def reroll_clause(rules: bolo.HouseRules, turn: Turn) -> tuple[int | None, bool]:
    """For a Bolo re-roll: the face on which B13 is live for the whole roll (``None``: not
    live) and whether it is still live for the clause's own re-throw."""
    cycle = len(turn.cycle_steps())
    if not clause_live(rules, turn.kept, cycle, turn.clause_rerolls):
        return None, False
    return turn.kept[0], clause_live(rules, turn.kept, cycle, turn.clause_rerolls + 1)


def _finish_risk(policy: Policy, need: int, points: int) -> int | None:
    """The finishing policy's ``at_risk`` for a turn with ``points`` that needs ``need``
    (``None`` when the policy does not cover it)."""
    goal = policy.spec.goal
    if need > goal or need <= 0:
        return None
    # Points come in 50s, so needing 1001 is needing 1050 (and the grid holds only 50s).
    steps = -(-need // STEP) * STEP
    return min(goal - steps + points, goal)


def reroll_endgame(
    rules: bolo.HouseRules, turn: Turn, need: int, ep: dict[str, Any]
) -> dict[str, Any]:
    """Bolo's finishing view while cocked or sloppy dice are re-thrown with others standing
    (B16): ``p_finish`` is the chance that the whole roll (standing + re-thrown dice) and
    the best finishing play after it reach ``need``, not that of a fresh throw of every die."""
    policy = solve(finish_spec(rules))
    risk = _finish_risk(policy, need, turn.points)
    if risk is None:
        return {}
    face, again = reroll_clause(rules, turn)
    _, p = reroll_odds(policy, turn.roll, turn.rerolling, risk, clause=face, clause_after=again)
    info = {
        "need": need,
        "p_finish": round(p, 4),
        "finish_advice": "reroll",
        "finish_keep": None,
    }
    out: dict[str, Any] = {"endgame": info}
    if need <= ENDGAME_TEXT:
        out["text"] = f"{ep['text']} To finish this turn ({need} more): {100 * p:.1f} %."
    return out


def endgame(
    rules: bolo.HouseRules,
    turn: TurnState,
    need: int,
    ep: dict[str, Any],
    *,
    how: str = "",
) -> dict[str, Any]:
    """Bolo's finishing view of a turn that needs ``need`` points to reach the target:
    ``p_finish`` under the policy that maximises it and that policy's advice (``how``, when
    given, names the action instead, e.g. ``reroll`` for the Yahtzee clause's re-throw).
    When the target can be reached now for sure and it wins at once (no final round), the
    main advice follows it: banking the win beats any expected-points argument."""
    policy = solve(finish_spec(rules))
    risk = _finish_risk(policy, need, turn.turn_points)
    if risk is None:
        return {}
    shifted = replace(turn, turn_points=risk)
    h = turn_hint(policy, shifted)
    p = _exact_value(policy, shifted)
    info = {
        "need": need,
        "p_finish": round(p, 4),
        "finish_advice": how
        or (h["advice"] if h["advice"] != "keep" else f"keep, then {h['then']}"),
        "finish_keep": h["keep"],
    }
    out: dict[str, Any] = {"endgame": info}
    sure = p >= 1 - 1e-12 and not rules.final_round
    if sure and (h["advice"] == "bank" or (h["advice"] == "keep" and h["then"] == "bank")):
        out["advice"] = h["advice"]
        if h["advice"] == "keep":
            out["keep"], out["then"] = h["keep"], "bank"
            out["text"] = f"Keep {dice_text(h['keep'])} and bank: that wins the game."
        else:
            out["text"] = "Bank: that wins the game."
    elif ep["advice"] != "none" and need <= ENDGAME_TEXT:
        out["text"] = f"{ep['text']} To finish this turn ({need} more): {100 * p:.1f} %."
    return out


def _exact_value(policy: Policy, turn: TurnState) -> float:
    """The policy's value of ``turn`` unrounded: :func:`turn_hint` rounds values to 0.1 for
    points, which would turn a probability of 17.8 % into 20 % and 0.6 % into 0."""
    risk = turn.teammates + turn.turn_points
    if turn.phase == "keep":
        ranked = policy.keep_values(turn.roll, risk)
        return ranked[0][1] - turn.teammates if ranked else 0.0
    if turn.phase == "decide":
        return policy.value(risk, turn.dice, turn.may_stop, turn.clause) - turn.teammates
    return policy.roll_value(risk, turn.dice, turn.clause) - turn.teammates


def _name(state: you_blew_it.State | bolo.State) -> str:
    return "bolo" if isinstance(state, bolo.State) else "you-blew-it"
