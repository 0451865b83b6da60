"""Bar Dice (RULES.md 3): who buys the next round.

:mod:`~scoring.bar_dice.game` is the Game protocol; the rules are
:mod:`~scoring.bar_dice.play` (each action) and :mod:`~scoring.bar_dice.rounds` (a finished
go or round); :mod:`~scoring.bar_dice.rules` the house rules; :mod:`~scoring.bar_dice.state`
the frozen state and its JSON; :mod:`~scoring.bar_dice.hand` hand values;
:mod:`~scoring.bar_dice.odds` exact flop odds. The game's public names are re-exported here
(``from scoring.bar_dice import GAME, BarDiceState``).
"""

from scoring.bar_dice.game import GAME, BarDice
from scoring.bar_dice.rules import HouseRules
from scoring.bar_dice.state import BarDiceState

__all__ = ["GAME", "BarDice", "BarDiceState", "HouseRules"]
