"""Gords coach: bid odds (RULES.md 4.3), the most likely true bid, raise or call."""

from __future__ import annotations

import math
import random

import pytest

from scoring.actions import Bid, Call, Reveal
from scoring.coach import hint
from scoring.coach.gords import (
    advise,
    expected_count,
    legal_raises,
    most_likely_bids,
    most_likely_true_bid,
    p_true,
)
from scoring.gords import GAME

PLAYERS = ["Ann", "Bob", "Cy", "Di", "Ed"]


@pytest.mark.parametrize(
    ("bid", "own", "unknown", "expected"),
    [
        ((8, 4), (), 25, 0.630),
        ((10, 4), (), 25, 0.304),
        ((4, 1), (), 25, 0.618),
        ((8, 4), (1, 4, 4, 2, 6), 20, 0.848),
    ],
)
def test_rules_4_3_examples(
    bid: tuple[int, int], own: tuple[int, ...], unknown: int, expected: float
) -> None:
    assert round(p_true(bid, own=own, unknown=unknown), 3) == expected


def test_binomial_against_a_direct_sum() -> None:
    # Ones not wild (palifico): each unknown die matches a four with p = 1/6.
    direct = sum(math.comb(10, k) * (1 / 6) ** k * (5 / 6) ** (10 - k) for k in range(3, 11))
    assert p_true((4, 4), own=(4, 1), unknown=10, ones_wild=False) == pytest.approx(direct)
    assert p_true((3, 6), own=(6, 6, 1), unknown=7) == 1.0  # already on the table
    assert expected_count(4, own=(1, 4, 4, 2, 6), unknown=20) == pytest.approx(3 + 20 / 3)


def test_most_likely_true_bid_is_the_top_of_the_likely_ones() -> None:
    likely = most_likely_bids(own=(1, 4, 4, 2, 6), unknown=20)
    for (count, face), p in likely:
        assert p >= 0.5
        assert p_true((count + 1, face), own=(1, 4, 4, 2, 6), unknown=20) < 0.5
    best = most_likely_true_bid(own=(1, 4, 4, 2, 6), unknown=20)
    assert best is not None
    assert best[0] == (10, 4)  # 3 in hand + 20/3 expected: ten fours is still > 50 %


def test_call_an_unlikely_bid_raise_a_likely_one() -> None:
    raises = legal_raises((20, 4), 25)
    assert advise((20, 4), raises, unknown=25)["advice"] == "call"
    likely = advise((5, 4), legal_raises((5, 4), 25), unknown=25)
    assert likely["advice"] == "raise"
    assert likely["p_raise"] > 0.5
    assert advise((25, 6), legal_raises((25, 6), 25), unknown=25)["advice"] == "call"


def test_legal_raises_match_the_engine() -> None:
    s = GAME.new(players=PLAYERS)
    s = GAME.apply(s, Bid(4, 3))
    engine = {(a.count, a.face) for a in GAME.legal_actions(s) if isinstance(a, Bid)}
    assert set(legal_raises((4, 3), 25)) == engine


def test_hints_on_a_live_game_are_legal_actions() -> None:
    s = GAME.new(players=PLAYERS)
    opening = hint("gords", s, own=(1, 4, 4, 2, 6))
    assert opening["advice"] == "raise"
    bid = Bid(opening["raise"]["count"], opening["raise"]["face"])
    assert bid in GAME.legal_actions(s)
    s = GAME.apply(s, bid)
    for _ in range(200):
        h = hint("gords", GAME.state_to_json(s), own=(3, 3, 5, 6, 2))
        assert h["player"] == s.turn
        legal = GAME.legal_actions(s)
        if h["advice"] == "call":
            assert Call() in legal
            break
        action = Bid(h["raise"]["count"], h["raise"]["face"])
        assert action in legal
        s = GAME.apply(s, action)
    else:
        pytest.fail("the bidding never reached a call")


def test_too_many_own_dice_is_refused() -> None:
    with pytest.raises(ValueError, match="in play"):
        hint("gords", GAME.new(players=["Ann", "Bob"]), own=(1,) * 11)


def test_opening_bid_is_the_most_likely_true_bid() -> None:
    h = advise(None, legal_raises(None, 25), own=(1, 4, 4, 2, 6), unknown=20)
    assert (h["raise"]["count"], h["raise"]["face"]) == (10, 4)
    assert 0.5 <= h["p_raise"] < 0.6
    no_ones = legal_raises(None, 10, open_on_ones=False)
    assert all(face != 1 for _, face in no_ones)
    assert advise(None, no_ones, own=(1, 1, 1, 1, 1), unknown=5)["raise"]["face"] != 1


def test_a_finished_game_is_coached_as_over() -> None:
    """A game played to its end: the hint says so (it asked to reveal the dice for a call
    that will never come)."""
    rnd = random.Random(7)
    s = GAME.new(players=["Ann", "Bob"])
    while s.phase != "over":
        want = GAME.expecting(s)
        if want.action == "reveal":
            s = GAME.apply(s, Reveal(tuple(rnd.randint(1, 6) for _ in range(want.dice))))
            continue
        calls = [a for a in GAME.legal_actions(s) if isinstance(a, Call)]
        s = GAME.apply(s, calls[0] if calls else Bid(1, 2))
    assert hint("gords", s)["text"] == "Game over."
