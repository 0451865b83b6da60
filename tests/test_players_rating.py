"""The coach's rating of a turn (issue 36) checked by an independent Monte Carlo: random
dice thrown here, the turn played out here, the averages taken here. Only the choices
*after* the rated decision follow the coach's best play (the yardstick the rating uses);
what a choice is worth is never read from the coach in the check.

- Points given away by a hand-made decision equal the simulated average of the best choice
  minus that of the choice made, within statistical error.
- Luck averages 0 over turns played by a careless random player (it is points above what
  the decisions made were expected to give), and nothing is ever given away below 0.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

import pytest

from scoring.coach.farkle import spec_for
from scoring.coach.solver import Policy, solve
from scoring.farkle import bolo
from scoring.farkle.combos import KeepOption, keeps
from scoring.farkle.turn import Step
from server.players.rating import rate_turn

RULES = bolo.HouseRules(yahtzee_clause=False)
DICE = 5
SIMS = 6000


def policy(minimum: int) -> Policy:
    return solve(spec_for("bolo", RULES, minimum=minimum))


def best_keep(p: Policy, roll: list[int], at_risk: int) -> KeepOption:
    return p.keep_values(roll, at_risk)[0][0]


def play_on(p: Policy, at_risk: int, n: int, rng: random.Random) -> float:
    """Roll ``n`` dice with ``at_risk`` points and play on as the coach would: the turn's
    bank (what it is worth under the board's minimum), 0 on a BOLO."""
    spec = p.spec
    while True:
        roll = sorted(rng.randint(1, 6) for _ in range(n))
        if not keeps(roll, spec.table):
            return 0.0
        option = best_keep(p, roll, at_risk)
        at_risk += option.points
        n = n - len(option.keep) or DICE  # hot dice: all five again, no banking
        stop = option.may_stop and len(option.keep) < len(roll)
        bank = spec.bank(at_risk) if stop else None
        if bank is not None and bank >= p.roll_value(at_risk, n):
            return bank


def mean_and_error(draw: Callable[[random.Random], float], seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    values = [draw(rng) for _ in range(SIMS)]
    return statistics.fmean(values), statistics.stdev(values) / SIMS**0.5


# (board minimum, roll, kept, banked after it): decisions of hand-made games
DECISIONS = [
    (650, (2, 3, 6, 6, 6), (6, 6, 6), True),  # 600 on the entry minimum, banked: passes
    (350, (1, 2, 3, 4, 6), (1,), True),  # 100, banked below the minimum: nothing
    (350, (1, 5, 2, 3, 6), (1, 5), False),  # 150 and roll 3 when 1 and 4 dice is better
]


@pytest.mark.slow
@pytest.mark.parametrize(("minimum", "roll", "kept", "banked"), DECISIONS)
def test_points_given_away_match_a_monte_carlo_of_both_choices(
    minimum: int, roll: tuple[int, ...], kept: tuple[int, ...], banked: bool
) -> None:
    p = policy(minimum)
    option = next(o for o in keeps(roll, p.spec.table) if o.keep == kept)
    step = Step(roll, kept, option.points, option.combos)
    rating = rate_turn(p, [step], banked=banked)
    assert rating is not None
    assert rating.decisions == 1
    cost = rating.given_away

    def chosen(rng: random.Random) -> float:
        if banked:
            return float(p.spec.bank(option.points) or 0.0)
        return play_on(p, option.points, DICE - len(kept), rng)

    best = best_keep(p, list(roll), 0)

    def best_play(rng: random.Random) -> float:
        left = DICE - len(best.keep) or DICE
        bank = p.spec.bank(best.points) if best.may_stop and len(best.keep) < DICE else None
        roll_on = play_on(p, best.points, left, rng)
        # the best follow-up of the best keep, judged by simulation too: bank if it pays
        return roll_on if bank is None or not bank_pays else bank

    bank_value = p.spec.bank(best.points) if best.may_stop else None
    rolled, _ = mean_and_error(
        lambda rng: play_on(p, best.points, DICE - len(best.keep) or DICE, rng), 7
    )
    bank_pays = bank_value is not None and bank_value >= rolled
    m_best, e_best = mean_and_error(best_play, 1)
    m_chosen, e_chosen = mean_and_error(chosen, 2)
    simulated = m_best - m_chosen
    error = (e_best**2 + e_chosen**2) ** 0.5
    assert cost > 20, "a hand-made mistake the coach must see"
    assert abs(simulated - cost) <= 4 * error + 5, (cost, simulated, error)
    assert rating.costly
    assert rating.costly[0].text.startswith(f"kept {' '.join(map(str, kept))}")


def random_turn(p: Policy, rng: random.Random) -> tuple[list[Step], bool]:
    """A turn of a careless player: any legal keep, then bank (when allowed) by a coin."""
    steps: list[Step] = []
    n = DICE
    while True:
        roll = tuple(sorted(rng.randint(1, 6) for _ in range(n)))
        options = keeps(roll, p.spec.table)
        if not options:
            return steps, False
        option = rng.choice(options)
        steps.append(Step(roll, option.keep, option.points, option.combos))
        hot = len(option.keep) == n
        n = DICE if hot else n - len(option.keep)
        if option.may_stop and not hot and rng.random() < 0.4:
            return steps, True


@pytest.mark.slow
def test_luck_averages_zero_and_nothing_is_given_away_below_zero() -> None:
    p = policy(350)
    rng = random.Random(36)
    lucks, given = [], []
    for _ in range(4000):
        steps, banked = random_turn(p, rng)
        rating = rate_turn(p, steps, banked=banked)
        assert rating is not None
        assert rating.given_away >= 0
        assert all(d.cost >= 0 for d in rating.costly)
        lucks.append(rating.luck)
        given.append(rating.given_away)
    error = statistics.stdev(lucks) / len(lucks) ** 0.5
    assert abs(statistics.fmean(lucks)) <= 4 * error, (statistics.fmean(lucks), error)
    assert statistics.fmean(given) > 50  # a careless player gives a lot away


def test_the_best_play_gives_nothing_away() -> None:
    p = policy(350)
    roll = (1, 1, 1, 2, 3)
    best = best_keep(p, list(roll), 0)
    bank = p.spec.bank(best.points)
    banks = bank is not None and bank >= p.roll_value(best.points, DICE - len(best.keep))
    rating = rate_turn(p, [Step(roll, best.keep, best.points, best.combos)], banked=banks)
    assert rating is not None
    assert rating.given_away == 0
    assert rating.costly == ()
