"""Bar Dice (RULES.md 3): hand values, the odds, score reports and the named house rules."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from math import factorial

import pytest

from scoring.bar_dice import GAME
from scoring.bar_dice.hand import hand_of, hand_value, pace_text, result_key, value_words
from scoring.bar_dice.odds import flop_counts, p_round_resets
from scoring.errors import RulesError
from scoring.games import find
from scoring.rules import describe_rules

MULTISETS = list(itertools.combinations_with_replacement(range(1, 7), 5))


# -- hand values ------------------------------------------------------------------------------


def oracle(dice: Sequence[int]) -> tuple[int, int] | None:
    """Brute force: try every face for every ace, keep the best (count, face) (D-4, D3)."""
    if 1 not in dice:
        return None
    best: tuple[int, int] | None = None
    aces = dice.count(1)
    for faces in itertools.product(range(2, 7), repeat=aces):
        hand = [d for d in dice if d != 1] + list(faces)
        for face in range(2, 7):
            cand = (hand.count(face), face)
            best = cand if best is None or cand > best else best
    return best


@pytest.mark.parametrize(
    ("dice", "value"),
    [
        ((1, 2, 2, 2, 5), 42),
        ((1, 6, 6, 3, 4), 36),
        ((2, 2, 2, 2, 3), None),
        ((1, 1, 1, 1, 1), 56),
        ((1, 1, 2, 2, 6), 42),
        ((1, 1, 6, 6, 6), 56),
        ((1, 2, 3, 4, 5), 25),
        # ActuallyDC/bar-dice vectors (RULES.md 6d)
        ((1, 1, 3, 5, 6), 36),
        ((1, 1, 1, 5, 6), 46),
        ((1, 1, 1, 1, 2), 52),
    ],
)
def test_rules_self_test_values(dice: tuple[int, ...], value: int | None) -> None:
    assert hand_value(dice) == value


def test_every_multiset_matches_the_brute_force_reading() -> None:
    assert len(MULTISETS) == 252
    for dice in MULTISETS:
        hand, want = hand_of(dice), oracle(dice)
        if want is None:
            assert hand is None, dice
        else:
            assert hand is not None
            if dice != (1, 1, 1, 1, 1):
                assert (hand.count, hand.face) == want, dice
            assert hand.value == hand.count * 10 + hand.face


def test_values_compare_like_the_rules_for_every_pair_of_multisets() -> None:
    """Higher count first, then higher face; nothing is below every counting hand; a natural
    and a wild hand of the same count and face are equal (D3, D4)."""
    keys = {d: oracle(d) for d in MULTISETS}
    keys[(1, 1, 1, 1, 1)] = (5, 6)  # D2: five aces are 56
    values = {d: hand_value(d) for d in MULTISETS}
    for a, b in itertools.product(MULTISETS, repeat=2):
        ka, kb = keys[a], keys[b]
        va, vb = values[a], values[b]
        ra = (0, 0) if ka is None else (1, *ka)
        rb = (0, 0) if kb is None else (1, *kb)
        sa = -1 if va is None else va
        sb = -1 if vb is None else vb
        assert (ra > rb) == (sa > sb), (a, b)
        assert (ra == rb) == (sa == sb), (a, b)


def test_flop_distribution_per_7776_and_the_figures_of_rules_3_3() -> None:
    weight = {d: 120 // prod_fact(d) for d in MULTISETS}
    counts = Counter[int | None]()
    for d in MULTISETS:
        counts[hand_value(d)] += weight[d]
    assert sum(counts.values()) == 7776
    want = {None: 3125, 25: 120, 26: 480, 32: 360, 33: 390, 34: 480, 35: 630, 36: 840}
    want |= {42: 200, 43: 220, 44: 240, 45: 260, 46: 280, 56: 31}
    want |= dict.fromkeys((52, 53, 54, 55), 30)
    assert dict(counts) == want
    assert flop_counts() == want
    assert round(1 - counts[None] / 7776, 4) == 0.5981
    assert round(sum(n for v, n in counts.items() if v and v >= 42) / 7776, 3) == 0.174
    assert min(v for v in counts if v is not None) == 25


def prod_fact(d: tuple[int, ...]) -> int:
    out = 1
    for n in Counter(d).values():
        out *= factorial(n)
    return out


@pytest.mark.parametrize(
    ("players", "any_counting", "top_only"),
    [(3, 0.102, 0.072), (4, 0.190, 0.102), (5, 0.293, 0.124), (6, 0.400, 0.141), (8, 0.603, 0.163)],
)
def test_reset_odds_table_of_rules_3_3(players: int, any_counting: float, top_only: float) -> None:
    assert round(p_round_resets(players), 3) == any_counting
    assert round(p_round_resets(players, "top_only"), 3) == top_only


def test_rules_3_3_self_test_sentences() -> None:
    assert result_key(43, 1) > result_key(43, 2)  # 43 in one beats 43 in two
    assert result_key(43, 2) == result_key(43, 2)  # 43 in two v 43 in two: a roll-off
    assert result_key(43, 1, fewer_rolls_wins_tie=False) == result_key(
        43, 2, fewer_rolls_wins_tie=False
    )
    assert result_key(25, 3) > result_key(None, 1)  # any counting hand beats nothing
    assert result_key(None, 1) > result_key(None, 3)  # D8/D12: nothing in one beats it in three
    assert result_key(None, 1, nothing_in_fewer_rolls_wins=False) == result_key(
        None, 3, nothing_in_fewer_rolls_wins=False
    )
    assert result_key(None, 1, fewer_rolls_wins_tie=False) == result_key(
        None, 3, fewer_rolls_wins_tie=False
    )
    assert result_key(44, 3) > result_key(43, 1)


def test_house_rules_for_values() -> None:
    assert hand_value((2, 2, 3, 3, 4), ace_required=False) == 23
    assert hand_value((2, 2, 2, 2, 3), ace_required=False) == 42
    assert hand_value((1, 1, 1, 1, 1), five_aces_value=51) == 51
    assert hand_value((1, 1, 1, 1, 1), five_aces_value=60) == 60
    assert hand_value((6, 6, 6, 6, 1), five_aces_value=60) == 56
    assert value_words(42) == "forty two"
    assert value_words(None) == "nothing"
    assert pace_text(43, 2) == "43 in two"
    report = GAME.score_report((1, 1, 1, 1, 1), {"bardice.five_aces_value": 60})
    assert report == {"dice": [1] * 5, "counts": True, "count": 5, "face": 1, "value": 60}


def test_score_report_exact_shape() -> None:
    assert GAME.score_report((1, 2, 2, 2, 5)) == {
        "dice": [1, 2, 2, 2, 5],
        "counts": True,
        "count": 4,
        "face": 2,
        "value": 42,
    }
    nothing = GAME.score_report((2, 2, 2, 2, 3))
    assert nothing == {
        "dice": [2, 2, 2, 2, 3],
        "counts": False,
        "count": None,
        "face": None,
        "value": None,
    }
    assert "nothing" in GAME.describe_report(nothing)
    assert "too lucky" in GAME.describe_report(GAME.score_report((1, 1, 1, 1, 1)))
    with pytest.raises(ValueError, match="C3"):
        GAME.score_report((1, 2, 3))
    with pytest.raises(ValueError, match="no bid"):
        GAME.score_report((1, 2, 2, 2, 5), bid=(4, 6))


def test_house_rules_are_all_named_with_defaults() -> None:
    names = {r["name"]: r for r in describe_rules(GAME.rules_type, "bardice")}
    for option in (
        "order_ties",
        "five_aces_value",
        "ace_required",
        "all_nothing",
        "one_tie_all_tie",
        "hammer_next",
        "fewer_rolls_wins_tie",
        "nothing_in_fewer_rolls_wins",
        "rolloff_first",
        "first_farm_needs_ace",
        "too_lucky",
        "cocked_reroll_counts",
        "dropped_die",
        "all_day_elimination",
        "best_of",
        "cocked_dice",
    ):
        assert names[f"bardice.{option}"]["help"]
    assert names["bardice.one_tie_all_tie"]["default"] == "any_counting"
    with pytest.raises(RulesError):
        GAME.new(players=["A", "B"], rules={"bardice.best_of": 4})
    with pytest.raises(RulesError):
        GAME.new(players=["A", "B"], rules={"no_such_rule": True})


def test_bad_lineups() -> None:
    with pytest.raises(ValueError, match="2 to"):
        GAME.new(players=["Solo"])
    with pytest.raises(ValueError, match="distinct"):
        GAME.new(players=["Ann", "Ann"])
    with pytest.raises(ValueError, match="teams"):
        GAME.new(teams={"A": ["x"], "B": ["y"]})
    assert find("bar-dice") is GAME
