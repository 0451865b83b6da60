"""Gords (RULES.md 4): bid ordering, counting, a whole game, every house rule, JSON, history."""

from __future__ import annotations

import json
import math
import random

import pytest
from game_scripts import DATA, load
from hypothesis import given, settings
from hypothesis import strategies as st

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
from scoring.gords import GAME, GordsState
from scoring.gords.bids import bid_key, bid_text, is_met, is_raise, matching, p_met, parse_board
from scoring.history import apply_logged, effective_actions, replay
from scoring.rules import describe_rules

SCRIPT = DATA / "gords_three_players.jsonl"
PLAYERS = ["Ann", "Bob", "Cy"]


def play(state: GordsState, actions: list[Action]) -> GordsState:
    for a in actions:
        state = GAME.apply(state, a)
    return state


def reveal(n: int, face: int, matches: int) -> Reveal:
    """``n`` dice of which exactly ``matches`` count for a bid on ``face`` (ones wild)."""
    other = 2 if face != 2 else 3
    return Reveal((face,) * matches + (other,) * (n - matches))


# -- the bid maths ----------------------------------------------------------------------------


def test_rules_4_3_self_test() -> None:
    dice = (6, 6, 1, 3, 2, 4, 5, 1)
    assert matching(dice, 6) == 4
    assert is_met(dice, (4, 6))
    assert matching(dice, 1) == 2
    assert not is_met(dice, (3, 1))
    assert is_raise((4, 3), (4, 5))
    assert not is_raise((4, 3), (4, 2))
    assert is_raise((4, 3), (5, 2))
    assert is_raise((9, 4), (5, 1))
    assert not is_raise((9, 4), (4, 1))
    assert is_raise((3, 1), (7, 4))
    assert not is_raise((3, 1), (6, 4))
    assert bid_text((4, 6)) == "4 × sixes"
    assert bid_text((1, 6)) == "1 × six"


@pytest.mark.parametrize(
    ("bid", "unknown", "in_hand", "p"),
    [
        ((8, 4), 25, 0, 0.630),
        ((10, 4), 25, 0, 0.304),
        ((4, 1), 25, 0, 0.618),
        ((8, 4), 20, 3, 0.848),
    ],
)
def test_rules_4_3_odds(bid: tuple[int, int], unknown: int, in_hand: int, p: float) -> None:
    assert round(p_met(bid, unknown=unknown, in_hand=in_hand), 3) == p


def perudo_oracle(old: tuple[int, int], new: tuple[int, int]) -> bool:
    """RULES.md G-6 and G3 in words: same count and higher face or higher count; to ones at
    least half (rounded up); back from ones at least double plus one; ones to ones higher."""
    (q, f), (q2, f2) = old, new
    if f != 1 and f2 != 1:
        return q2 > q or (q2 == q and f2 > f)
    if f != 1:
        return q2 >= math.ceil(q / 2)
    if f2 == 1:
        return q2 > q
    return q2 >= 2 * q + 1


bids = st.tuples(st.integers(1, 30), st.integers(1, 6))
RANKS = ("perudo", "highest_face")


@given(bids, bids, bids, st.sampled_from(RANKS))
def test_bid_ordering_is_a_strict_total_order(
    a: tuple[int, int], b: tuple[int, int], c: tuple[int, int], rank: str
) -> None:
    def lt(x: tuple[int, int], y: tuple[int, int]) -> bool:
        return is_raise(x, y, ones_rank=rank)

    assert not lt(a, a)  # irreflexive
    if a != b:
        assert lt(a, b) != lt(b, a)  # total and asymmetric
    if lt(a, b) and lt(b, c):
        assert lt(a, c)  # transitive
    assert (bid_key(a, ones_rank=rank) == bid_key(b, ones_rank=rank)) == (a == b)


@given(bids, bids)
def test_perudo_raise_matches_the_rule_in_words(a: tuple[int, int], b: tuple[int, int]) -> None:
    if a != b:
        assert is_raise(a, b) == perudo_oracle(a, b)


@given(st.permutations([(q, f) for q in range(1, 4) for f in range(1, 7)]), st.data())
def test_board_order_is_the_listed_order(board: list[tuple[int, int]], data: st.DataObject) -> None:
    text = ",".join(f"{q}x{f}" for q, f in board)
    parsed = parse_board(text)
    assert list(parsed) == board
    i, j = data.draw(st.integers(0, 17)), data.draw(st.integers(0, 17))
    assert is_raise(board[i], board[j], ones_rank="board_order", board=parsed) == (j > i)


def test_board_errors() -> None:
    with pytest.raises(ValueError, match="G3"):
        parse_board("1x2, 1x2")
    with pytest.raises(ValueError, match="G3"):
        parse_board("1x7")
    with pytest.raises(ValueError, match="not a spot on the board"):
        bid_key((5, 5), ones_rank="board_order", board=parse_board("1x2,1x3"))


@given(st.lists(st.integers(1, 6), max_size=30), bids)
def test_a_bid_is_met_exactly_when_the_count_reaches_it(
    dice: list[int], bid: tuple[int, int]
) -> None:
    count, face = bid
    n = sum(1 for d in dice if d == face or (d == 1 and face != 1))
    assert matching(dice, face) == n
    assert is_met(dice, bid) == (n >= count)
    assert matching(dice, face, ones_wild=False) == dice.count(face)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=15, max_size=15), st.integers(1, 15), st.integers(1, 6))
def test_the_engine_makes_the_loser_by_the_count(dice: list[int], count: int, face: int) -> None:
    s = play(GAME.new(players=PLAYERS), [Bid(count, face), Call(), Reveal(tuple(dice))])
    met = is_met(dice, (count, face))
    loser = "Bob" if met else "Ann"
    assert s.results[-1].met == met
    assert s.results[-1].loser == loser
    assert dict(zip(s.players, s.dice, strict=True))[loser] == 4
    assert s.turn == "Bob"  # G-9: the caller opens the next round


# -- a whole game -----------------------------------------------------------------------------


def test_three_players_to_one_winner() -> None:
    """tests/data/gords_three_players.jsonl: calls won and lost, bids on ones, a refused raise,
    an undone bid, and Cy eliminated on his own call: he would have opened, Ann does."""
    log = load(SCRIPT.name)
    start = GAME.new(players=PLAYERS)
    s = start
    for i, action in enumerate(log):
        s = apply_logged(GAME, start, log[:i], action)
        if s.bids and s.bids[-1].count == 3 and s.bids[-1].face == 1 and s.round == 2:
            with pytest.raises(IllegalActionError, match=r"G-6: 6 × fours does not raise 3 × ones"):
                GAME.apply(s, Bid(6, 4))
            with pytest.raises(IllegalActionError, match="G-6: it is Ann's turn to bid, not Bob's"):
                GAME.apply(s, Bid(7, 4, "Bob"))
        if s.round == 8 and not s.bids:
            assert s.results[-1].caller == "Cy"
            assert s.results[-1].eliminated
            assert s.turn == "Ann"  # the next player after Cy's seat
            assert GAME.expecting(s).text.startswith("Ann (3 dice) opens round 8: 8 dice in play")
    assert s == replay(GAME, start, log)
    assert s.phase == "over"
    assert dict(zip(s.players, s.dice, strict=True)) == {"Ann": 0, "Bob": 1, "Cy": 0}
    out = GAME.outcome(s)
    assert out is not None
    assert out.winner == "Bob"
    losers = [r.loser for r in s.results]
    callers = [r.caller for r in s.results]
    assert any(r.met for r in s.results)
    assert any(not r.met for r in s.results)
    assert losers.count("Cy") == 5
    assert "Cy" in callers
    assert [r.face for r in s.results].count(1) == 2
    j = GAME.state_to_json(s)
    assert j["winner"] == "Bob"
    assert j["scores"] == {"Ann": 0, "Bob": 1, "Cy": 0}
    assert j["eliminated"] == ["Ann", "Cy"]
    assert j["dice_in_play"] == 1
    assert len(j["results"]) == 14
    assert GAME.expecting(s).action == "none"


def test_json_round_trip_replay_and_undo_at_every_step() -> None:
    log = effective_actions(load(SCRIPT.name))
    start = GAME.new(players=PLAYERS)
    live = start
    for i, action in enumerate(log):
        before = live
        live = GAME.apply(live, action)
        back = GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(live))))
        assert back == live
        assert replay(GAME, start, log[: i + 1]) == live
        assert apply_logged(GAME, start, log[: i + 1], Undo()) == before
    j = GAME.state_to_json(start)
    for key in ("game", "rules", "scores", "over", "winner", "expecting", "bid", "bids", "dice"):
        assert key in j


def test_scoreboard_json_mid_round() -> None:
    s = play(GAME.new(players=PLAYERS), [Bid(4, 3), Bid(5, 2)])
    j = GAME.state_to_json(s)
    assert j["bid"] == {"player": "Bob", "count": 5, "face": 2, "text": "5 × twos"}
    assert [b["player"] for b in j["bids"]] == ["Ann", "Bob"]
    assert j["dice_in_play"] == 15
    assert j["expecting"]["player"] == "Cy"
    assert j["expecting"]["action"] == "bid_or_call"
    assert j["scores"] == {"Ann": 5, "Bob": 5, "Cy": 5}


def test_state_from_json_rejects_garbage() -> None:
    j = GAME.state_to_json(GAME.new(players=PLAYERS))
    with pytest.raises(ValueError, match="not a gords state"):
        GAME.state_from_json({**j, "game": "bolo"})
    with pytest.raises(ValueError, match="bad gords state"):
        GAME.state_from_json({k: v for k, v in j.items() if k != "dice"})
    with pytest.raises(ValueError, match="one dice count per player"):
        GAME.state_from_json({**j, "dice": [5]})


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


# -- score report and the CLI -----------------------------------------------------------------


def test_score_report() -> None:
    report = GAME.score_report((6, 6, 1, 3, 2, 4, 5, 1), bid=(4, 6))
    assert report == {
        "dice": [6, 6, 1, 3, 2, 4, 5, 1],
        "bid": {"count": 4, "face": 6},
        "matching": 4,
        "met": True,
    }
    assert "met: the caller loses a die" in GAME.describe_report(report)
    ones = GAME.score_report((6, 6, 1, 3, 2, 4, 5, 1), bid=(3, 1))
    assert ones["matching"] == 2
    assert "ones only" in GAME.describe_report(ones)
    assert "the bidder loses" in GAME.describe_report(ones)
    with pytest.raises(ValueError, match=r"give one, e\.g\. --bid 4x6"):
        GAME.score_report((1, 2, 3))


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from server.cli import main

    assert main(["score", "--game", "gords", "--bid", "4x6", "--json", "6", "6", "1", "3"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "dice": [6, 6, 1, 3],
        "bid": {"count": 4, "face": 6},
        "matching": 3,
        "met": False,
    }
    assert main(["score", "--game", "gords", "6", "6", "1"]) == 2
    assert "--bid" in capsys.readouterr().err
    assert main(["replay", "--game", "gords", "--players", "Ann,Bob,Cy", str(SCRIPT)]) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["winner"] == "Bob"
    assert final["over"] is True


gords_input = st.one_of(
    st.builds(Bid, st.integers(1, 16), st.integers(1, 6)),
    st.builds(Bid, st.integers(1, 16), st.integers(1, 6), st.sampled_from(PLAYERS)),
    st.just(Call()),
    st.builds(Call, st.sampled_from(PLAYERS)),
    st.lists(st.integers(1, 6), min_size=1, max_size=15).map(lambda d: Reveal(tuple(d))),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(gords_input, max_size=80), st.data())
def test_any_input_is_applied_or_refused_cleanly(
    actions: list[Action], data: st.DataObject
) -> None:
    """Random input either applies or raises IllegalActionError; dice only ever go down
    (spot on is off), the JSON round-trips, and a legal decision is always accepted."""
    s = GAME.new(players=PLAYERS)
    for action in actions:
        want = GAME.expecting(s)
        if want.action == "reveal" and data.draw(st.booleans()):
            n = want.dice
            action = Reveal(tuple(data.draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))))
        elif want.action.startswith("bid") and data.draw(st.booleans()):
            action = data.draw(st.sampled_from(GAME.legal_actions(s)))
        before = s
        try:
            s = GAME.apply(s, action)
        except IllegalActionError:
            continue
        assert all(a >= b for a, b in zip(before.dice, s.dice, strict=True))
        assert sum(before.dice) - sum(s.dice) <= 1
        assert GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(s)))) == s


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32), st.integers(2, 6))
def test_random_games_played_through_expecting_end_with_one_winner(seed: int, players: int) -> None:
    """Bid and call by ``legal_actions``, reveal random dice as ``expecting`` asks: every game
    ends with one player holding dice, after exactly one die lost per round (defaults)."""
    rnd = random.Random(seed)
    names = [f"P{i}" for i in range(players)]
    s = GAME.new(players=names)
    while s.phase != "over":
        want = GAME.expecting(s)
        if want.action == "reveal":
            s = GAME.apply(s, Reveal(tuple(rnd.randint(1, 6) for _ in range(want.dice))))
            continue
        legal = GAME.legal_actions(s)
        calls = [a for a in legal if isinstance(a, Call)]
        bids = [a for a in legal if isinstance(a, Bid)][:8]  # modest raises keep it realistic
        s = GAME.apply(
            s, rnd.choice(calls) if calls and (rnd.random() < 0.4 or not bids) else rnd.choice(bids)
        )
    alive = [p for p, d in zip(s.players, s.dice, strict=True) if d]
    assert len(alive) == 1
    assert GAME.outcome(s) is not None
    assert len(s.results) == 5 * players - s.dice[s.players.index(alive[0])]


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
