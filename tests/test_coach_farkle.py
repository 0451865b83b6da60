"""The Farkle-family coach: exact roll odds, the solved turn policy, hints and the disk cache."""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from scoring.actions import Action, Bank, Keep, Reroll, Roll
from scoring.coach import hint
from scoring.coach.farkle import (
    TurnState,
    finish_spec,
    spec_for,
    standard_specs,
    turn_hint,
)
from scoring.coach.solver import (
    STEP,
    FarkleSpec,
    Policy,
    roll_stats,
    solve,
    successor,
)
from scoring.coach.solver_cache import load, path_for, save, warm
from scoring.farkle import bolo, you_blew_it
from scoring.farkle.combos import ComboTable, keeps, score_roll

YBI = you_blew_it.table()
BOLO = bolo.table()
YBI_SPEC = FarkleSpec("you-blew-it", YBI)


def bolo_spec(minimum: int = 350, **rules: object) -> FarkleSpec:
    return spec_for("bolo", bolo.GAME.parse_rules(rules), minimum=minimum)


# -- exact single-roll odds ---------------------------------------------------------------------

#: RULES.md 1.4 (You Blew It) and 2.4 (Bolo): blow outcomes of 6**n, and rounded figures.
YBI_TABLE = {1: 4, 2: 16, 3: 60, 4: 204, 5: 600, 6: 1440}
YBI_ALL = {1: 0.3333, 2: 0.1111, 3: 0.0556, 4: 0.0370, 5: 0.0247, 6: 0.0332}
YBI_MEAN = {1: 25.0, 2: 50.0, 3: 86.8, 4: 141.3, 5: 215.5, 6: 329.7}
BOLO_BLOW = {1: 0.6667, 2: 0.4444, 3: 0.2778, 4: 0.1574, 5: 0.0772}
BOLO_ALL = {1: 0.3333, 2: 0.1111, 3: 0.0556, 4: 0.0401, 5: 0.0869}
BOLO_MEAN = {1: 25.0, 2: 50.0, 3: 86.8, 4: 143.5, 5: 259.4}


@pytest.mark.parametrize(("name", "table"), [("ybi", YBI), ("bolo", BOLO)])
def test_p_blow_equals_brute_force_enumeration_of_every_ordered_outcome(
    name: str, table: ComboTable
) -> None:
    for n in range(1, table.dice + 1):
        outcomes = list(itertools.product(range(1, 7), repeat=n))
        blown = sum(score_roll(d, table).blown for d in outcomes)
        best = sum(score_roll(d, table).points for d in outcomes)
        stats = roll_stats(n, table)
        assert stats.blow_outcomes == blown, (name, n)
        assert stats.p_blow == Fraction(blown, 6**n)
        assert stats.mean_points == Fraction(best, 6**n)


def test_you_blew_it_figures_match_rules_1_4() -> None:
    for n, blown in YBI_TABLE.items():
        stats = roll_stats(n, YBI)
        assert stats.blow_outcomes == blown
        assert round(float(stats.p_all_score), 4) == YBI_ALL[n]
        assert round(float(stats.mean_points), 1) == YBI_MEAN[n]
    # Three pairs score nothing in YBI: 360 of the 1440 six-dice blows are three pairs.
    assert score_roll((2, 2, 3, 3, 4, 4), YBI).blown


def test_bolo_figures_match_rules_2_4() -> None:
    for n in range(1, 6):
        stats = roll_stats(n, BOLO)
        assert round(float(stats.p_blow), 4) == BOLO_BLOW[n]
        assert round(float(stats.p_all_score), 4) == BOLO_ALL[n]
        assert round(float(stats.mean_points), 1) == BOLO_MEAN[n]


def test_roll_stats_refuses_impossible_rolls() -> None:
    with pytest.raises(ValueError, match="1 to 5"):
        roll_stats(6, BOLO)


# -- the solved policy ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ybi() -> Policy:
    return solve(YBI_SPEC)


def test_policy_satisfies_the_bellman_equation_at_hand_picked_states(ybi: Policy) -> None:
    """Recompute a few roll values from scratch with the engine's keeps: the sweep agrees."""
    for at_risk, n in [(0, 6), (300, 3), (1000, 1), (450, 2), (2500, 5), (9950, 4)]:
        total = 0.0
        for dice in itertools.combinations_with_replacement(range(1, 7), n):
            ways = math.factorial(n) // math.prod(math.factorial(dice.count(f)) for f in set(dice))
            options = keeps(dice, YBI)
            if options:
                total += ways * max(
                    ybi.state_value(at_risk + o.points, successor(YBI_SPEC, n, o)) for o in options
                )
        assert total / 6**n == pytest.approx(ybi.roll_value(at_risk, n), rel=1e-12)


def test_start_of_turn_value_and_the_rules_average(ybi: Policy) -> None:
    # Best play is worth ~467 a turn; RULES YBI-7's "an average turn is 350" is a table's
    # rule of thumb for ordinary play, below the optimum but in the same range.
    assert ybi.expected_turn() == pytest.approx(467.43, abs=0.01)
    assert 350 < ybi.expected_turn() < 620.855  # Zilch (three pairs etc. score) is richer


def test_bank_with_one_die_and_a_thousand(ybi: Policy) -> None:
    h = turn_hint(ybi, TurnState("decide", 1000, 1, may_stop=True))
    assert h["advice"] == "bank"
    assert h["bank_value"] == 1000
    assert h["p_blow"] == pytest.approx(2 / 3, abs=1e-4)
    # Rolling one die: 2/3 lose everything, 1/3 score and must roll all six again.
    assert h["roll_value"] < 1000 * 0.5


def test_roll_on_with_six_hot_dice(ybi: Policy) -> None:
    h = turn_hint(ybi, TurnState("roll", 1000, 6))
    assert h["advice"] == "roll"
    assert h["bank_value"] is None
    # Rolling six dice beats banking even if it were allowed: only 3.1 % blow.
    assert ybi.roll_value(1000, 6) > 1000
    assert ybi.roll_value(3000, 6) > 3000


def test_small_turns_roll_on_big_ones_bank(ybi: Policy) -> None:
    assert turn_hint(ybi, TurnState("decide", 100, 5, may_stop=True))["advice"] == "roll"
    assert turn_hint(ybi, TurnState("decide", 300, 1, may_stop=True))["advice"] == "bank"
    thresholds = [ybi.bank_threshold(n) for n in range(1, 6)]
    found = [t for t in thresholds if t is not None]
    assert found == thresholds  # a threshold for every number of dice
    assert found == sorted(found)  # more dice: play on longer


def test_the_cap_is_proven_and_the_policy_banks_above_it(ybi: Policy) -> None:
    assert ybi.bank_always_above <= ybi.cap
    for n in range(1, 6):
        threshold = ybi.bank_threshold(n)
        assert threshold is not None
        assert threshold <= ybi.bank_always_above
        for t in range(threshold, ybi.cap + STEP, 500):
            assert ybi.value(t, n, True) == t
    # Beyond the grid the affine tail continues the grid smoothly.
    edge = ybi.roll_value(ybi.cap, 6)
    assert ybi.roll_value(ybi.cap + STEP, 6) == pytest.approx(edge + STEP * 0.97, rel=0.01)


def test_teammates_points_at_risk_make_the_turn_more_careful(ybi: Policy) -> None:
    # With 800 of the team's points at risk the same state is worth less and banks earlier.
    alone = turn_hint(ybi, TurnState("decide", 300, 3, may_stop=True))
    team = turn_hint(ybi, TurnState("decide", 300, 3, may_stop=True, teammates=800))
    assert alone["advice"] == "roll"
    assert team["advice"] == "bank"
    assert team["expected_turn"] < alone["expected_turn"]
    blown = turn_hint(ybi, TurnState("blown", 300, 3, teammates=800))
    assert "800" in blown["text"]


def test_points_are_on_the_fifty_point_grid(ybi: Policy) -> None:
    with pytest.raises(ValueError, match="multiple of 50"):
        ybi.roll_value(125, 3)


def test_bolo_minimum_take_changes_the_advice() -> None:
    entry = solve(bolo_spec(650))
    onboard = solve(bolo_spec(350))
    state = TurnState("decide", 400, 2, may_stop=True)
    assert turn_hint(onboard, state)["advice"] == "bank"
    under = turn_hint(entry, state)
    assert under["advice"] == "roll"  # 400 is not tallied before the board: nothing to keep
    assert under["bank_value"] == 0
    assert entry.expected_turn() < onboard.expected_turn()
    strict = solve(bolo_spec(650, below_min_may_pass=False))
    assert turn_hint(strict, state)["bank_value"] is None


def test_bolo_yahtzee_clause_adds_value_to_a_kept_triple() -> None:
    with_clause = solve(bolo_spec(350))
    without = solve(bolo_spec(350, yahtzee_clause=False))
    assert with_clause.roll_value(400, 2, True) == pytest.approx(
        with_clause.roll_value(400, 2) * (1 + 1 / 36)
    )
    assert without.roll_value(400, 2, True) == without.roll_value(400, 2)


def test_standard_specs_cover_every_board_minimum() -> None:
    specs = standard_specs(bolo.HouseRules())
    assert sorted(s.minimum for s in specs if not s.goal) == [350, 650, 750, 1000]
    assert [s.goal for s in specs if s.goal] == [10000]  # the finishing policy
    assert [s.minimum for s in standard_specs(you_blew_it.HouseRules(on_board_min=700))] == [
        0,
        700,
    ]


# -- hints on live games are legal actions -------------------------------------------------------


def _action_for(h: dict[str, object]) -> Action | None:
    if h["advice"] == "keep":
        keep = h["keep"]
        assert isinstance(keep, list)
        return Keep(tuple(keep))
    if h["advice"] == "bank":
        return Bank()
    return None


@pytest.mark.parametrize("game_name", ["you-blew-it", "bolo"])
def test_following_the_hints_through_random_games_only_takes_legal_actions(
    game_name: str,
) -> None:
    rng = random.Random(7)
    game: Any = you_blew_it.GAME if game_name == "you-blew-it" else bolo.GAME
    full = 6 if game_name == "you-blew-it" else 5
    if game_name == "you-blew-it":
        state: Any = you_blew_it.GAME.new(teams={"A": ["Ann", "Al"], "B": ["Bob"]})
    else:
        state = bolo.GAME.new(players=["Ann", "Bob"])
    followed = 0
    for _ in range(600):
        if game.outcome(state) is not None:
            break
        h = hint(game_name, state)
        if rng.random() < 0.5:  # and through the JSON form the scoreboard holds
            assert hint(game_name, json.dumps(game.state_to_json(state))) == h
        legal = game.legal_actions(state)
        action = _action_for(h)
        if action is not None:
            assert action in legal, (h, legal)
            followed += 1
        elif h["advice"] == "roll" and h["phase"] == "decide":
            assert h["roll_value"] >= (h["bank_value"] or 0) - 1e-9
        if action is None:
            turn = state.turn
            n = turn.dice_wanted(full) if turn.phase != "blown" else 1
            action = Roll(tuple(rng.randint(1, 6) for _ in range(n)))
            if turn.phase == "blown":
                action = Roll(tuple(rng.randint(1, 6) for _ in range(full)))
        state = game.apply(state, action)
    assert followed > 50


def test_fresh_turn_hint_from_rules_only() -> None:
    h = hint("bolo", None, {"bolo.entry_min": 1000})
    assert h["minimum"] == 1000
    assert h["advice"] == "roll"
    for key in ("p_blow", "expected_turn", "roll_value", "bank_value", "advice"):
        assert key in h


def test_hint_rejects_bad_states() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        hint("yahtzee", None)
    with pytest.raises(ValueError, match="not JSON"):
        hint("bolo", "{")
    with pytest.raises(ValueError, match=r"(?i)not a bolo state"):
        hint("bolo", {"game": "you-blew-it"})
    with pytest.raises(ValueError, match="bad bolo state"):
        hint("bolo", {"game": "bolo"})


# -- the disk cache -------------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path: Path, ybi: Policy) -> None:
    path = save(tmp_path, ybi)
    assert path == path_for(tmp_path, YBI_SPEC)
    loaded = load(tmp_path, YBI_SPEC)
    assert loaded is not None
    assert loaded.roll == ybi.roll
    assert loaded.roll_value(450, 3) == ybi.roll_value(450, 3)


def test_a_policy_for_other_rules_or_a_damaged_file_is_never_used(
    tmp_path: Path, ybi: Policy
) -> None:
    other = spec_for("you-blew-it", you_blew_it.HouseRules(combo_must_be_kept=False))
    save(tmp_path, ybi)
    path_for(tmp_path, YBI_SPEC).rename(path_for(tmp_path, other))
    assert load(tmp_path, other) is None
    path_for(tmp_path, YBI_SPEC).write_text('{"version": 1, "spec"')
    assert load(tmp_path, YBI_SPEC) is None
    assert load(tmp_path / "missing", YBI_SPEC) is None


def test_warm_solves_what_is_missing_and_saves_it(tmp_path: Path) -> None:
    specs = standard_specs(bolo.HouseRules())
    policies = warm(tmp_path, specs)
    assert [p.spec for p in policies] == specs
    assert len(list(tmp_path.glob("coach-bolo-*.json"))) == 5
    assert warm(tmp_path, specs)[0].roll == policies[0].roll


def test_bolo_yahtzee_clause_hint_is_the_legal_reroll() -> None:
    s = bolo.GAME.new(players=["Ann", "Bob"])
    for action in (Roll((4, 4, 4, 2, 3)), Keep((4, 4, 4)), Roll((4, 4))):
        s = bolo.GAME.apply(s, action)
    h = hint("bolo", s)
    assert h["advice"] == "reroll"
    assert h["p_blow"] == pytest.approx(16 / 36, abs=1e-4)
    assert Reroll((4, 4), "yahtzee") in bolo.GAME.legal_actions(s)


def test_a_blow_that_wipes_a_teammate_is_shown_from_the_pending_json() -> None:
    game = you_blew_it.GAME
    s = game.new(teams={"A": ["Ann", "Al"], "B": ["Bob"]})
    for action in (Roll((1, 1, 1, 2, 3, 4)), Keep((1, 1, 1)), Bank(), Roll((2, 2, 3, 3, 4, 6))):
        s = game.apply(s, action)
    h = hint("you-blew-it", game.state_to_json(s))
    assert h["phase"] == "blown"
    assert h["player"] == "Al"
    assert "1000 of the team's" in h["text"]


def test_player_scope_on_board_minimum_keeps_teammates_points() -> None:
    rules = {"ybi.on_board_min": 350, "ybi.on_board_scope": "player"}
    game = you_blew_it.GAME
    s = game.new(teams={"A": ["Ann", "Al"], "B": ["Bob"]}, rules=rules)
    for action in (Roll((1, 1, 1, 2, 3, 4)), Keep((1, 1, 1)), Bank(), Roll((5, 2, 2, 3, 4, 6))):
        s = game.apply(s, action)
    s = game.apply(s, Keep((5,)))
    h = hint("you-blew-it", s)  # Al: 50 points, not on the board, Ann's 1000 at risk
    assert h["teammates_at_risk"] == 1000
    assert h["minimum"] == 350
    assert h["bank_value"] == 0  # a short bank counts nothing but keeps Ann's points
    # 1050 at risk with five dice still rolls on (even without a minimum: bank from 2900),
    # and the minimum can only make the turn worth less than in the plain game.
    assert h["advice"] == "roll"
    assert h["roll_value"] <= solve(YBI_SPEC).roll_value(1050, 5) - 1000


def test_finishing_mode_matches_the_on_board_figures_of_rules_1_4() -> None:
    # RULES.md 1.4: best possible P(banking >= 350 in one turn) = 75.0 %, P(>= 700) = 38.6 %.
    for goal, p in ((350, 0.750), (700, 0.386)):
        alone = solve(FarkleSpec("you-blew-it", YBI, goal=goal))
        assert round(alone.roll_value(0, 6), 3) == p
        # One solve covers every need: the value depends only on the points still needed.
        shared = solve(FarkleSpec("you-blew-it", YBI, goal=10000))
        assert shared.roll_value(10000 - goal, 6) == pytest.approx(alone.roll_value(0, 6))


def test_bolo_endgame_banks_the_win_where_expected_points_would_roll() -> None:
    s = bolo.GAME.new(players=["Ann", "Bob"], rules={"bolo.target": 5000})
    s = replace(s, boards=(4650, 0), on_board=(True, False))  # 350 to win, minimum 350
    s = bolo.GAME.apply(s, Roll((2, 2, 2, 3, 3)))
    s = bolo.GAME.apply(s, Keep((2, 2, 2, 3, 3)))  # full house 500: all five again
    assert hint("bolo", s)["endgame"]["p_finish"] < 1
    s = bolo.GAME.apply(s, Roll((1, 2, 3, 4, 6)))
    h = hint("bolo", s)
    assert h["endgame"]["need"] == 350
    assert (h["advice"], h["keep"], h["then"]) == ("keep", [1], "bank")
    assert "wins the game" in h["text"]
    s = bolo.GAME.apply(s, Keep((1,)))
    h = hint("bolo", s)
    assert h["advice"] == "bank"
    assert h["endgame"]["p_finish"] == 1.0
    assert Bank() in bolo.GAME.legal_actions(s)
    # Expected points alone would roll four dice on with 600 (they bank from 950):
    on = solve(bolo_spec(350))
    assert turn_hint(on, TurnState("decide", 600, 4, may_stop=True))["advice"] == "roll"
    with_final_round = replace(s, rules=replace(s.rules, final_round=True))
    assert hint("bolo", with_final_round)["advice"] == "roll"  # others still get a turn


def test_bolo_endgame_chance_is_not_rounded_like_points() -> None:
    # 1000 to win from 9000: 17.8 % (a Monte Carlo of 20 000 engine turns gave 17.8 +- 0.5 %),
    # not the 20.0 % of a probability rounded to 0.1 like a points value.
    finish = solve(finish_spec(bolo.HouseRules()))
    s = bolo.GAME.new(players=["Ann", "Bob"])
    s = replace(s, boards=(9000, 0), on_board=(True, False))
    h = hint("bolo", s)
    assert h["endgame"]["p_finish"] == round(finish.roll_value(10000 - 1000, 5), 4)
    assert h["endgame"]["p_finish"] == pytest.approx(0.1784, abs=1e-4)
    assert "17.8 %" in h["text"]
    s = replace(s, boards=(7000, 0))  # 3000 to win: 0.6 %, not 0.0 %
    assert hint("bolo", s)["endgame"]["p_finish"] == pytest.approx(0.006, abs=5e-4)


def test_bolo_endgame_with_a_minimum_off_the_50_point_grid() -> None:
    # B10 minimums are "any numbers": needing 1001 is needing 1050 (points come in 50s).
    s = bolo.GAME.new(players=["Ann", "Bob"], rules={"bolo.take_min_9000": 1001})
    s = replace(s, boards=(9100, 0), on_board=(True, False))
    h = hint("bolo", s)
    finish = solve(finish_spec(s.rules))
    assert h["endgame"]["need"] == 1001
    assert h["endgame"]["p_finish"] == round(finish.roll_value(10000 - 1050, 5), 4)


def test_a_sloppy_reroll_is_coached_with_the_dice_left_standing() -> None:
    # YBI: 2 2 3 3 4 stand while the cocked 6 is thrown again: a 2 or a 3 makes a triple,
    # a 1 or a 5 scores, a 4 (three pairs) or a 6 blows: 2/6, not a fresh six dice's 3.1 %.
    s = you_blew_it.GAME.new(players=["Ann", "Bob"])
    s = you_blew_it.GAME.apply(s, Roll((2, 2, 3, 3, 4, 6)))
    s = you_blew_it.GAME.apply(s, Reroll((6,)))
    h = hint("you-blew-it", s)
    assert h["p_blow"] == pytest.approx(2 / 6, abs=1e-4)
    policy = solve(YBI_SPEC)
    value = sum(policy.keep_values((2, 2, 3, 3, 4, d), 0)[0][1] for d in (1, 2, 3, 5)) / 6
    assert h["roll_value"] == pytest.approx(value, abs=0.05)
    # Bolo: four 1s stand, one sloppy die: the roll cannot blow.
    b = bolo.GAME.apply(bolo.GAME.new(players=["Ann", "Bob"]), Roll((1, 1, 1, 1, 6)))
    b = bolo.GAME.apply(b, Reroll((6,)))
    h = hint("bolo", b)
    assert h["p_blow"] == 0.0
    assert h["roll_value"] > 2000


def test_bolo_order_roll_is_not_coached_as_a_turn() -> None:
    s = bolo.GAME.new(players=["Ann", "Bob"], rules={"bolo.start_order": "roll"})
    h = hint("bolo", s)
    assert (h["phase"], h["advice"]) == ("order", "none")
    assert "one die each" in h["text"]
