"""Shared helpers of the Gords tests (``test_gords*.py``): three players, actions played."""

from __future__ import annotations

from scoring.actions import Action
from scoring.gords import GAME, GordsState

PLAYERS = ["Ann", "Bob", "Cy"]


def play(state: GordsState, actions: list[Action]) -> GordsState:
    for a in actions:
        state = GAME.apply(state, a)
    return state
