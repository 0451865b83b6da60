"""Bolo: a game across every board threshold, every house rule, the clauses, illegal actions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from game_scripts import B, K, R, load

from scoring.actions import (
    Action,
    Bank,
    End,
    Lineup,
    Reroll,
    SetRule,
)
from scoring.errors import IllegalActionError
from scoring.farkle.bolo import GAME, HouseRules, State, minimum, yahtzee_ready
from scoring.game import Highlight
from scoring.games import find

BOLO = (2, 2, 3, 3, 4)


def board_game() -> list[Action]:
    return load("bolo_board_game.jsonl")


def play(state: State, actions: Iterable[Action]) -> State:
    for action in actions:
        state = GAME.apply(state, action)
    return state


def new(**rules: Any) -> State:
    return GAME.new(players=["Ann", "Bob"], rules=rules)


def highlights(state: State, actions: Iterable[Action]) -> tuple[State, list[Highlight]]:
    found: list[Highlight] = []
    for action in actions:
        after = GAME.apply(state, action)
        found.extend(GAME.highlights(state, action, after))
        state = after
    return state, found


# -- a game across every board threshold -------------------------------------------------------


def test_registry_finds_the_game() -> None:
    assert find("bolo") is GAME


def test_board_game_crosses_every_threshold() -> None:
    state = new()
    boards = []
    for action in board_game():
        state = GAME.apply(state, action)
        if isinstance(action, Bank):
            boards.append(state.boards[0])
    minimums = [t.minimum for t in state.turns if t.player == "Ann"]
    assert minimums == [650, 650, 350, 350, 350, 750, 750, 750, 1000, 1000]
    assert boards == [0, 5150, 5150, 5500, 7500, 7500, 8300, 9300, 9300, 10300]
    statuses = [t.status for t in state.turns if t.player == "Ann"]
    assert statuses == [
        "passed",  # 600 < 650
        "banked",  # 5150: on the board
        "passed",  # 300 < 350
        "banked",  # 350
        "banked",  # 2000 -> 7500
        "passed",  # 700 < 750
        "banked",  # 800
        "banked",  # 1000 -> 9300
        "passed",  # 700 < 1000
        "banked",  # 1000: wins
    ]
    assert all(t.status == "bolo" for t in state.turns if t.player == "Bob")
    assert state.hits == (6 + 2 + 1 + 1, 0)  # 5 + Van Halen, 2000, 1000, 1000
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winner == "Ann"
    view = GAME.state_to_json(state)
    assert view["scores"] == {"Ann": 10300, "Bob": 0}
    assert view["over"] is True
    assert view["winner"] == "Ann"
    assert view["hits"] == {"Ann": 10, "Bob": 0}


def test_board_game_round_trips_and_lists_only_legal_actions() -> None:
    state = new()
    for action in board_game():
        for legal in GAME.legal_actions(state):
            GAME.apply(state, legal)
        state = GAME.apply(state, action)
        text = json.dumps(GAME.state_to_json(state))
        assert GAME.state_from_json(json.loads(text)) == state


def test_board_game_highlights() -> None:
    _, found = highlights(new(), board_game())
    kinds = [(h.kind, h.player, h.points) for h in found]
    assert ("high_roller", "Ann", 5000) in kinds
    assert ("van_halen", "Ann", 5150) in kinds
    assert ("turn", "Ann", 5150) in kinds
    assert ("roll", "Ann", 2000) in kinds


def test_minimum_follows_the_board_at_the_start_of_the_turn() -> None:
    rules = HouseRules()
    assert minimum(rules, 0, False) == 650
    assert minimum(rules, 6999, True) == 350
    assert minimum(rules, 7000, True) == 750
    assert minimum(rules, 9000, True) == 1000


# -- turn play and illegal actions ---------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "bad", "rule"),
    [
        ([], K(1), "B-2"),
        ([R(1, 2, 3, 6, 6)], K(6, 6), "B-2"),
        ([], R(1, 2, 3), "C3"),
        ([R(1, 2, 3, 6, 6), K(1)], R(1, 2, 3), "C3"),
        ([], B, "B-2"),
        ([R(1, 1, 1, 2, 2)], B, "B-5"),  # two readings to choose from (C4)
        ([R(1, 1, 1, 2, 2), K(1, 1, 1, 2, 2)], B, "B-4"),  # the full house used every die
        ([R(6, 6, 6, 6, 6), K(6, 6, 6, 6, 6)], B, "B-4"),
        ([R(1, 2, 3, 6, 6)], Lineup(("Bob", "Ann")), "B-1"),
        ([], Lineup(("Bob",)), "B-1"),
        ([], SetRule("nonsense", 1), "B17"),
        ([], SetRule("rule_overrides", "per_game"), "B17"),
        ([R(4, 4, 4, 2, 3), K(4, 4, 4), R(4, 6)], Reroll((4, 6), "yahtzee"), "B13"),
        ([R(1, 2, 3, 6, 6)], Reroll((5,)), "B-9"),
    ],
)
def test_illegal_actions_name_the_rule(actions: list[Action], bad: Action, rule: str) -> None:
    state = play(new(), actions)
    before = GAME.state_to_json(state)
    with pytest.raises(IllegalActionError, match=rule):
        GAME.apply(state, bad)
    assert GAME.state_to_json(state) == before


def test_choice_of_reading_full_house_or_triple() -> None:
    s = play(new(entry_min=0), [R(1, 1, 1, 2, 2), K(1, 1, 1, 2, 2)])
    assert s.turn.points == 500
    assert GAME.expecting(s).dice == 5  # every die used: roll all five again
    s = play(new(entry_min=0), [R(1, 1, 1, 2, 2), K(1, 1, 1), B])
    assert s.boards == (1000, 0)


def test_bank_straight_after_a_roll_with_only_one_keep() -> None:
    s = play(new(entry_min=0), [R(1, 2, 3, 6, 6), B])
    assert s.boards == (100, 0)


def test_expecting_texts() -> None:
    s = new()
    assert GAME.expecting(s).text == "Ann: roll 5 dice (needs 650 to take points)"
    s = play(s, [R(6, 6, 6, 2, 3), K(6, 6, 6)])
    e = GAME.expecting(s)
    assert (e.action, e.dice) == ("roll_or_bank", 2)
    assert "pass (under 650)" in e.text
    assert GAME.expecting(play(new(), [R(1, 2, 3, 4, 6)])).text.endswith("(1 choice)")
    assert GAME.expecting(play(new(), [R(1, 5, 2, 3, 4)])).text.endswith(" choices)")


def test_nothing_applies_after_the_game_is_over() -> None:
    s = play(new(), board_game())
    with pytest.raises(IllegalActionError, match="B-7"):
        GAME.apply(s, R(1, 2, 3, 4, 5))


def test_end_stops_the_game_without_a_winner() -> None:
    outcome = GAME.outcome(play(new(), [End()]))
    assert outcome is not None
    assert outcome.winners == ()


def test_lineup_before_the_first_roll() -> None:
    s = play(new(), [Lineup(("Bob", "Ann"))])
    assert GAME.expecting(s).player == "Bob"


def test_new_rejects_bad_lineups() -> None:
    with pytest.raises(ValueError, match="unique"):
        GAME.new(players=["Ann", "Ann"])
    with pytest.raises(ValueError, match="players"):
        GAME.new(teams={"A": ["Ann"]})


# -- house rules ------------------------------------------------------------------------------


def test_b3_five_ones_win_instantly() -> None:
    s = play(new(), [R(1, 1, 1, 1, 1), K(1, 1, 1, 1, 1)])
    assert GAME.outcome(s) is None  # default: 10 000 turn points, roll on
    assert s.turn.hot
    s = play(new(five_ones_wins_instantly=True), [R(1, 1, 1, 1, 1), K(1, 1, 1, 1, 1)])
    outcome = GAME.outcome(s)
    assert outcome is not None
    assert outcome.winner == "Ann"
    assert s.boards == (10000, 0)


def test_b4_player_choice_may_stop_on_a_split_kind() -> None:
    s = play(new(entry_min=0), [R(6, 6, 6, 6, 6)])
    with pytest.raises(IllegalActionError, match="B-2"):
        GAME.apply(s, K(6, 6, 6))
    s = play(new(entry_min=0, non_scoring_die="player_choice"), [R(6, 6, 6, 6, 6), K(6, 6, 6), B])
    assert s.boards == (600, 0)


def test_b5_partial_keep_of_an_all_scoring_roll() -> None:
    start = [R(6, 6, 6, 2, 3), K(6, 6, 6), R(1, 5)]
    with pytest.raises(IllegalActionError, match="B-2"):
        play(new(), [*start, K(1)])
    s = play(new(all_scoring_roll_takes_all=False), [*start, K(1)])
    with pytest.raises(IllegalActionError, match="B-4"):
        GAME.apply(s, B)
    s = play(s, [R(5), K(5)])
    assert s.turn.hot
    assert s.turn.points == 750


def test_b9_below_the_minimum_pass_or_roll_on() -> None:
    s = play(new(), [R(6, 6, 6, 2, 3), K(6, 6, 6), B])
    assert s.turns[-1].status == "passed"
    assert s.boards == (0, 0)
    strict = play(new(below_min_may_pass=False), [R(6, 6, 6, 2, 3), K(6, 6, 6)])
    with pytest.raises(IllegalActionError, match="B9"):
        GAME.apply(strict, B)
    assert Bank() not in GAME.legal_actions(strict)


def test_b9_a_bank_whose_sole_keep_reaches_the_minimum_is_listed() -> None:
    """Banking straight after a roll keeps its one legal keep first (C4): with passing off,
    legal_actions compared the minimum with the points before that keep and left out a
    bank that apply takes (500 + the 5 = 550, the minimum)."""
    s = play(new(below_min_may_pass=False, entry_min=550), [R(5, 5, 5, 2, 3), K(5, 5, 5), R(5, 2)])
    assert Bank() in GAME.legal_actions(s)
    assert GAME.apply(s, B).boards == (550, 0)
    short = play(new(below_min_may_pass=False, entry_min=600), [R(5, 5, 5, 2, 3), K(5, 5, 5)])
    short = GAME.apply(short, R(5, 2))  # 550 < 600: still no bank
    assert Bank() not in GAME.legal_actions(short)
    with pytest.raises(IllegalActionError, match="B9"):
        GAME.apply(short, B)


def test_b10_thresholds_are_house_rules() -> None:
    s = play(new(entry_min=300), [R(3, 3, 3, 2, 4), K(3, 3, 3), B])
    assert s.boards == (300, 0)
    rules = GAME.parse_rules({"take_min": 400, "take_min_7000": 800, "take_min_9000": 1200})
    assert [minimum(rules, b, True) for b in (100, 7000, 9000)] == [400, 800, 1200]
    view = GAME.state_to_json(new(take_min_9000=1500))
    assert view["thresholds"] == {"entry": 650, "take": 350, "from_7000": 750, "from_9000": 1500}
    assert view["minimum"] == {"Ann": 650, "Bob": 650}


def test_b11_final_round() -> None:
    s = play(new(target=1000, final_round=True), [R(1, 1, 1, 2, 3), K(1, 1, 1), B])
    assert GAME.outcome(s) is None
    s = play(s, [R(1, 1, 1, 1, 2), K(1, 1, 1, 1), B])
    outcome = GAME.outcome(s)
    assert outcome is not None
    assert outcome.winner == "Bob"
    s = play(new(target=1000), [R(1, 1, 1, 2, 3), K(1, 1, 1), B])
    outcome = GAME.outcome(s)
    assert outcome is not None
    assert outcome.winner == "Ann"


def test_b12_hits_on_a_bolo_turn() -> None:
    turn = [R(1, 1, 1, 2, 3), K(1, 1, 1), R(2, 3), R(*BOLO)]
    assert play(new(), turn).hits == (0, 0)
    assert play(new(hits_on="turn_total_even_if_bolo"), turn).hits == (1, 0)


def test_b13_yahtzee_clause() -> None:
    s = play(new(), [R(4, 4, 4, 2, 3), K(4, 4, 4), R(4, 4)])
    assert yahtzee_ready(s)
    e = GAME.expecting(s)
    assert (e.action, e.dice) == ("reroll", 2)
    assert Reroll((4, 4), "yahtzee") in GAME.legal_actions(s)
    s = GAME.apply(s, Reroll((), "yahtzee"))
    assert GAME.expecting(s).dice == 2
    again = GAME.apply(s, R(4, 4))
    assert not yahtzee_ready(again)  # once per cycle by default
    with pytest.raises(IllegalActionError, match="B13"):
        GAME.apply(again, Reroll((4, 4), "yahtzee"))
    s = play(s, [R(1, 2), K(1)])
    assert s.turn.points == 500
    unlimited = play(
        new(yahtzee_rerolls=0),
        [R(4, 4, 4, 2, 3), K(4, 4, 4), R(4, 4), Reroll((), "yahtzee"), R(4, 4)],
    )
    assert yahtzee_ready(unlimited)
    off = play(new(yahtzee_clause=False), [R(4, 4, 4, 2, 3), K(4, 4, 4), R(4, 4)])
    assert not yahtzee_ready(off)
    assert GAME.expecting(off).player == "Bob"


def test_b13_the_yahtzee_clause_is_counted_per_cycle_not_per_turn() -> None:
    """ "The dice kept in the current 5-dice cycle": once all five have scored and the player
    rolls all five again, a new cycle starts, and with it a new chance for the clause."""
    first = [R(4, 4, 4, 2, 3), K(4, 4, 4), R(4, 4), Reroll((), "yahtzee"), R(5, 5), K(5, 5)]
    s = play(new(), [*first, R(3, 3, 3, 2, 6), K(3, 3, 3), R(3, 3)])
    assert yahtzee_ready(s)
    s = play(s, [Reroll((3, 3), "yahtzee"), R(1, 5), K(1, 5)])
    assert s.turn.points == 400 + 100 + 300 + 150
    again = play(s, [R(6, 6, 6, 2, 3), K(6, 6, 6), R(6, 6), Reroll((), "yahtzee"), R(6, 6)])
    assert not yahtzee_ready(again)  # once in this third cycle too


def test_b14_van_halen_off() -> None:
    five = [R(2, 2, 2, 2, 2), K(2, 2, 2, 2, 2), R(1, 2, 3, 4, 5), K(1, 5), B]
    assert play(new(), five).hits == (6, 0)
    assert play(new(van_halen=False), five).hits == (5, 0)
    assert play(new(van_halen_score=5000), five).hits == (5, 0)


def test_b15_high_roller_and_bolo_after_five_of_a_kind() -> None:
    s, found = highlights(new(), [R(3, 3, 3, 3, 3), K(3, 3, 3, 3, 3)])
    assert [(h.kind, h.points) for h in found] == [("high_roller", 5000)]
    _, found = highlights(s, [R(2, 3, 4, 6, 6)])
    assert [(h.kind, h.player, h.dice) for h in found] == [("high_roller", "Ann", (2, 3, 4, 6, 6))]
    assert "five of a kind" in found[0].text
    _, found = highlights(new(high_roller_min=10000), [R(3, 3, 3, 3, 3), K(3, 3, 3, 3, 3)])
    assert [h.kind for h in found] == ["roll"]


def test_b15_high_roller_on_a_turn_total() -> None:
    """The alternative reading of "a roll of 5000 or better": the banked turn's total."""
    rules = {"high_roller_on": "turn_total", "high_roller_min": 1040}
    turn = [R(1, 1, 1, 2, 3), K(1, 1, 1), R(5, 2), K(5)]  # 1000 + 50
    s, found = highlights(new(**rules), turn)
    assert [h.kind for h in found] == ["roll"]  # no single roll signs the pad now
    _, found = highlights(s, [B])
    assert [(h.kind, h.player, h.points) for h in found] == [("high_roller", "Ann", 1050)]
    assert "in one turn" in found[0].text
    _, found = highlights(new(high_roller_min=1040), [*turn, B])  # by a roll, the default
    assert [(h.kind, h.points) for h in found] == [("roll", 1000), ("turn", 1050)]
    _, found = highlights(new(**rules | {"high_roller_min": 5000}), [*turn, B])
    assert [h.kind for h in found] == ["roll", "turn"]


def test_b16_sloppy_dice() -> None:
    s = play(new(), [R(1, 2, 3, 6, 6), Reroll((6,), "sloppy"), R(5)])
    assert s.turn.roll == (1, 2, 3, 5, 6)
    strict = play(new(sloppy_dice="reroll_all_just_rolled"), [R(1, 2, 3, 6, 6)])
    with pytest.raises(IllegalActionError, match=r"bolo\.sloppy_dice=reroll_all_just_rolled"):
        GAME.apply(strict, Reroll((6,)))
    assert GAME.expecting(GAME.apply(strict, Reroll(()))).dice == 5


def test_b16_sloppy_die_turns_a_bolo_back_into_a_roll() -> None:
    s = play(new(), [R(*BOLO)])
    assert GAME.state_to_json(s)["player"] == "Bob"
    s = play(s, [Reroll((4,), "sloppy"), R(5)])
    assert s.player == "Ann"
    assert s.turn.phase == "keep"


def test_b17_vote_changes_a_rule_for_the_rest_of_the_game() -> None:
    s = play(new(), [SetRule("bolo.entry_min", 500)])
    assert s.rules.entry_min == 500
    s = play(s, [R(5, 5, 5, 2, 3), K(5, 5, 5), B])
    assert s.boards == (500, 0)
    view = GAME.state_to_json(s)
    assert view["overrides"] == [{"name": "entry_min", "value": 500}]
    assert view["rules"]["entry_min"] == 500
    with pytest.raises(IllegalActionError, match="B17"):
        GAME.apply(s, SetRule("entry_min", "lots"))


def test_a_damaged_saved_state_is_a_clear_error() -> None:
    j = GAME.state_to_json(GAME.new(players=["Ann", "Bob"]))
    assert GAME.state_from_json(json.loads(json.dumps(j))) == GAME.new(players=["Ann", "Bob"])
    with pytest.raises(ValueError, match="not a Bolo state"):
        GAME.state_from_json({**j, "game": "gords"})
    with pytest.raises(ValueError, match="bad bolo state: KeyError"):
        GAME.state_from_json({k: v for k, v in j.items() if k != "boards"})
    with pytest.raises(ValueError, match="bad bolo state"):
        GAME.state_from_json({**j, "turns": 7})


def test_b1_the_order_roll_one_die_each_highest_starts() -> None:
    assert GAME.expecting(new()).dice == 5  # by default the players are listed in order
    three = GAME.new(players=["Ann", "Bob", "Cy"], rules={"start_order": "roll"})
    e = GAME.expecting(three)
    assert (e.player, e.action, e.dice) == ("Ann", "roll", 1)
    with pytest.raises(IllegalActionError, match="B-1: the order of play is one die each"):
        GAME.apply(three, R(1, 2, 3, 4, 5))
    s = play(three, [R(6), R(2), R(6)])  # Ann and Cy tie: they roll again (B1)
    e = GAME.expecting(s)
    assert (e.player, e.dice) == ("Ann", 1)
    assert "again" in e.text
    s = play(s, [R(1), R(4)])
    e = GAME.expecting(s)
    assert (e.player, e.action, e.dice) == ("Cy", "roll", 5)  # Cy starts
    s = play(s, [R(1, 2, 3, 4, 6), K(1), B])
    assert GAME.expecting(s).player == "Ann"  # then clockwise: the listed order, wrapping
    assert GAME.state_from_json(GAME.state_to_json(s)) == s


def test_b1_an_order_die_can_be_re_rolled_or_the_order_set_by_a_line_up() -> None:
    two = new(start_order="roll")
    s = play(two, [R(3), R(5)])  # Bob's 5 stands until the next action...
    assert Reroll((5,)) in GAME.legal_actions(s)
    back = GAME.apply(s, Reroll((5,), "cocked"))  # ...so a cocked die is thrown again
    assert GAME.expecting(back).player == "Bob"
    assert GAME.state_from_json(GAME.state_to_json(back)) == back
    s = play(back, [R(2)])
    assert (GAME.expecting(s).player, GAME.expecting(s).dice) == ("Ann", 5)
    lined = GAME.apply(play(two, [R(4)]), Lineup(("Bob", "Ann")))
    assert (GAME.expecting(lined).player, GAME.expecting(lined).dice) == ("Bob", 5)
    assert GAME.expecting(GAME.new(players=["Ann"], rules={"start_order": "roll"})).dice == 5


def test_b13_yahtzee_clause_after_four_of_a_kind_kept() -> None:
    """B13 "three or four of them": four 4s kept, the last die shows a 4."""
    s = play(new(), [R(4, 4, 4, 4, 2), K(4, 4, 4, 4), R(4)])
    assert yahtzee_ready(s)
    assert Reroll((4,), "yahtzee") in GAME.legal_actions(s)
    s = play(s, [Reroll((4,), "yahtzee"), R(5), K(5)])
    assert s.turn.points == 850
    assert s.turn.hot


def test_b4_a_rolled_triple_cannot_be_left_dead_to_stop() -> None:
    """B4/B5: in 2 2 2 1 5 every die scores (the 2s are a triple): all five must be kept."""
    s = play(new(entry_min=0), [R(2, 2, 2, 1, 5)])
    with pytest.raises(IllegalActionError, match="B-2"):
        GAME.apply(s, K(1, 5))
    s = GAME.apply(s, K(1, 2, 2, 2, 5))
    assert s.turn.hot
    assert s.turn.points == 350
