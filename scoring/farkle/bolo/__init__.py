"""Bolo (RULES.md 2): five-dice Farkle with full house, straights and the board.

:mod:`~scoring.farkle.bolo.game` is the Game protocol, :mod:`~scoring.farkle.bolo.rules` the
house rules and combination table, :mod:`~scoring.farkle.bolo.state` the frozen state,
:mod:`~scoring.farkle.bolo.play` how a turn ends on the board. The game's public names are
re-exported here (``from scoring.farkle import bolo``; ``bolo.GAME``, ``bolo.HouseRules``).
"""

from scoring.farkle.bolo.game import GAME, Bolo
from scoring.farkle.bolo.play import yahtzee_ready
from scoring.farkle.bolo.rules import DICE, HouseRules, minimum, table
from scoring.farkle.bolo.state import State, TurnRecord

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
