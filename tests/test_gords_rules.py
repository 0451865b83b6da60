"""Gords (RULES.md 4) rules one at a time: illegal actions name the rule, every house rule."""

from __future__ import annotations

import pytest
from gords_rig import PLAYERS, play

from scoring.actions import (
    Action,
    Bid,
    Call,
    End,
    Fix,
    Keep,
    Lineup,
    Reveal,
    Roll,
    Undo,
    action_from_json,
)
from scoring.errors import IllegalActionError, RulesError
from scoring.games import find
from scoring.gords import GAME
from scoring.gords.bids import is_raise
from scoring.history import replay
from scoring.rules import describe_rules


def reveal(n: int, face: int, matches: int) -> Reveal:
    """``n`` dice of which exactly ``matches`` count for a bid on ``face`` (ones wild)."""
    other = 2 if face != 2 else 3
    return Reveal((face,) * matches + (other,) * (n - matches))


# -- rules one at a time ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "action", "rule"),
    [
        ([], Call(), "G-6: there is no bid to call yet"),
        ([], Bid(3, 4, "Bob"), "G-6: it is Ann's turn to bid, not Bob's"),
        ([], Bid(16, 4), "G9: only 15 dice are in play"),
        ([Bid(4, 3)], Bid(4, 2), "G-6: 4 × twos does not raise 4 × threes"),
        ([Bid(4, 3)], Bid(4, 3), "G-6"),
        ([Bid(4, 3)], Call(player="Cy"), r"G2: only the next player \(Bob\) may call"),
        ([Bid(4, 3)], Call(player="Ann"), "G-6: a player cannot call their own bid"),
        ([Bid(4, 3)], Call(spot_on=True), "G5: spot-on calls are not played here"),
        ([Bid(4, 3)], Bid(5, 3, "Zed"), "'Zed' is not playing"),
        ([], Reveal((1, 2, 3)), "G-7: dice are revealed only after a call"),
        ([Bid(4, 3), Call()], Reveal((1,) * 14), "C3: 15 dice are in play; the reveal shows 14"),
        ([Bid(4, 3), Call()], Bid(5, 3), "G-7: the bid was called"),
        ([Bid(4, 3), Call()], Call(), "G-7: the bid was already called"),
        (
            [Bid(4, 3), Call()],
            Reveal((1,) * 15, ("Ann",) * 6 + ("Bob",) * 4 + ("Cy",) * 5),
            "C3: Ann has 5 dice; the reveal shows 6 dice of theirs",
        ),
        (
            [Bid(4, 3), Call()],
            Reveal((1,) * 15, ("Ann",) * 5 + ("Bob",) * 5 + ("Zed",) * 5),
            "C3: 'Zed' owns dice",
        ),
        ([], Roll((1, 2, 3, 4, 5)), "G-2: dice stay hidden"),
        ([], Keep((1,)), "Gords has no 'keep' action"),
        ([Bid(4, 3)], Lineup(("Cy", "Bob", "Ann")), "G-3: the seating and first bidder are set"),
        ([End()], Bid(4, 3), "the game is over"),
        ([], Undo(), "history"),
    ],
)
def test_illegal_actions_name_the_rule(actions: list[Action], action: Action, rule: str) -> None:
    s = play(GAME.new(players=PLAYERS), actions)
    with pytest.raises(IllegalActionError, match=rule):
        GAME.apply(s, action)


def test_reveal_with_owners_by_colour() -> None:
    s = play(GAME.new(players=PLAYERS), [Bid(4, 3), Call()])
    owners = ("Cy",) * 5 + ("Ann",) * 5 + ("Bob",) * 5
    s = GAME.apply(s, Reveal((3, 3, 1, 1, 2) + (2,) * 10, owners))
    assert s.results[-1].met
    assert s.results[-1].loser == "Bob"
    typed = action_from_json({"type": "reveal", "dice": [3, 3, 1, 1] + [2] * 11})
    assert isinstance(typed, Reveal)


def test_facing_the_maximum_bid_you_must_call() -> None:
    s = GAME.new(players=["Ann", "Bob"])
    s = play(s, [Bid(10, 1)])  # 10 dice in play: ten ones is the top of the board
    assert GAME.legal_actions(s) == [Call()]
    assert "must call" in GAME.expecting(s).text
    with pytest.raises(IllegalActionError, match=r"G9|G-6"):
        GAME.apply(s, Bid(10, 6))


def test_legal_actions_are_exactly_the_raises() -> None:
    s = play(GAME.new(players=PLAYERS), [Bid(7, 4)])
    legal = GAME.legal_actions(s)
    assert Call() in legal
    raises = [a for a in legal if isinstance(a, Bid)]
    want = [(q, f) for q in range(1, 16) for f in range(1, 7) if is_raise((7, 4), (q, f))]
    assert [(b.count, b.face) for b in raises] == want
    assert Bid(4, 1) in raises
    assert Bid(3, 1) not in raises


def test_counter_clockwise_and_anyone_may_call() -> None:
    rules = {"direction": "counter_clockwise", "only_next_player_may_call": False}
    s = play(GAME.new(players=PLAYERS, rules=rules), [Bid(4, 3)])
    assert s.turn == "Cy"
    s = GAME.apply(s, Call(player="Bob"))
    s = GAME.apply(s, reveal(15, 3, 2))
    assert s.results[-1].loser == "Ann"
    assert s.starter == "Bob"  # the caller opens


def test_highest_face_ranking() -> None:
    s = GAME.new(players=PLAYERS, rules={"gords.ones_bid_rank": "highest_face"})
    s = play(s, [Bid(4, 6), Bid(4, 1)])  # ones above sixes at the same count
    with pytest.raises(IllegalActionError, match="ones over sixes"):
        GAME.apply(s, Bid(4, 5))
    GAME.apply(s, Bid(5, 2))


def test_board_order_rule() -> None:
    board = "1x2,1x3,1x4,1x5,1x6,1x1,2x2,2x3,2x4,2x5,2x6,2x1,3x2"
    s = GAME.new(players=PLAYERS, rules={"ones_bid_rank": "board_order", "board": board})
    s = play(s, [Bid(1, 6), Bid(1, 1)])
    with pytest.raises(IllegalActionError, match="G-6: 1 × five does not raise 1 × one"):
        GAME.apply(s, Bid(1, 5))
    with pytest.raises(IllegalActionError, match="G3: 4 × sixes is not a spot on the board"):
        GAME.apply(s, Bid(4, 6))
    with pytest.raises(ValueError, match=r"needs gords\.board"):
        GAME.new(players=PLAYERS, rules={"ones_bid_rank": "board_order"})


def test_no_opening_on_ones() -> None:
    s = GAME.new(players=PLAYERS, rules={"open_on_ones": False})
    with pytest.raises(
        IllegalActionError, match="G4: the opening bid of a round may not be on ones"
    ):
        GAME.apply(s, Bid(2, 1))
    GAME.apply(GAME.apply(s, Bid(4, 2)), Bid(2, 1))


def test_next_starter_loser_and_dice_lost_difference() -> None:
    rules = {"next_starter": "loser", "dice_lost": "difference"}
    s = play(GAME.new(players=PLAYERS, rules=rules), [Bid(6, 3), Call(), reveal(15, 3, 3)])
    assert s.results[-1].lost == 3  # bid 6, count 3: Ann loses the difference
    assert s.dice == (2, 5, 5)
    assert s.starter == "Ann"  # the loser opens
    s = play(s, [Bid(2, 4), Call(), reveal(12, 4, 5)])
    assert s.results[-1].loser == "Bob"
    assert s.results[-1].lost == 3  # count exceeds the bid by 3: the caller loses 3
    s = play(s, [Bid(1, 2), Call(), reveal(9, 2, 1)])
    assert s.results[-1].lost == 1  # exactly met: the caller loses one
    assert s.dice == (2, 2, 4)
    s = play(s, [Bid(8, 6), Call(), reveal(8, 6, 0)])  # Cy bid 8, none showed: he has only 4
    assert s.results[-1].lost == 4
    assert s.results[-1].text == "only 0 showed for 8 × sixes: Cy loses 4 dice and is out (G-10)"
    assert s.starter == "Ann"  # the loser is out: the next player after his seat opens


def test_spot_on_rule() -> None:
    rules = {"spot_on": True}
    s = play(GAME.new(players=PLAYERS, rules=rules), [Bid(4, 3), Call(), reveal(15, 3, 5)])
    assert s.dice == (5, 4, 5)  # Bob called and lost; he opens
    s = play(s, [Bid(3, 5), Bid(4, 5), Bid(5, 5)])
    assert s.turn == "Bob"
    assert Call(spot_on=True) in GAME.legal_actions(s)
    called = GAME.apply(s, Call(spot_on=True))
    assert "spot on" in GAME.expecting(called).text
    right = GAME.apply(called, reveal(14, 5, 5))
    assert right.dice == (5, 5, 5)  # exactly five: Bob wins his die back
    (h,) = GAME.highlights(called, reveal(14, 5, 5), right)
    assert (h.kind, h.player) == ("spot_on", "Bob")
    wrong = GAME.apply(called, reveal(14, 5, 6))
    assert wrong.dice == (5, 3, 5)  # not exact: the spot-on caller loses a die
    assert wrong.results[-1].loser == "Bob"


def test_palifico_round() -> None:
    s = GAME.new(players=["Ann", "Bob"], rules={"palifico": True})
    for _ in range(4):  # Bob loses four calls, as bidder or caller: down to one die
        bidder = s.turn
        s = play(s, [Bid(1, 2, bidder), Call()])
        s = GAME.apply(s, reveal(sum(s.dice), 2, 1 if bidder == "Ann" else 0))
    assert s.dice == (5, 1)
    assert s.palifico
    assert "palifico" in GAME.expecting(s).text
    opener = s.turn
    s = play(s, [Bid(2, 5, opener)])
    with pytest.raises(IllegalActionError, match="G10: palifico round: the face stays fives"):
        GAME.apply(s, Bid(3, 6))
    s = play(s, [Bid(3, 5)])
    # ones are not wild: two fives and a one make only 2
    s = GAME.apply(GAME.apply(s, Call()), Reveal((5, 5, 1, 2, 3, 4)))
    assert s.results[-1].matching == 2
    assert not s.results[-1].met


def test_lineup_and_bad_games() -> None:
    s = GAME.apply(GAME.new(players=PLAYERS), Lineup(("Cy", "Ann", "Bob")))
    assert s.turn == "Cy"
    assert s.players == ("Cy", "Ann", "Bob")
    with pytest.raises(IllegalActionError, match="every player once"):
        GAME.apply(GAME.new(players=PLAYERS), Lineup(("Cy", "Ann")))
    with pytest.raises(ValueError, match="G-1"):
        GAME.new(players=["Solo"])
    with pytest.raises(ValueError, match="G-1"):
        GAME.new(players=[f"P{i}" for i in range(7)])
    with pytest.raises(RulesError):
        GAME.new(players=PLAYERS, rules={"dice_lost": "two"})
    assert find("gords") is GAME


def test_house_rules_are_all_named() -> None:
    names = {r["name"] for r in describe_rules(GAME.rules_type, "gords")}
    for option in (
        "direction",
        "only_next_player_may_call",
        "ones_bid_rank",
        "board",
        "open_on_ones",
        "spot_on",
        "dice_lost",
        "next_starter",
        "game_end",
        "max_quantity",
        "palifico",
        "palifico_opener",
        "cocked_dice",
    ):
        assert f"gords.{option}" in names


def test_end_early() -> None:
    s = GAME.apply(GAME.new(players=PLAYERS), End())
    out = GAME.outcome(s)
    assert out is not None
    assert out.winners == ()
    assert GAME.outcome(GAME.new(players=PLAYERS)) is None


def test_exact_bid_highlight() -> None:
    s = play(GAME.new(players=PLAYERS), [Bid(4, 3), Call()])
    after = GAME.apply(s, reveal(15, 3, 4))
    (h,) = GAME.highlights(s, reveal(15, 3, 4), after)
    assert (h.kind, h.player, h.points) == ("exact_bid", "Ann", 4)
    assert GAME.highlights(s, reveal(15, 3, 5), GAME.apply(s, reveal(15, 3, 5))) == ()


def test_g5_spot_on_never_gives_more_than_five_dice() -> None:
    s = play(GAME.new(players=PLAYERS, rules={"spot_on": True}), [Bid(3, 5)])
    s = play(s, [Call(spot_on=True), reveal(15, 5, 3)])
    assert s.dice == (5, 5, 5)


def test_g7_loser_opens_but_an_exact_spot_on_has_no_loser() -> None:
    rules = {"spot_on": True, "next_starter": "loser"}
    s = play(GAME.new(players=PLAYERS, rules=rules), [Bid(3, 5)])
    s = play(s, [Call(spot_on=True), reveal(15, 5, 3)])
    assert s.results[-1].loser == ""
    assert s.starter == "Bob"  # nobody lost: the caller opens
    assert s.phase == "bidding"


def test_g9_may_still_raise_when_only_the_top_count_is_left() -> None:
    s = play(GAME.new(players=PLAYERS), [Bid(14, 1)])  # 15 dice in play
    assert GAME.legal_actions(s) == [Bid(15, 1), Call()]
    text = GAME.expecting(s).text
    assert "must call" not in text
    assert "raise" in text


def test_g10_palifico_only_once_per_player() -> None:
    s = GAME.new(players=["Ann", "Bob"], rules={"palifico": True, "spot_on": True})
    for _ in range(4):  # Bob loses four calls: down to one die, a palifico round
        bidder = s.turn
        s = play(s, [Bid(1, 2, bidder), Call()])
        s = GAME.apply(s, reveal(sum(s.dice), 2, 1 if bidder == "Ann" else 0))
    assert s.dice == (5, 1)
    assert s.palifico
    s = play(s, [Bid(1, 2), Bid(2, 2)] if s.turn == "Bob" else [Bid(2, 2)])
    s = play(s, [Call(spot_on=True), Reveal((2, 2, 3, 3, 3, 3))])  # exactly two: Bob +1 die
    assert s.dice == (5, 2)
    bidder = s.turn
    s = play(s, [Bid(1, 2, bidder), Call()])
    s = GAME.apply(s, reveal(7, 2, 1 if bidder == "Ann" else 0))  # Bob loses again
    assert s.dice == (5, 1)
    assert not s.palifico  # Perudo: one palifico round per player


def test_fix_corrects_a_reveal() -> None:
    log = [Bid(4, 3), Call(), reveal(15, 3, 5), Fix(reveal(15, 3, 2).dice)]
    s = replay(GAME, GAME.new(players=PLAYERS), log)
    assert s.results[-1].matching == 2
    assert s.results[-1].loser == "Ann"  # the corrected count misses the bid


def test_a_forty_character_name_is_allowed() -> None:
    name = "N" * 40
    assert name in GAME.new(players=[name, "Bob"]).players
    with pytest.raises(ValueError, match="1-40"):
        GAME.new(players=[name + "N", "Bob"])
