"""You Blew It: the worked sample game roll by roll, every house rule, illegal actions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from game_scripts import B, K, R, load

from scoring.actions import (
    Action,
    Bid,
    End,
    Fix,
    Lineup,
    Reroll,
    Reveal,
    SetRule,
)
from scoring.errors import IllegalActionError, RulesError
from scoring.farkle.you_blew_it import GAME, HouseRules, State, provisional
from scoring.game import Highlight
from scoring.games import find

TEAMS = {"DJS": ["Dick", "Spot", "Jane"], "THS": ["Tom", "Harry", "Stanley"]}


def sample_actions() -> list[Action]:
    return load("ybi_sample_game.jsonl")


def play(state: State, actions: Iterable[Action]) -> State:
    for action in actions:
        state = GAME.apply(state, action)
    return state


def new(teams: dict[str, list[str]] | None = None, **rules: Any) -> State:
    return GAME.new(teams=teams or {"A": ["Ann", "Al"], "B": ["Bob", "Bo"]}, rules=rules)


def scores(state: State) -> dict[str, int]:
    out: dict[str, int] = GAME.state_to_json(state)["scores"]
    return out


# -- the worked sample game -------------------------------------------------------------------


def test_registry_finds_the_game() -> None:
    assert find("you-blew-it") is GAME


def test_sample_game_reproduces_every_round_score() -> None:
    state = GAME.new(teams=TEAMS, rules={"target": 5000})
    totals = []
    for action in sample_actions():
        state = GAME.apply(state, action)
        settled = GAME.state_to_json(state)
        totals = [tuple(r["totals"].values()) for r in settled["rounds"]]
    assert totals == [(1450, 400), (2000, 2750), (2650, 3300), (3900, 4250), (6200, 4250)]
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winner == "DJS"
    assert "end of round 5" in outcome.reason
    assert GAME.expecting(state).action == "none"


def test_sample_game_turn_sheet_shows_the_wipes() -> None:
    state = play(GAME.new(teams=TEAMS, rules={"target": 5000}), sample_actions())
    rounds = GAME.state_to_json(state)["rounds"]
    one = {t["player"]: t for t in rounds[0]["turns"]}
    assert one["Tom"]["status"] == "wiped"
    assert one["Tom"]["wiped_by"] == "Harry"
    assert one["Tom"]["points"] == 800
    assert one["Tom"]["counts"] == 0
    assert one["Harry"]["status"] == "blown"
    assert one["Harry"]["points"] == 250
    assert rounds[0]["points"] == {"DJS": 1450, "THS": 400}
    five = [(t["player"], t["status"], t["points"]) for t in rounds[4]["turns"]]
    assert five == [
        ("Dick", "banked", 250),
        ("Spot", "banked", 500),
        ("Jane", "banked", 1550),
        ("Harry", "wiped", 1850),
        ("Tom", "blown", 350),
        ("Stanley", "blown", 1950),
    ]
    harry = rounds[1]["turns"][4]
    assert [s["points"] for s in harry["steps"]] == [1250, 150]


def test_sample_game_state_round_trips_through_json_at_every_step() -> None:
    state = GAME.new(teams=TEAMS, rules={"target": 5000})
    for action in sample_actions():
        state = GAME.apply(state, action)
        text = json.dumps(GAME.state_to_json(state))
        assert GAME.state_from_json(json.loads(text)) == state


def test_every_listed_legal_action_applies_during_the_sample_game() -> None:
    state = GAME.new(teams=TEAMS, rules={"target": 5000})
    for action in sample_actions():
        for legal in GAME.legal_actions(state):
            GAME.apply(state, legal)
        state = GAME.apply(state, action)


def test_sample_game_highlights() -> None:
    state = GAME.new(teams=TEAMS, rules={"target": 5000})
    found: list[Highlight] = []
    for action in sample_actions():
        after = GAME.apply(state, action)
        found.extend(GAME.highlights(state, action, after))
        state = after
    rolls = [(h.player, h.points, h.dice) for h in found if h.kind == "roll"]
    assert ("Harry", 1250, (1, 1, 1, 1, 1, 5)) in rolls
    assert ("Jane", 1500, (1, 2, 3, 4, 5, 6)) in rolls
    turns = [(h.player, h.points) for h in found if h.kind == "turn"]
    assert ("Harry", 1400) in turns
    assert ("Jane", 1550) in turns
    assert ("Harry", 1850) in turns  # banked, even if Tom's blow wiped it later


# -- a turn step by step ----------------------------------------------------------------------


def test_expecting_walks_through_a_turn() -> None:
    s = new()
    e = GAME.expecting(s)
    assert (e.player, e.team, e.action, e.dice) == ("Ann", "A", "roll", 6)
    assert GAME.expecting(GAME.apply(s, R(1, 2, 3, 4, 6, 6))).text.endswith("(1 choice)")
    s = GAME.apply(s, R(1, 4, 4, 4, 5, 5))
    assert GAME.expecting(s).action == "keep"
    assert GAME.expecting(s).text.endswith(" choices)")
    assert GAME.state_to_json(s)["options"][0] == {
        "keep": [1, 4, 4, 4, 5, 5],
        "points": 600,
        "combos": ["three 4s", "single 1", "single 5", "single 5"],
        "uses_all": True,
        "may_stop": False,
    }
    s = GAME.apply(s, K(4, 4, 4, 1))
    e = GAME.expecting(s)
    assert (e.action, e.dice) == ("roll_or_bank", 2)
    s = GAME.apply(s, R(5, 5))
    s = GAME.apply(s, K(5, 5))
    e = GAME.expecting(s)
    assert (e.action, e.dice) == ("roll", 6)  # hot dice, YBI-6
    assert "hot dice" in e.text
    with pytest.raises(IllegalActionError, match="YBI-6"):
        GAME.apply(s, B)
    s = GAME.apply(s, R(1, 2, 2, 3, 3, 4))
    s = GAME.apply(s, K(1))
    s = GAME.apply(s, B)
    assert scores(s) == {"A": 700, "B": 0}
    assert GAME.expecting(s).player == "Al"


def test_tom_must_roll_again_after_keeping_all_six() -> None:
    s = play(new(), [R(1, 4, 4, 4, 5, 5), K(1, 4, 4, 4, 5, 5)])
    assert s.turn.hot
    assert GAME.state_to_json(s)["dice_left"] == 6


def test_three_individual_fives_then_three_sixes_is_hot() -> None:
    s = play(
        new(),
        [R(5, 2, 3, 4, 6, 6), K(5), R(5, 2, 3, 4, 6), K(5), R(5, 2, 3, 4), K(5), R(6, 6, 6)],
    )
    s = GAME.apply(s, K(6, 6, 6))
    assert s.turn.points == 750
    assert s.turn.hot


def test_a_blow_stays_on_the_pad_until_the_next_action() -> None:
    s = play(new(), [R(1, 2, 3, 4, 6, 6), K(1), B, R(2, 2, 3, 3, 4, 6)])
    view = GAME.state_to_json(s)
    assert view["blown"] is True
    assert view["current_roll"] == [2, 2, 3, 3, 4, 6]
    assert view["expecting"]["player"] == "Bob"  # already the next player's turn
    assert view["scores"] == {"A": 0, "B": 0}  # Al's blow wiped Ann's 100
    assert view["pending"]["turn"]["phase"] == "blown"
    s = GAME.apply(s, R(5, 2, 3, 3, 4, 6))  # Bob's roll settles Al's blow
    assert s.this_round[-1].status == "blown"
    assert s.player == "Bob"


def test_blow_wipes_only_earlier_teammates_of_this_round() -> None:
    s = new(teams={"A": ["Ann", "Al", "Amy"], "B": ["Bob"]}, seating="alternate")
    assert s.order == ("Ann", "Bob", "Al", "Amy")
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Ann 100
    s = play(s, [R(5, 2, 3, 4, 6, 6), K(5), B])  # Bob 50
    s = play(s, [R(2, 2, 3, 3, 4, 6)])  # Al blows: Ann's 100 goes
    s = play(s, [R(1, 1, 2, 3, 4, 6), K(1, 1), B])  # Amy 200 after the blow
    assert scores(s) == {"A": 200, "B": 50}
    s = play(s, [R(2, 2, 3, 3, 4, 6)])  # round 2: Ann blows; round 1 is locked (YBI-10)
    assert scores(s) == {"A": 200, "B": 50}


# -- illegal actions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "bad", "rule"),
    [
        ([], K(1), "YBI-4"),
        ([R(1, 2, 3, 4, 6, 6)], K(2), "YBI-4"),
        ([R(1, 1, 1, 2, 3, 4)], K(1), "YBI-4"),  # Y1: the triple must be kept
        ([R(1, 2, 3, 4, 6, 6)], K(1, 1), "YBI-4"),
        ([], R(1, 2, 3), "C3"),
        ([R(1, 2, 3, 4, 6, 6), K(1)], R(1, 2, 3), "C3"),
        ([R(1, 2, 3, 4, 6, 6)], R(1, 2, 3, 4, 5), "YBI-4"),
        ([], B, "YBI-7"),
        ([R(1, 5, 2, 3, 4, 4)], B, "YBI-7"),  # two keeps to choose from (C4)
        ([R(1, 2, 3, 4, 5, 6), K(1, 2, 3, 4, 5, 6)], B, "YBI-6"),
        ([R(1, 2, 3, 4, 6, 6), K(1)], Lineup(("Al", "Ann", "Bob", "Bo")), "YBI-2"),
        ([], Lineup(("Al", "Ann", "Bob")), "YBI-2"),
        ([], SetRule("target", 5000), "C6"),
        ([], Reroll(()), "Y16"),
        ([R(1, 2, 3, 4, 6, 6)], Reroll((5,)), "Y16"),
        ([R(1, 2, 3, 4, 6, 6)], Fix((1, 2, 3, 4, 6, 6)), "scoring.history"),
        ([], Reveal((1, 2, 3, 4, 6, 6)), "no 'reveal' action"),
        ([], Bid(2, 3), "no 'bid' action"),
    ],
)
def test_illegal_actions_name_the_rule(actions: list[Action], bad: Action, rule: str) -> None:
    state = play(new(), actions)
    before = GAME.state_to_json(state)
    with pytest.raises(IllegalActionError, match=rule):
        GAME.apply(state, bad)
    assert GAME.state_to_json(state) == before  # nothing lost


def test_keep_message_lists_the_legal_keeps() -> None:
    s = play(new(), [R(1, 5, 2, 3, 4, 4)])
    with pytest.raises(IllegalActionError) as err:
        GAME.apply(s, K(4))
    assert "legal keeps: 1 5 (150); 1 (100); 5 (50)" in str(err.value)


def test_bank_straight_after_a_roll_with_only_one_keep() -> None:
    s = play(new(), [R(1, 2, 3, 4, 6, 6), B])
    assert scores(s) == {"A": 100, "B": 0}
    assert s.this_round[-1].steps[0].keep == (1,)


def test_nothing_applies_after_the_game_is_over() -> None:
    s = play(new(target=100), [R(2, 2, 3, 3, 4, 6), R(1, 2, 3, 4, 6, 6), K(1), B])
    s = play(s, [R(2, 2, 3, 3, 4, 6), R(2, 2, 3, 3, 4, 6)])
    assert GAME.outcome(s) is not None
    with pytest.raises(IllegalActionError, match="YBI-11"):
        GAME.apply(s, R(1, 2, 3, 4, 5, 6))


def test_end_stops_the_game_without_a_winner() -> None:
    s = play(new(), [R(1, 2, 3, 4, 6, 6), K(1), B, End()])
    outcome = GAME.outcome(s)
    assert outcome is not None
    assert outcome.winners == ()
    assert GAME.state_to_json(s)["winner"] is None


# -- setup ------------------------------------------------------------------------------------


def test_new_rejects_bad_lineups_and_rules() -> None:
    with pytest.raises(ValueError, match="Y14"):
        GAME.new(teams={"A": ["Ann"]})
    with pytest.raises(ValueError, match="unique"):
        GAME.new(teams={"A": ["Ann"], "B": ["Ann"]})
    with pytest.raises(ValueError, match="at least one player"):
        GAME.new(teams={"A": ["Ann"], "B": []})
    with pytest.raises(RulesError, match="unknown house rule"):
        GAME.new(teams=TEAMS, rules={"traget": 5000})
    with pytest.raises(RulesError, match=r"ybi\.target"):
        GAME.new(teams=TEAMS, rules={"ybi.target": "lots"})


def test_players_without_teams_play_one_player_teams() -> None:
    s = GAME.new(players=["Ann", "Bob"])
    assert s.teams == (("Ann", ("Ann",)), ("Bob", ("Bob",)))


def test_every_rule_has_help_and_the_rules_md_default() -> None:
    from scoring.rules import describe_rules

    described = {d["name"]: d for d in describe_rules(HouseRules, "ybi")}
    assert described["ybi.target"]["default"] == 10000
    assert described["ybi.on_board_min"]["default"] == 0
    assert described["ybi.end_rule"]["choices"] == ["end_of_round", "one_more_turn_each"]
    assert all(d["help"] for d in described.values())
    assert len(described) >= 16


# -- house rules ------------------------------------------------------------------------------


def test_y9_rotate_start() -> None:
    s = new(rotate_start=True)
    for _ in range(4):
        s = play(s, [R(2, 2, 3, 3, 4, 6)])
    s = GAME.apply(s, R(1, 2, 3, 4, 6, 6))  # settles the last blow of round 1
    assert s.round == 2
    assert s.order == ("Al", "Bob", "Bo", "Ann")
    assert s.player == "Al"


def test_lineup_between_rounds_sets_the_next_order() -> None:
    s = new()
    for _ in range(4):
        s = play(s, [R(2, 2, 3, 3, 4, 6)])
    s = GAME.apply(s, Lineup(("Bob", "Ann", "Bo", "Al")))
    assert GAME.expecting(s).player == "Bob"


def test_y11_one_more_turn_each() -> None:
    s = new(target=1000, end_rule="one_more_turn_each")
    s = play(s, [R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B])  # Ann reaches 1000
    assert s.final_turns == 3
    s = play(s, [R(2, 2, 3, 3, 4, 6)])  # Al blows: A drops to 0
    s = play(s, [R(5, 5, 5, 2, 3, 4), K(5, 5, 5), B])  # Bob 500
    assert GAME.outcome(s) is None
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Bo 100: last of the extra turns
    outcome = GAME.outcome(s)
    assert outcome is not None
    assert outcome.winner == "B"
    assert scores(s) == {"A": 0, "B": 600}


def test_y12_tie_plays_an_extra_round_or_is_shared() -> None:
    both = [R(2, 2, 3, 3, 4, 6), R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B] * 2
    s = play(new(target=1000), both)
    assert GAME.outcome(s) is None  # equal totals over the target: the tie plays on
    assert s.round == 2
    shared = play(new(target=1000, tie_rule="shared"), both)
    outcome = GAME.outcome(shared)
    assert outcome is not None
    assert outcome.winners == ("A", "B")
    assert outcome.winner is None


def test_y13_on_board_team_scope() -> None:
    s = new(on_board_min=350)
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Ann 100: A not on board, not tallied
    assert s.this_round[-1].status == "not_on_board"
    s = play(s, [R(2, 2, 3, 3, 4, 6)])
    s = play(s, [R(5, 5, 5, 2, 3, 4), K(5, 5, 5), B])  # Bob 500: B on board
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Bo 100 counts: the team is on
    assert scores(s) == {"A": 0, "B": 600}
    assert s.on_board == ("B",)


def test_y13_on_board_player_scope() -> None:
    s = new(on_board_min=350, on_board_scope="player")
    s = play(s, [R(2, 2, 3, 3, 4, 6), R(2, 2, 3, 3, 4, 6)])
    s = play(s, [R(5, 5, 5, 2, 3, 4), K(5, 5, 5), B])  # Bob 500: Bob is on
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Bo 100 is not: Bo is not on yet
    assert scores(s) == {"A": 0, "B": 500}
    assert s.on_board == ("Bob",)


def test_y14_more_teams_and_unequal_teams() -> None:
    three = GAME.new(teams={"A": ["a"], "B": ["b"], "C": ["c"]}, rules={"teams": 3})
    assert three.order == ("a", "b", "c")
    warned = GAME.new(teams={"A": ["a", "a2"], "B": ["b"]})
    assert GAME.state_to_json(warned)["warnings"]
    with pytest.raises(ValueError, match="unequal_teams=forbid"):
        GAME.new(teams={"A": ["a", "a2"], "B": ["b"]}, rules={"unequal_teams": "forbid"})
    assert not GAME.state_to_json(
        GAME.new(teams={"A": ["a", "a2"], "B": ["b"]}, rules={"unequal_teams": "allow"})
    )["warnings"]


def test_y16_cocked_die_reroll_only_the_offending_dice() -> None:
    s = play(new(), [R(2, 2, 3, 3, 4, 6)])  # a blow... but the 6 was cocked
    s = GAME.apply(s, Reroll((6,), "cocked"))
    e = GAME.expecting(s)
    assert (e.player, e.action, e.dice) == ("Ann", "roll", 1)
    s = GAME.apply(s, R(1))
    assert s.turn.roll == (1, 2, 2, 3, 3, 4)
    s = play(s, [K(1), B])
    assert scores(s) == {"A": 100, "B": 0}


def test_y16_reroll_all_just_rolled() -> None:
    s = play(new(cocked_dice="reroll_all_just_rolled"), [R(2, 2, 3, 3, 4, 6)])
    with pytest.raises(IllegalActionError, match=r"ybi\.cocked_dice=reroll_all_just_rolled"):
        GAME.apply(s, Reroll((6,)))
    s = GAME.apply(s, Reroll(()))
    assert GAME.expecting(s).dice == 6


def test_y2_keep_all_scoring_dice_in_play() -> None:
    s = play(new(keep_all_scoring_dice=True), [R(1, 5, 2, 3, 4, 4)])
    with pytest.raises(IllegalActionError, match="YBI-4"):
        GAME.apply(s, K(1))
    s = play(s, [B])  # a single legal keep: bank keeps it
    assert scores(s) == {"A": 150, "B": 0}


def test_house_rules_reach_the_table() -> None:
    s = play(new(extra_dice_of_a_kind="linear"), [R(4, 4, 4, 4, 2, 3), K(4, 4, 4, 4), B])
    assert scores(s)["A"] == 800
    s = play(new(six_of_a_kind_as_two_triples=False), [R(1, 1, 1, 1, 1, 1)])
    assert GAME.state_to_json(s)["options"][0]["points"] == 1300


def test_provisional_adds_this_rounds_standing_turns() -> None:
    s = play(new(), [R(1, 2, 3, 4, 6, 6), K(1), B])
    assert provisional(s) == (100, 0)


def test_a_damaged_saved_state_is_a_clear_error() -> None:
    fresh = GAME.new(teams={"A": ["Ann", "Al"], "B": ["Bob", "Bo"]})
    j = GAME.state_to_json(fresh)
    assert GAME.state_from_json(json.loads(json.dumps(j))) == fresh
    with pytest.raises(ValueError, match="not a You Blew It state"):
        GAME.state_from_json({**j, "game": "bolo"})
    with pytest.raises(ValueError, match="bad you-blew-it state: KeyError"):
        GAME.state_from_json({k: v for k, v in j.items() if k != "locked"})
    with pytest.raises(ValueError, match="bad you-blew-it state"):
        GAME.state_from_json({**j, "teams": None})


def test_y13_a_turn_of_exactly_the_minimum_gets_on_the_board() -> None:
    s = play(new(on_board_min=350), [R(3, 3, 3, 5, 2, 4), K(3, 3, 3, 5), B])
    assert s.this_round[-1].status == "banked"
    assert s.on_board == ("A",)
    assert scores(s) == {"A": 350, "B": 0}


def test_y13_a_blow_does_not_relabel_an_untallied_turn_as_wiped() -> None:
    s = new(on_board_min=350)
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Ann 100: not on the board
    s = play(s, [R(2, 2, 3, 3, 4, 6), R(2, 2, 3, 3, 4, 6)])  # Al blows (settled by Bob's roll)
    ann = s.this_round[0]
    assert (ann.player, ann.status, ann.wiped_by) == ("Ann", "not_on_board", None)


def test_ybi2_no_lineup_change_in_the_middle_of_a_round() -> None:
    s = play(new(), [R(1, 2, 3, 4, 6, 6), K(1), B])  # Ann has had her turn
    with pytest.raises(IllegalActionError, match="YBI-2"):
        GAME.apply(s, Lineup(("Bob", "Ann", "Bo", "Al")))
    assert Lineup(s.order) not in GAME.legal_actions(s)


def test_y12_tie_after_one_more_turn_each_plays_a_full_extra_round() -> None:
    s = new(target=1000, end_rule="one_more_turn_each")
    s = play(s, [R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B])  # Ann 1000: three more turns
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Al 100: A 1100
    s = play(s, [R(1, 1, 1, 2, 3, 4), K(1, 1, 1), B])  # Bob 1000
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Bo 100: B 1100, a tie
    assert GAME.outcome(s) is None
    assert s.final_turns == 4  # Y12: one more full round, every player once
    for _ in range(3):  # Ann, Al and Bob blow
        s = play(s, [R(2, 2, 3, 3, 4, 6)])
    assert GAME.outcome(s) is None
    assert GAME.expecting(s).player == "Bo"
    s = play(s, [R(1, 2, 3, 4, 6, 6), K(1), B])  # Bo 100 breaks the tie
    outcome = GAME.outcome(s)
    assert outcome is not None
    assert outcome.winner == "B"


def test_a_number_rule_refuses_true_false() -> None:
    with pytest.raises(RulesError, match="whole number"):
        GAME.new(teams=TEAMS, rules={"on_board_min": True})
