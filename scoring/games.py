"""Registry of the games by name (``scoring.games.find("bolo")``)."""

from __future__ import annotations

import importlib
from typing import Any

from scoring.game import Game

_MODULES = {
    "you-blew-it": "scoring.farkle.you_blew_it",
    "bolo": "scoring.farkle.bolo",
    "bar-dice": "scoring.bar_dice",
    "gords": "scoring.gords",
}

NAMES: tuple[str, ...] = tuple(_MODULES)


def find(name: str) -> Game[Any]:
    """The game called ``name``; raises ``ValueError`` naming the known games."""
    module = _MODULES.get(name)
    if module is None:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(NAMES)}")
    game: Game[Any] = importlib.import_module(module).GAME
    return game
