"""You Blew It (RULES.md 1): team Farkle with six dice.

:mod:`~scoring.farkle.you_blew_it.game` is the Game protocol. The game's public names are
re-exported here (``from scoring.farkle import you_blew_it``; ``you_blew_it.GAME``).
"""

from scoring.farkle.you_blew_it.game import (
    DICE,
    GAME,
    HouseRules,
    RoundRecord,
    State,
    TurnRecord,
    YouBlewIt,
    provisional,
    table,
)

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
