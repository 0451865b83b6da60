"""The Farkle family: You Blew It and Bolo, and what they share.

Shared: :mod:`~scoring.farkle.combos` (roll scoring: every legal keep of a roll),
:mod:`~scoring.farkle.turn` (one player's turn as a frozen value),
:mod:`~scoring.farkle.game` (the Game-protocol methods both answer alike) and
:mod:`~scoring.farkle.report` (``dicepad score``). Each game is a package of its own:
:mod:`scoring.farkle.you_blew_it`, :mod:`scoring.farkle.bolo`.
"""
