"""The coach: policy solve time per rule set, hint lookup time, and the value of a turn.

Run on demand: ``./run bench bench_coach [--runs N] [--turns T]``. Prints

- the cold solve time per rule set (medians of N runs, caches cleared before each; a Bolo
  rule set is its four board minimums); target: under 5 s here, so a Pi solves at startup in
  well under a minute (and then loads the cached files);
- the time of one hint: a policy lookup (``turn_hint``) and the whole ``hint(game, state)``
  on a live state (median of many calls); target: <= 1 ms;
- the expected value of a fresh turn under best play for every rule set, against the
  rules' "an average turn is 350 points" (YBI-7) and published Farkle figures (other rules:
  Zilch and Facebook Farkle score three pairs, straights, more of a kind, so they are richer);
- a check of the solver against the engine: T turns played through
  ``scoring.farkle.you_blew_it`` / ``scoring.farkle.bolo`` with seeded random dice, every
  decision taken from ``hint``; the mean of the banked turns must agree with the solved value
  within the Monte Carlo error.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from scoring import bar_dice
from scoring.actions import Bank, Keep, Lineup, Roll
from scoring.coach import bar_dice as coach_bar_dice
from scoring.coach import hint
from scoring.coach.farkle import (
    TurnState,
    finish_spec,
    spec_for,
    standard_specs,
    turn_hint,
)
from scoring.coach.solver import FarkleSpec, Policy, forget, solve
from scoring.farkle import bolo, you_blew_it
from scoring.farkle.combos import clear_caches

ZILCH = 620.855  #: Busche: Zilch, best average points per turn (three pairs, 6 of a kind ...)


def ybi_rules(**kw: Any) -> you_blew_it.HouseRules:
    return you_blew_it.GAME.parse_rules(kw)


def bolo_rules(**kw: Any) -> bolo.HouseRules:
    return bolo.GAME.parse_rules(kw)


RULE_SETS: list[tuple[str, you_blew_it.HouseRules | bolo.HouseRules]] = [
    ("you-blew-it (defaults)", ybi_rules()),
    ("you-blew-it combo_must_be_kept=false", ybi_rules(combo_must_be_kept=False)),
    ("you-blew-it keep_all_scoring_dice=true", ybi_rules(keep_all_scoring_dice=True)),
    ("you-blew-it extra_dice_of_a_kind=linear", ybi_rules(extra_dice_of_a_kind="linear")),
    ("you-blew-it extra_dice_of_a_kind=doubling", ybi_rules(extra_dice_of_a_kind="doubling")),
    ("you-blew-it on_board_min=700", ybi_rules(on_board_min=700)),
    ("bolo (defaults)", bolo_rules()),
    ("bolo four_of_a_kind=triple_plus_single", bolo_rules(four_of_a_kind="triple_plus_single")),
    ("bolo all_scoring_roll_takes_all=false", bolo_rules(all_scoring_roll_takes_all=False)),
    ("bolo below_min_may_pass=false", bolo_rules(below_min_may_pass=False)),
]


def median_s(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cold_solve(rules: you_blew_it.HouseRules | bolo.HouseRules) -> list[Policy]:
    forget()
    clear_caches()
    return [solve(s) for s in standard_specs(rules)]


def simulate(game_name: str, rules: Any, turns: int, seed: int) -> tuple[float, float]:
    """Play ``turns`` single-player turns through the engine following ``hint``; returns the
    mean banked (tallied) turn and its standard error."""
    rng = random.Random(seed)
    if game_name == "bolo":
        game: Any = bolo.GAME
        full = 5
    else:
        game = you_blew_it.GAME
        full = 6
    results = []
    for _ in range(turns):
        if game_name == "bolo":
            # One player already on the board with 3000 (minimum take 350).
            state = game.new(players=["P", "Q"], rules=rules)
            state = replace(state, boards=(3000, 0), on_board=(True, False))
        else:
            state = game.new(teams={"A": ["P"], "B": ["Q"]}, rules=rules)
        while True:
            h = hint(game_name, state)
            if h["advice"] == "keep":
                state = game.apply(state, Keep(tuple(h["keep"])))
            elif h["advice"] == "bank":
                state = game.apply(state, Bank())
            else:
                turn = state.turn
                n = turn.dice_wanted(full)
                state = game.apply(state, Roll(tuple(rng.randint(1, 6) for _ in range(n))))
                if state.turn.phase == "blown":
                    results.append(0)
                    break
            if game_name == "bolo" and state.turns:
                results.append(state.turns[-1].tallied)
                break
            if game_name != "bolo" and state.this_round:
                rec = state.this_round[-1]
                results.append(rec.points if rec.status == "banked" else 0)
                break
    mean = statistics.fmean(results)
    return mean, statistics.stdev(results) / len(results) ** 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="cold solves per rule set")
    parser.add_argument("--turns", type=int, default=4000, help="simulated turns per game")
    args = parser.parse_args()

    print("Cold solve per rule set (median of", args.runs, "runs; all board minimums)")
    for name, rules in RULE_SETS:
        secs = median_s(partial(cold_solve, rules), args.runs)
        policies = [solve(s) for s in standard_specs(rules)]
        caps = ", ".join(f"{p.cap}" for p in policies)
        print(f"  {name:44s} {secs:6.2f} s  ({len(policies)} policies, caps {caps})")

    print("\nExpected value of a fresh turn under best play (points)")
    for name, rules in RULE_SETS:
        for p in (solve(s) for s in standard_specs(rules) if not s.goal):
            label = f"{name}, minimum {p.spec.minimum}"
            bank = ", ".join(f"{n}:{p.bank_threshold(n)}" for n in range(1, p.spec.table.dice))
            print(
                f"  {label:58s} {p.expected_turn():7.1f}   bank from (dice:points) {bank}; "
                f"proven above {p.bank_always_above}"
            )
    ybi = solve(spec_for("you-blew-it", ybi_rules())).expected_turn()
    print(
        f"  You Blew It, best play: {ybi:.1f} v the rules' 'an average turn is 350' "
        f"(ratio {ybi / 350:.2f}); Zilch best play {ZILCH} (Busche; three pairs, 4-6 of a kind "
        f"and more score there, so it is richer; ratio {ybi / ZILCH:.2f})"
    )

    finish = solve(finish_spec(bolo_rules()))
    chances = ", ".join(
        f"{need}: {100 * finish.roll_value(finish.spec.goal - need, 5):.1f} %"
        for need in (350, 650, 1000, 2000, 5000)
    )
    print(f"  Bolo, P(reaching a need in one fresh turn, finishing policy): {chances}")
    for goal in (350, 700):
        chance = solve(FarkleSpec("you-blew-it", you_blew_it.table(), goal=goal)).roll_value(0, 6)
        print(
            f"  You Blew It, best P(banking >= {goal} in one turn): {100 * chance:.1f} % "
            "(RULES 1.4)"
        )

    print("\nHint lookup (median of 2000 calls)")
    policy = solve(spec_for("you-blew-it", ybi_rules()))
    decide = TurnState("decide", 450, 3, may_stop=True)
    keep = TurnState("keep", 300, 5, roll=(1, 1, 5, 2, 3))
    for label, fn in [
        ("turn_hint, roll or bank", lambda: turn_hint(policy, decide)),
        ("turn_hint, best keep of 5 dice", lambda: turn_hint(policy, keep)),
    ]:
        print(f"  {label:44s} {1000 * median_s(fn, 2000):.3f} ms")
    ys = you_blew_it.GAME.new(teams={"A": ["Ann", "Al"], "B": ["Bob"]})
    ys = you_blew_it.GAME.apply(ys, Roll((1, 1, 5, 2, 3, 4)))
    bs = bolo.GAME.new(players=["Ann", "Bob"])
    bs = bolo.GAME.apply(bs, Roll((1, 5, 5, 2, 3)))
    bjson = bolo.GAME.state_to_json(bs)
    sponsor = bar_dice.GAME.apply(bar_dice.GAME.new(players=["Ann", "Bob"]), Lineup(("Ann", "Bob")))
    sponsor = bar_dice.GAME.apply(sponsor, Roll((1, 6, 6, 3, 4)))
    hint("bar-dice", sponsor)
    for label, fn in [
        ("hint(you-blew-it, state) keep phase", lambda: hint("you-blew-it", ys)),
        ("hint(bolo, state) keep phase", lambda: hint("bolo", bs)),
        ("hint(bolo, state JSON) keep phase", lambda: hint("bolo", bjson)),
        ("hint(bar-dice, state) after a throw (warm)", lambda: hint("bar-dice", sponsor)),
    ]:
        print(f"  {label:44s} {1000 * median_s(fn, 2000):.3f} ms")
    coach_bar_dice.forget()
    t0 = time.perf_counter()
    hint("bar-dice", sponsor)
    print(
        f"  {'hint(bar-dice) cold (solves the go)':44s} {1000 * (time.perf_counter() - t0):.1f} ms"
    )

    print(f"\nSolver v engine: {args.turns} turns following hint(), seeded dice")
    checks: list[tuple[str, you_blew_it.HouseRules | bolo.HouseRules, FarkleSpec]] = [
        ("you-blew-it", ybi_rules(), spec_for("you-blew-it", ybi_rules())),
        ("bolo", bolo_rules(), spec_for("bolo", bolo_rules(), minimum=350)),
    ]
    for game_name, rules, policy_spec in checks:
        mean, se = simulate(game_name, rules, args.turns, seed=1)
        solved = solve(policy_spec).expected_turn()
        z = (mean - solved) / se
        print(
            f"  {game_name:12s} simulated {mean:7.1f} ± {se:5.1f}  solved {solved:7.1f}  "
            f"z = {z:+.2f}"
        )


if __name__ == "__main__":
    main()
