"""Farkle-family roll scoring: combination tables, published vectors, exact figures, and an
exhaustive pass over every multiset of 1-6 dice, plus Hypothesis properties."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from math import factorial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.farkle import bolo, you_blew_it
from scoring.farkle.combos import (
    ComboTable,
    best_points,
    counts_of,
    dice_of,
    keeps,
    partition,
    score_roll,
)

YBI = you_blew_it.table()
BOLO = bolo.table()


def multisets(n: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(range(1, 7), n))


def weight(roll: tuple[int, ...]) -> int:
    """How many of the 6^n ordered outcomes show this multiset."""
    w = factorial(len(roll))
    for c in Counter(roll).values():
        w //= factorial(c)
    return w


# -- combination tables ----------------------------------------------------------------------

YBI_COMBOS = [
    ((1,), 100),
    ((5,), 50),
    ((1, 1, 1), 1000),
    ((2, 2, 2), 200),
    ((3, 3, 3), 300),
    ((4, 4, 4), 400),
    ((5, 5, 5), 500),
    ((6, 6, 6), 600),
    ((1, 1, 1, 1), 1100),
    ((5, 5, 5, 5), 550),
    ((1, 1, 1, 1, 1), 1200),
    ((5, 5, 5, 5, 5), 600),
    ((1, 1, 1, 1, 1, 5), 1250),  # Harry's roll in the sample game
    ((1, 2, 3, 4, 5, 6), 1500),
    ((1, 1, 1, 1, 1, 1), 2000),  # Y5: two triples
    ((4, 4, 4, 4, 4, 4), 800),
    ((5, 5, 5, 2, 2, 2), 700),  # Stanley
    ((1, 4, 4, 4, 5, 5), 600),  # Tom (author's reply)
    ((4, 4, 4, 4), 400),  # Y3: the extra 4 is dead
    ((3, 3, 4, 4, 6, 6), 0),  # three pairs score nothing
    ((2, 2, 3, 3, 4, 4), 0),
]


@pytest.mark.parametrize(("dice", "points"), YBI_COMBOS)
def test_you_blew_it_combinations(dice: tuple[int, ...], points: int) -> None:
    assert best_points(dice, YBI) == points


BOLO_COMBOS = [
    ((5,), 50),
    ((1,), 100),
    ((1, 1, 1), 1000),
    ((2, 2, 2), 200),
    ((6, 6, 6), 600),
    ((4, 4, 4, 2, 2), 500),  # full house
    ((1, 2, 3, 4, 5), 1000),
    ((2, 3, 4, 5, 6), 1000),
    ((4, 4, 4, 4), 800),
    ((1, 1, 1, 1), 2000),
    ((5, 5, 5, 5), 1000),
    ((6, 6, 6, 6, 6), 5000),
    ((1, 1, 1, 1, 1), 10000),
    ((1, 1, 1, 5, 5), 1100),  # B-5: better than the full house
    ((5, 5, 5, 1, 1), 700),  # B7
    ((2, 2, 3, 3, 4), 0),  # B-12: the lowest BOLO
]


@pytest.mark.parametrize(("dice", "points"), BOLO_COMBOS)
def test_bolo_combinations(dice: tuple[int, ...], points: int) -> None:
    assert best_points(dice, BOLO) == points


def test_every_combo_of_each_table_scores_its_points_alone() -> None:
    for table in (YBI, BOLO):
        for combo in table.combos:
            found = partition(dice_of(combo.counts), table)
            assert found is not None
            assert found[0] >= combo.points, combo.name


# -- published vectors -----------------------------------------------------------------------

KOANS = [
    ((), 0),
    ((5,), 50),
    ((1,), 100),
    ((1, 5, 5, 1), 300),
    ((2, 3, 4, 6), 0),
    ((1, 1, 1), 1000),
    ((2, 2, 2), 200),
    ((3, 3, 3), 300),
    ((4, 4, 4), 400),
    ((5, 5, 5), 500),
    ((6, 6, 6), 600),
    ((2, 5, 2, 2, 3), 250),
    ((5, 5, 5, 5), 550),
    ((1, 1, 1, 1), 1100),
    ((1, 1, 1, 1, 1), 1200),
    ((1, 1, 1, 5, 1), 1150),
    ((2, 3, 4, 6, 2), 0),
    ((3, 4, 5, 3, 3), 350),
    ((1, 5, 1, 2, 4), 250),
    ((1, 2, 2, 2), 300),
    ((1, 5, 2, 2, 2), 350),
    ((5, 1, 3, 4, 1), 250),
    ((1, 1, 1, 3, 1), 1100),
    ((2, 4, 4, 5, 4), 450),
]


@pytest.mark.parametrize(("dice", "points"), KOANS)
def test_greed_koans_vectors_pass_through_the_ybi_scorer(
    dice: tuple[int, ...], points: int
) -> None:
    assert best_points(dice, YBI) == points


def test_zonk_regression_four_threes_and_a_pair() -> None:
    # temporalio/samples-php #55 used (4,3,3,3,4,3); in YBI pairs are dead: three 3s, one dead 3
    assert best_points((4, 3, 3, 3, 4, 3), YBI) == 300
    assert not score_roll((4, 3, 3, 3, 4, 3), YBI).all_score


# -- exact single-roll figures (RULES.md 1.4 and 2.4) -----------------------------------------


def figures(table: ComboTable, n: int) -> tuple[Fraction, Fraction, Fraction]:
    blow = every = total = Fraction(0)
    for roll in multisets(n):
        w = Fraction(weight(roll), 6**n)
        scored = score_roll(roll, table)
        blow += w * scored.blown
        every += w * scored.all_score
        total += w * scored.points
    return blow, every, total


@pytest.mark.parametrize(
    ("n", "blow", "every", "mean"),
    [
        (1, 0.6667, 0.3333, 25.0),
        (2, 0.4444, 0.1111, 50.0),
        (3, 0.2778, 0.0556, 86.8),
        (4, 0.1574, 0.0370, 141.3),
        (5, 0.0772, 0.0247, 215.5),
        (6, 0.0309, 0.0332, 329.7),
    ],
)
def test_ybi_figures_of_rules_1_4(n: int, blow: float, every: float, mean: float) -> None:
    b, e, m = figures(YBI, n)
    assert round(float(b), 4) == blow
    assert round(float(e), 4) == every
    assert round(float(m), 1) == mean
    if n == 6:
        assert b * 6**6 == 1440


@pytest.mark.parametrize(
    ("n", "blow", "every", "mean"),
    [
        (1, 0.6667, 0.3333, 25.0),
        (2, 0.4444, 0.1111, 50.0),
        (3, 0.2778, 0.0556, 86.8),
        (4, 0.1574, 0.0401, 143.5),
        (5, 0.0772, 0.0869, 259.4),
    ],
)
def test_bolo_figures_of_rules_2_4(n: int, blow: float, every: float, mean: float) -> None:
    b, e, m = figures(BOLO, n)
    assert (round(float(b), 4), round(float(e), 4), round(float(m), 1)) == (blow, every, mean)


def test_two_two_three_three_four_is_the_lowest_bolo() -> None:
    blown = [r for r in multisets(5) if score_roll(r, BOLO).blown]
    assert min(blown, key=sum) == (2, 2, 3, 3, 4)
    assert sorted(sum(r) for r in blown)[:2] == [14, 15]


# -- worked Bolo examples (RULES.md 2.3) ------------------------------------------------------


def test_bolo_worked_examples() -> None:
    def opts(roll: tuple[int, ...]) -> dict[tuple[int, ...], tuple[int, bool]]:
        return {o.keep: (o.points, o.may_stop) for o in keeps(roll, BOLO)}

    assert opts((1, 1, 1, 5, 5)) == {(1, 1, 1, 5, 5): (1100, False)}
    o = opts((1, 1, 1, 2, 2))
    assert o[(1, 1, 1)] == (1000, True)
    assert o[(1, 1, 1, 2, 2)] == (500, False)
    assert score_roll((2, 2, 3, 3, 4), BOLO).blown
    assert opts((4, 4, 4, 4, 2))[(4, 4, 4, 4)] == (800, True)
    assert opts((6, 6, 6, 6, 6)) == {(6, 6, 6, 6, 6): (5000, False)}
    assert opts((1, 1, 1, 1, 1)) == {(1, 1, 1, 1, 1): (10000, False)}
    for straight in ((2, 3, 4, 5, 6), (1, 2, 3, 4, 5)):
        o = opts(straight)
        assert o[straight] == (1000, False)
        assert o[(5,)] == (50, True)
    assert opts((1, 5)) == {(1, 5): (150, False)}  # B5: all scoring, take all


def test_ybi_worked_examples() -> None:
    assert [o.keep for o in keeps((1, 2, 3, 4, 5, 6), YBI)] == [(1, 2, 3, 4, 5, 6)]
    assert [o.keep for o in keeps((5, 5, 5, 2, 2, 2), YBI)] == [(2, 2, 2, 5, 5, 5)]
    tom = score_roll((1, 4, 4, 4, 5, 5), YBI)
    assert tom.points == 600
    assert tom.all_score
    assert not tom.options[0].may_stop
    assert all(tuple(d for d in o.keep if d == 4) == (4, 4, 4) for o in tom.options)  # Y1


# -- house-rule variants of the tables -------------------------------------------------------


def ybi(**rules: object) -> ComboTable:
    return you_blew_it.table(you_blew_it.GAME.parse_rules(rules))


def bolo_table(**rules: object) -> ComboTable:
    return bolo.table(bolo.GAME.parse_rules(rules))


def test_y1_combo_need_not_be_kept_when_off() -> None:
    assert (1,) not in {o.keep for o in keeps((1, 1, 1, 2, 3, 4), YBI)}
    loose = ybi(combo_must_be_kept=False)
    assert (1,) in {o.keep for o in keeps((1, 1, 1, 2, 3, 4), loose)}
    assert (1,) in {o.keep for o in keeps((1, 2, 3, 4, 5, 6), loose)}


def test_y2_keep_all_scoring_dice() -> None:
    assert {o.keep for o in keeps((1, 5, 2, 3, 4, 4), ybi(keep_all_scoring_dice=True))} == {(1, 5)}
    assert len(keeps((1, 5, 2, 3, 4, 4), YBI)) == 3


@pytest.mark.parametrize(
    ("mode", "four", "five", "six"),
    [("singles", 400, 400, 800), ("linear", 800, 1200, 1600), ("doubling", 800, 1600, 3200)],
)
def test_y3_extra_dice_of_a_kind(mode: str, four: int, five: int, six: int) -> None:
    table = ybi(extra_dice_of_a_kind=mode)
    assert best_points((4,) * 4, table) == four
    assert best_points((4,) * 5, table) == five
    assert best_points((4,) * 6, table) == six
    if mode != "singles":
        assert {o.keep for o in keeps((4, 4, 4, 4, 2, 3), table)} == {(4, 4, 4, 4)}


def test_y3_linear_numbers_of_janie_gall() -> None:
    table = ybi(extra_dice_of_a_kind="linear")
    assert [best_points((1,) * n, table) for n in (3, 4, 5)] == [1000, 2000, 3000]
    assert [best_points((5,) * n, table) for n in (3, 4, 5)] == [500, 1000, 1500]


def test_y4_four_of_a_kind_as_one_combo() -> None:
    split = {o.keep for o in keeps((1, 1, 1, 1, 2, 3), YBI)}
    assert split == {(1, 1, 1), (1, 1, 1, 1)}
    whole = {o.keep for o in keeps((1, 1, 1, 1, 2, 3), ybi(four_of_a_kind_is_one_combo=True))}
    assert whole == {(1, 1, 1, 1)}
    assert best_points((5, 5, 5, 5), ybi(four_of_a_kind_is_one_combo=True)) == 550


def test_y5_six_of_a_kind_as_one_triple() -> None:
    table = ybi(six_of_a_kind_as_two_triples=False)
    assert best_points((1,) * 6, table) == 1300
    assert best_points((4,) * 6, table) == 400
    assert best_points((4,) * 6, YBI) == 800
    assert {o.keep for o in keeps((4,) * 6, YBI)} == {(4,) * 6}  # both triples must be kept


def test_b2_four_of_a_kind_triple_plus_single() -> None:
    table = bolo_table(four_of_a_kind="triple_plus_single")
    assert best_points((1, 1, 1, 1), table) == 1100
    assert best_points((4, 4, 4, 4, 2), table) == 400


def test_b4_player_choice_lets_a_kind_be_split_to_stop() -> None:
    strict = {o.keep: o.may_stop for o in keeps((6, 6, 6, 6, 6), BOLO)}
    assert strict == {(6,) * 5: False}
    loose = {
        o.keep: o.may_stop for o in keeps((6,) * 5, bolo_table(non_scoring_die="player_choice"))
    }
    assert loose[(6, 6, 6)] is True
    assert loose[(6,) * 5] is False


def test_b5_partial_keep_of_an_all_scoring_roll_cannot_stop() -> None:
    table = bolo_table(all_scoring_roll_takes_all=False)
    assert {o.keep: o.may_stop for o in keeps((1, 5), table)} == {
        (1, 5): False,
        (1,): False,
        (5,): False,
    }


def test_b6_full_house_with_the_same_face() -> None:
    assert "full house 4 4 4 4 4" not in {c.name for c in BOLO.combos}
    assert "full house 4 4 4 4 4" in {
        c.name for c in bolo_table(full_house_distinct_pair=False).combos
    }


# -- exhaustive invariants over every multiset -------------------------------------------------


def check_roll(roll: tuple[int, ...], table: ComboTable) -> None:
    scored = score_roll(roll, table)
    assert scored.dice == tuple(sorted(roll))
    assert len({o.keep for o in scored.options}) == len(scored.options)
    assert scored.blown == (not scored.options) == (scored.points == 0)
    have = Counter(roll)
    for o in scored.options:
        assert o.points > 0
        assert o.points <= scored.points
        assert not Counter(o.keep) - have, "a keep holds only rolled dice"
        found = partition(o.keep, table)
        assert found is not None
        assert found[0] == o.points
        assert sum(sum(c.counts) for c in found[1]) == len(o.keep)
        assert sorted(o.combos) == sorted(c.name for c in found[1])
        assert o.uses_all == (len(o.keep) == len(roll))
        if table.stop_rule == "dice_left":
            assert o.may_stop == (not o.uses_all)
        elif o.uses_all:
            assert not o.may_stop
    assert scored.all_score == any(len(o.keep) == len(roll) for o in scored.options)
    if scored.options:
        assert scored.points == max(o.points for o in scored.options)


@pytest.mark.parametrize("n", range(1, 7))
def test_every_multiset_of_ybi_dice(n: int) -> None:
    for roll in multisets(n):
        check_roll(roll, YBI)
        # every scoring single must be keepable (unless it belongs to a binding triple)
        if 1 in roll and roll.count(1) < 3:
            assert any(1 in o.keep for o in keeps(roll, YBI))


@pytest.mark.parametrize("n", range(1, 6))
def test_every_multiset_of_bolo_dice(n: int) -> None:
    for roll in multisets(n):
        check_roll(roll, BOLO)


def test_counts_round_trip_and_reject_bad_pips() -> None:
    for roll in multisets(4):
        assert dice_of(counts_of(roll)) == roll
    with pytest.raises(ValueError, match="1-6"):
        counts_of((0, 3))


# -- Hypothesis properties ---------------------------------------------------------------------

ybi_rules = st.fixed_dictionaries(
    {
        "combo_must_be_kept": st.booleans(),
        "keep_all_scoring_dice": st.booleans(),
        "extra_dice_of_a_kind": st.sampled_from(["singles", "linear", "doubling"]),
        "four_of_a_kind_is_one_combo": st.booleans(),
        "six_of_a_kind_as_two_triples": st.booleans(),
    }
)
bolo_rules = st.fixed_dictionaries(
    {
        "four_of_a_kind": st.sampled_from(["double_triple", "triple_plus_single"]),
        "non_scoring_die": st.sampled_from(["face_count_lt_3", "player_choice"]),
        "all_scoring_roll_takes_all": st.booleans(),
        "full_house_distinct_pair": st.booleans(),
    }
)
tables = st.one_of(ybi_rules.map(lambda r: ybi(**r)), bolo_rules.map(lambda r: bolo_table(**r)))


@settings(deadline=None)  # the machine is shared: no per-example timing
@given(tables, st.data())
def test_order_of_dice_never_matters(table: ComboTable, data: st.DataObject) -> None:
    roll = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=table.dice))
    shuffled = data.draw(st.permutations(roll))
    assert score_roll(roll, table) == score_roll(shuffled, table)


@settings(deadline=None)  # the machine is shared: no per-example timing
@given(tables, st.data())
def test_every_option_is_legal_and_never_beats_the_best(
    table: ComboTable, data: st.DataObject
) -> None:
    roll = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=table.dice)))
    check_roll(roll, table)


@settings(deadline=None)
@given(ybi_rules, st.lists(st.integers(1, 6), min_size=1, max_size=6))
def test_y1_every_option_keeps_the_rolled_triples(
    rules: dict[str, object], roll: list[int]
) -> None:
    rules["combo_must_be_kept"] = True
    for face in range(1, 7):
        if roll.count(face) >= 3:
            assert all(o.keep.count(face) >= 3 for o in keeps(roll, ybi(**rules)))


def test_b4_a_triple_of_2_3_4_6_is_a_scoring_die() -> None:
    options = keeps((2, 2, 2, 1, 5), BOLO)
    assert [(o.keep, o.points, o.may_stop) for o in options] == [((1, 2, 2, 2, 5), 350, False)]


def test_b2_triple_plus_single_four_of_a_face_is_a_triple_and_a_dead_die() -> None:
    """Under triple_plus_single four 3s are 300 and a single 3 that scores nothing (B-3): the
    roll is no BOLO (the all-scoring rule B5 once demanded a keep of all five, which no keep
    is), and the dead 3 is a non-scoring die to stop on (B-4)."""
    table = bolo_table(four_of_a_kind="triple_plus_single")
    assert {o.keep: (o.points, o.may_stop) for o in keeps((1, 3, 3, 3, 3), table)} == {
        (1, 3, 3, 3): (400, True),
        (3, 3, 3): (300, True),
        (1,): (100, True),
    }
    assert {o.keep: o.may_stop for o in keeps((6, 6, 6, 6), table)} == {(6, 6, 6): True}
    assert [o.keep for o in keeps((6,) * 5, table)] == [(6,) * 5]  # five of a kind: all


@pytest.mark.parametrize("four", ["double_triple", "triple_plus_single"])
@pytest.mark.parametrize("non_scoring", ["face_count_lt_3", "player_choice"])
@pytest.mark.parametrize("takes_all", [True, False])
def test_b2_b5_a_roll_with_a_1_a_5_or_a_triple_is_never_a_bolo(
    four: str, non_scoring: str, takes_all: bool
) -> None:
    table = bolo_table(
        four_of_a_kind=four, non_scoring_die=non_scoring, all_scoring_roll_takes_all=takes_all
    )
    for roll in (r for n in range(1, 6) for r in multisets(n)):
        scores = 1 in roll or 5 in roll or any(roll.count(f) >= 3 for f in range(2, 7))
        assert score_roll(roll, table).blown is not scores, roll
