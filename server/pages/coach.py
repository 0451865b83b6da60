"""The coach's hint for the scoreboard, when the coach is installed (``scoring.coach``).

The coach is optional: without it, or when it has nothing to say about this state, the
scoreboard simply shows no hint. A failing coach never takes the scoreboard down.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)


def _hint_function() -> Callable[..., Any] | None:
    try:
        module = importlib.import_module("scoring.coach")
    except ImportError:
        return None
    found = getattr(module, "hint", None)
    return found if callable(found) else None


def _text(hint: Any) -> str | None:
    if hint is None:
        return None
    if isinstance(hint, str):
        return hint or None
    if isinstance(hint, Mapping):
        value = hint.get("text")
        return str(value) if value else None
    value = getattr(hint, "text", None)
    return str(value) if value else None


def hint_text(game: Any, state_json: Mapping[str, Any]) -> str | None:
    """The coach's advice in words for the table's state (its ``state_to_json``), or
    ``None``: ``scoring.coach.hint(game_name, state_json)["text"]``."""
    hint = _hint_function()
    if hint is None:
        return None
    try:
        return _text(hint(game.name, state_json))
    except Exception as exc:  # the coach is advisory: never break the scoreboard
        log.warning("coach hint failed for %s: %s", getattr(game, "name", game), exc)
        return None
