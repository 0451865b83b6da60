"""Gords (RULES.md 4): Liar's dice with a board.

:mod:`~scoring.gords.game` is the Game protocol; :mod:`~scoring.gords.play` the rules one
action at a time; :mod:`~scoring.gords.rules` the house rules; :mod:`~scoring.gords.state`
the frozen state and its JSON; :mod:`~scoring.gords.bids` the bid maths the engine and the
coach share. The game's public names are re-exported here (``from scoring.gords import
GAME, GordsState``).
"""

from scoring.gords.game import GAME, Gords
from scoring.gords.play import dice_in_play
from scoring.gords.rules import HouseRules
from scoring.gords.state import GordsState

__all__ = ["GAME", "Gords", "GordsState", "HouseRules", "dice_in_play"]
