"""Gords (RULES.md 4): bid ordering, counting, a whole game, JSON, history, the CLI, random play."""

from __future__ import annotations

import json
import math
import random

import pytest
from game_scripts import DATA, load
from gords_rig import PLAYERS, play
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.actions import Action, Bid, Call, Reveal, Undo
from scoring.errors import IllegalActionError
from scoring.gords import GAME
from scoring.gords.bids import bid_key, bid_text, is_met, is_raise, matching, p_met, parse_board
from scoring.history import apply_logged, effective_actions, replay

SCRIPT = DATA / "gords_three_players.jsonl"


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
