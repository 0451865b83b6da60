"""Reading a saved game state back, for the games whose state decodes as rules plus a core.

One place refuses another game's state and turns a damaged one into a ``ValueError`` naming
the game, so a bad save is a clear error rather than a stray ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from scoring.rules import parse_rules

R = TypeVar("R")
S = TypeVar("S")


def load_saved_state(
    obj: Mapping[str, Any],
    game: str,
    rules_type: type[R],
    prefix: str,
    decode: Callable[[Mapping[str, Any], R], S],
) -> S:
    """``decode(obj, rules)`` once ``obj`` is known to be ``game``'s and its rules parse."""
    if obj.get("game") != game:
        raise ValueError(f"not a {game} state: game={obj.get('game')!r}")
    try:
        rules = parse_rules(rules_type, obj["rules"], prefix)
        return decode(obj, rules)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"bad {game} state: {exc!r}") from None
