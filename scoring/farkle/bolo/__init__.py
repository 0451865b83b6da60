"""Bolo (RULES.md 2): five-dice Farkle with full house, straights and the board.

:mod:`~scoring.farkle.bolo.game` is the Game protocol. The game's public names are
re-exported here (``from scoring.farkle import bolo``; ``bolo.GAME``, ``bolo.HouseRules``).
"""

from scoring.farkle.bolo.game import (
    DICE,
    GAME,
    Bolo,
    HouseRules,
    State,
    TurnRecord,
    minimum,
    table,
    yahtzee_ready,
)

__all__ = [
    "DICE",
    "GAME",
    "Bolo",
    "HouseRules",
    "State",
    "TurnRecord",
    "minimum",
    "table",
    "yahtzee_ready",
]
