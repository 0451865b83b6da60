"""You Blew It (RULES.md 1): team Farkle with six dice.

:mod:`~scoring.farkle.you_blew_it.game` is the Game protocol,
:mod:`~scoring.farkle.you_blew_it.rules` the house rules and combination table,
:mod:`~scoring.farkle.you_blew_it.state` the frozen state and the team sheet,
:mod:`~scoring.farkle.you_blew_it.play` how a turn ends and a round closes. The game's public
names are re-exported here (``from scoring.farkle import you_blew_it``; ``you_blew_it.GAME``).
"""

from scoring.farkle.you_blew_it.game import GAME, YouBlewIt
from scoring.farkle.you_blew_it.rules import DICE, HouseRules, table
from scoring.farkle.you_blew_it.state import RoundRecord, State, TurnRecord, provisional

__all__ = [
    "DICE",
    "GAME",
    "HouseRules",
    "RoundRecord",
    "State",
    "TurnRecord",
    "YouBlewIt",
    "provisional",
    "table",
]
