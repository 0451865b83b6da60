"""Bar Dice coach: exact chances to reach a hand within the rolls left, and farming advice."""

from __future__ import annotations

import pytest

from scoring.actions import Keep, Lineup, Roll, Stand
from scoring.bar_dice import GAME, BarDiceState
from scoring.bar_dice.odds import FLOPS, flop_counts
from scoring.bar_dice.rules import HouseRules
from scoring.coach import hint
from scoring.coach.bar_dice import MEAN, at_least, beat_pace, farm_choices, go_hint, p_reach


def sponsor() -> BarDiceState:
    """Two players, straight to the sponsor phase with Ann as the hammer."""
    return GAME.apply(GAME.new(players=["Ann", "Bob"]), Lineup(("Ann", "Bob")))


def test_any_counting_hand_in_three_rolls_from_scratch() -> None:
    # Only an ace is needed and every hand with one is at least 25: 1 - (5/6)^15.
    assert p_reach(0, rolls_left=3) == pytest.approx(1 - (5 / 6) ** 15, abs=1e-12)
    assert p_reach(25, rolls_left=3) == pytest.approx(p_reach(0, rolls_left=3), abs=1e-12)
    assert p_reach(26, rolls_left=3) < p_reach(25, rolls_left=3)


def test_one_roll_is_the_flop_distribution_of_rules_3_3() -> None:
    counts = flop_counts()
    for v in (25, 26, 36, 42, 46, 52, 56):
        expected = sum(n for w, n in counts.items() if w is not None and w >= v) / FLOPS
        assert p_reach(v, rolls_left=1) == pytest.approx(expected, abs=1e-12)
    assert p_reach(42, rolls_left=1) == pytest.approx(0.174, abs=5e-4)  # RULES: 17.4 %


def test_more_rolls_help_and_higher_targets_are_harder() -> None:
    for v in (36, 43, 52, 56):
        chances = [p_reach(v, rolls_left=k) for k in (1, 2, 3)]
        assert chances == sorted(chances)
        assert chances[0] < chances[2]
    assert p_reach(43, rolls_left=3) > p_reach(44, rolls_left=3) > p_reach(56, rolls_left=3)


def test_hand_worked_farmed_cases() -> None:
    # 1 6 6 6 farmed, one die left, two throws: a 6 or an ace makes five 6s (56).
    assert p_reach(56, rolls_left=2, farmed=(1, 6, 6, 6)) == pytest.approx(1 - (4 / 6) ** 2)
    # Five dice farmed: the hand is fixed (1 6 6 6 6 = 56).
    assert p_reach(56, rolls_left=0, farmed=(1, 6, 6, 6, 6)) == 1.0
    assert p_reach(52, rolls_left=1, farmed=(1, 2, 2, 2)) == pytest.approx(2 / 6)


def test_first_farm_needs_an_ace() -> None:
    choices = farm_choices((2, 6, 6, 6, 3), rolls_left=2, goal=at_least(43))
    assert {c.farm for c in choices if not c.stand} == {()}
    free = farm_choices(
        (2, 6, 6, 6, 3),
        rolls_left=2,
        goal=at_least(43),
        rules=HouseRules(first_farm_needs_ace=False),
    )
    assert free[0].farm == (6, 6, 6)


def test_best_farming_keeps_the_ace_and_the_matched_dice() -> None:
    h = go_hint(rolls_left=2, roll=(1, 6, 6, 3, 4), target=43)
    assert h["advice"] == "farm"
    assert h["farm"] == [1, 6, 6]
    assert h["p_goal"] >= h["p_beat"]
    stand = go_hint(rolls_left=2, roll=(1, 6, 6, 6, 2), target=36)
    assert stand["advice"] == "stand"
    assert stand["p_goal"] == 1.0


def test_hammer_hint_plays_for_the_mean_hand() -> None:
    h = go_hint(rolls_left=3)
    assert h["goal"] == "mean"
    assert 36 < h["mean_hand"] < 56
    assert MEAN.utility(None) == 0.0


def test_hints_in_a_sponsor_turn_are_legal_actions() -> None:
    s = GAME.apply(sponsor(), Roll((1, 6, 6, 3, 4)))
    h = hint("bar-dice", s)
    assert h["player"] == "Ann"
    assert h["advice"] == "farm"
    assert Keep(tuple(h["farm"])) in GAME.legal_actions(s)
    s = GAME.apply(s, Keep(tuple(h["farm"])))
    s = GAME.apply(s, Roll((2, 3)))
    s = GAME.apply(s, Stand())  # Ann: 36 in two
    bob = hint("bar-dice", GAME.state_to_json(s))
    assert bob["player"] == "Bob"
    assert bob["target"] == 36
    assert bob["rolls_left"] == 2
    assert bob["p_goal"] == pytest.approx(p_reach(36, rolls_left=2), abs=1e-4)
    s = GAME.apply(s, Roll((2, 2, 3, 4, 6)))
    after = hint("bar-dice", s)
    assert after["advice"] == "roll" or (
        after["advice"] == "farm" and Keep(tuple(after["farm"])) in GAME.legal_actions(s)
    )


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="5 dice"):
        go_hint(rolls_left=1, farmed=(1, 1, 1), roll=(2, 2, 2))
    with pytest.raises(ValueError, match="rolls left"):
        p_reach(30, rolls_left=4)


def test_playing_to_win_against_the_pace() -> None:
    goal = beat_pace(43, 2)
    assert goal.utility(43, rolls_left=1) == 1.0  # 43 in one beats 43 in two (D8)
    assert goal.utility(43, rolls_left=0) == 0.5  # 43 in two v 43 in two: roll-off
    assert goal.utility(44) == 1.0
    assert goal.utility(42, rolls_left=1) == 0.0
    assert beat_pace(43, 2, fewer_rolls_wins_tie=False).utility(43, rolls_left=1) == 0.5
    assert beat_pace(None, 3).utility(None) == 0.5  # nothing v nothing: roll-off
    # ... in as many rolls; in fewer, it wins (bardice.nothing_in_fewer_rolls_wins, the default)
    assert beat_pace(None, 3).utility(None, rolls_left=1) == 1.0
    off = beat_pace(None, 3, nothing_in_fewer_rolls_wins=False)
    assert off.utility(None, rolls_left=1) == 0.5
    assert beat_pace(None, 3).utility(25) == 1.0
    # Facing five 6s in one: only five 6s in one throw ties, and the roll-off is a coin flip.
    h = go_hint(rolls_left=1, target=56, pace_rolls=1)
    assert h["p_win"] == pytest.approx(31 / 7776 / 2, abs=1e-4)
    for roll in [(1, 6, 6, 3, 4), (2, 2, 3, 4, 5), (1, 1, 4, 4, 6)]:
        h = go_hint(rolls_left=1, roll=roll, target=43, pace_rolls=2)
        assert h["p_beat"] <= h["p_win"] <= h["p_goal"]


def test_the_opponent_in_a_sponsor_turn_plays_to_win() -> None:
    s = GAME.apply(sponsor(), Roll((1, 4, 4, 4, 2)))
    s = GAME.apply(s, Stand())  # Ann: 44 in one
    h = hint("bar-dice", s)
    assert h["player"] == "Bob"
    assert h["pace_rolls"] == 1
    assert h["p_win"] == pytest.approx(
        (p_reach(45, rolls_left=1) + (p_reach(44, rolls_left=1) - p_reach(45, rolls_left=1)) / 2),
        abs=1e-4,
    )


def elimination(rules: dict[str, object] | None = None) -> BarDiceState:
    s = GAME.new(players=["Ann", "Bob", "Cy"], rules=rules or {})
    return GAME.apply(s, Lineup(("Ann", "Bob", "Cy")))


def test_all_day_elimination_tops_the_best_hand_not_the_first() -> None:
    s = elimination({"bardice.all_day_elimination": True})
    for throw in ((2, 3, 4, 6, 6), (2, 3, 4, 6, 6), (1, 2, 3, 4, 6)):
        s = GAME.apply(s, Roll(throw))
    s = GAME.apply(s, Stand())  # Ann: 26 in three (Cy may take three rolls too)
    s = GAME.apply(s, Roll((1, 4, 4, 4, 2)))
    s = GAME.apply(s, Stand())  # Bob: 44 in one
    h = hint("bar-dice", s)
    assert (h["target"], h["pace_rolls"], h["rolls_left"]) == (44, 1, 3)
    assert h["p_goal"] == pytest.approx(p_reach(44, rolls_left=3), abs=1e-4)
    # 44 in two loses to 44 in one (D8): stand is worth nothing; 1 4 4 4 + a 4 or an ace wins.
    s = GAME.apply(s, Roll((2, 3, 4, 6, 6)))
    s = GAME.apply(s, Roll((1, 4, 4, 4, 2)))
    h = hint("bar-dice", s)
    stand = next(c for c in h["choices"] if c["stand"])
    assert stand["value"] == 0.0
    assert (h["advice"], h["farm"]) == ("farm", [1, 4, 4, 4])
    assert h["p_win"] == pytest.approx(1 / 3, abs=1e-4)
    assert beat_pace(44, 1, spare=2).utility(44, rolls_left=2) == 0.5  # 44 in one each


def test_an_elimination_flop_after_the_top_hand() -> None:
    # Five aces (56) flopped first: the next flop can only tie (a reset), never top it. A
    # reset re-rolls the round for all three (one tie all tie, the default): a third of it.
    h = hint("bar-dice", GAME.apply(elimination(), Roll((1, 1, 1, 1, 1))))
    assert h["target"] == 56
    assert h["p_beat"] == 0.0
    assert h["p_goal"] == pytest.approx(31 / FLOPS, abs=1e-4)
    assert h["p_win"] == pytest.approx(31 / FLOPS / 3, abs=1e-4)
    assert "fifty six" in h["text"]
    # Without one tie all tie the two roll off for it: half.
    off = GAME.apply(elimination({"bardice.one_tie_all_tie": "off"}), Roll((1, 1, 1, 1, 1)))
    assert hint("bar-dice", off)["p_win"] == pytest.approx(31 / FLOPS / 2, abs=1e-4)
