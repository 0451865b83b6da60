"""The coach: odds and advice for every game, from the engine's own scoring (never a copy).

``hint(game_name, state, rules)`` (:mod:`scoring.coach.hints`) is its one entry point, and the
one name re-exported here: the scoreboard looks it up as ``scoring.coach.hint``. Per game:
:mod:`~scoring.coach.farkle` (You Blew It and Bolo, over the turn policy of
:mod:`~scoring.coach.solver`, kept on disk by :mod:`~scoring.coach.solver_cache`),
:mod:`~scoring.coach.bar_dice` and :mod:`~scoring.coach.gords`.
"""

from scoring.coach.hints import hint

__all__ = ["hint"]
