"""scoring.history with the Farkle games: replay equals live play, undo and fix by replay."""

from __future__ import annotations

from typing import Any

import pytest
from game_scripts import load
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.actions import Action, Bank, Fix, Keep, Roll, SetRule, Undo
from scoring.errors import IllegalActionError
from scoring.farkle import bolo, you_blew_it
from scoring.history import apply_logged, effective_actions, replay

TEAMS = {"DJS": ["Dick", "Spot", "Jane"], "THS": ["Tom", "Harry", "Stanley"]}


SAMPLE = load("ybi_sample_game.jsonl")
BOARD = load("bolo_board_game.jsonl")


def ybi_start() -> Any:
    return you_blew_it.GAME.new(teams=TEAMS, rules={"target": 5000})


def bolo_start() -> Any:
    return bolo.GAME.new(players=["Ann", "Bob"])


CASES = [(you_blew_it.GAME, ybi_start, SAMPLE), (bolo.GAME, bolo_start, BOARD)]


@pytest.mark.parametrize(("game", "start", "actions"), CASES)
def test_replay_equals_live_play_at_every_step(
    game: Any, start: Any, actions: list[Action]
) -> None:
    live = start()
    log: list[Action] = []
    for action in actions:
        live = apply_logged(game, start(), log, action)
        log.append(action)
    assert replay(game, start(), actions) == live


@pytest.mark.parametrize(("game", "start", "actions"), CASES)
def test_undo_after_any_action_equals_the_game_without_it(
    game: Any, start: Any, actions: list[Action]
) -> None:
    states = [start()]
    for action in actions:
        states.append(game.apply(states[-1], action))
    for k in range(1, len(actions) + 1):
        undone = apply_logged(game, start(), actions[:k], Undo())
        assert undone == states[k - 1]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_undo_then_redo_is_the_same_game(data: st.DataObject) -> None:
    k = data.draw(st.integers(1, len(SAMPLE)))
    game = you_blew_it.GAME
    log = [*SAMPLE[:k], Undo(), SAMPLE[k - 1]]
    assert replay(game, ybi_start(), log) == replay(game, ybi_start(), SAMPLE[:k])


def test_fix_corrects_a_misread_roll_and_replays_what_followed() -> None:
    game = you_blew_it.GAME
    misread = [Roll((2, 2, 3, 3, 4, 6))]  # read as a blow; the 2 was really a 1
    state = apply_logged(game, ybi_start(), misread, Fix((1, 2, 3, 3, 4, 6)))
    assert state.turn.roll == (1, 2, 3, 3, 4, 6)
    assert state.player == "Dick"
    state = game.apply(state, Keep((1,)))
    assert state.turn.points == 100


def test_fix_refused_when_the_later_actions_no_longer_fit() -> None:
    game = you_blew_it.GAME
    log: list[Action] = [Roll((1, 2, 3, 3, 4, 6)), Keep((1,))]
    with pytest.raises(IllegalActionError, match="YBI-4"):
        apply_logged(game, ybi_start(), log, Fix((5, 2, 3, 3, 4, 6)))
    with pytest.raises(IllegalActionError, match="fix: the roll had 6 dice"):
        apply_logged(game, ybi_start(), log, Fix((1, 2)))


def test_undo_with_nothing_to_undo() -> None:
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        apply_logged(you_blew_it.GAME, ybi_start(), [], Undo())


def test_undo_of_a_bank_restores_the_turn() -> None:
    game = you_blew_it.GAME
    log: list[Action] = [Roll((1, 2, 3, 3, 4, 6)), Keep((1,)), Bank()]
    state = apply_logged(game, ybi_start(), log, Undo())
    assert state.player == "Dick"
    assert state.turn.points == 100
    assert game.expecting(state).action == "roll_or_bank"


def test_undo_of_a_rule_vote_restores_the_rule() -> None:
    game = bolo.GAME
    log: list[Action] = [SetRule("entry_min", 400)]
    assert replay(game, bolo_start(), log).rules.entry_min == 400
    assert apply_logged(game, bolo_start(), log, Undo()).rules.entry_min == 650


def test_replay_names_the_position_of_an_illegal_action() -> None:
    with pytest.raises(IllegalActionError, match=r"action 2 \(keep\): YBI-4"):
        replay(you_blew_it.GAME, ybi_start(), [Roll((1, 2, 3, 3, 4, 6)), Keep((2,))])


def test_effective_actions_resolve_undo_and_fix() -> None:
    log: list[Action] = [Roll((2, 2, 3, 3, 4, 6)), Fix((1, 2, 3, 3, 4, 6)), Keep((1,)), Undo()]
    assert effective_actions(log) == [Roll((1, 2, 3, 3, 4, 6))]
