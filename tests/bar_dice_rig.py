"""Shared helpers of the Bar Dice tests (``test_bar_dice*.py``): scripted actions and states."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from scoring.actions import Action, Keep, Lineup, Roll, action_from_json
from scoring.bar_dice import GAME, BarDiceState


def play(state: BarDiceState, actions: Iterable[Action | dict[str, Any]]) -> BarDiceState:
    for a in actions:
        state = GAME.apply(state, a if isinstance(a, Action) else action_from_json(a))
    return state


def roll(*dice: int) -> Roll:
    return Roll(tuple(dice))


def keep(*dice: int) -> Keep:
    return Keep(tuple(dice))


def sponsor(rules: dict[str, object] | None = None) -> BarDiceState:
    """Two players, straight to the sponsor phase with Ann as the hammer."""
    return GAME.apply(GAME.new(players=["Ann", "Bob"], rules=rules), Lineup(("Ann", "Bob")))


def news(state: BarDiceState) -> str:
    return " | ".join(n.text for n in state.news)


def roundtrip(s: BarDiceState) -> BarDiceState:
    return GAME.state_from_json(json.loads(json.dumps(GAME.state_to_json(s))))
