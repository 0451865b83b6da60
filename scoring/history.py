"""A game is its list of actions: replay, undo and fix live here, once, for every game.

The event log stores what the table did, including ``undo`` and ``fix`` entries; nothing is
ever rewritten. :func:`effective_actions` resolves those two into the list of actions that
stand, and :func:`replay` folds it through the game. A fix replaces the dice of the latest
roll (or reveal) that still stands and replays everything after it; if the later actions no
longer fit the corrected dice, the fix is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from scoring.actions import Action, Fix, Roll, Undo
from scoring.errors import IllegalActionError
from scoring.game import Game

T = TypeVar("T")


def resolve(
    items: Iterable[T],
    action_of: Callable[[T], Action],
    with_action: Callable[[T, Action], T],
) -> list[T]:
    """Resolve ``undo`` and ``fix`` over any log items that carry an action.

    ``action_of`` reads an item's action and ``with_action`` returns the item with its action
    replaced (a fixed roll keeps its place, its time and its snapshot): the server resolves
    its log entries with provenance through the same two rules the engine uses.
    """
    stack: list[T] = []
    for item in items:
        action = action_of(item)
        if isinstance(action, Undo):
            if not stack:
                raise IllegalActionError("undo: there is nothing to undo")
            stack.pop()
        elif isinstance(action, Fix):
            for i in range(len(stack) - 1, -1, -1):
                prior = action_of(stack[i])
                if isinstance(prior, Roll):
                    if len(prior.dice) != len(action.dice):
                        raise IllegalActionError(
                            f"fix: the roll had {len(prior.dice)} dice, "
                            f"the correction gives {len(action.dice)}"
                        )
                    stack[i] = with_action(stack[i], replace(prior, dice=action.dice))
                    break
            else:
                raise IllegalActionError("fix: there is no roll to correct")
        else:
            stack.append(item)
    return stack


def effective_actions(actions: Iterable[Action]) -> list[Action]:
    """Resolve ``undo`` and ``fix`` into the actions that stand (no game needed)."""
    return resolve(actions, lambda a: a, lambda _old, new: new)


def replay(game: Game[Any], start: Any, actions: Iterable[Action]) -> Any:
    """The state after every standing action; raises ``IllegalActionError`` on the first
    that does not apply, its message prefixed with the action's position."""
    state = start
    for n, action in enumerate(effective_actions(actions), 1):
        try:
            state = game.apply(state, action)
        except IllegalActionError as exc:
            raise IllegalActionError(f"action {n} ({action.type}): {exc}") from None
    return state


def apply_logged(game: Game[Any], start: Any, log: Sequence[Action], action: Action) -> Any:
    """The state after appending ``action`` to ``log``: the one validation path for the
    server, the CLI and the pad service. Plain actions apply incrementally; ``undo`` and
    ``fix`` replay the log."""
    if isinstance(action, Undo | Fix):
        try:
            return replay(game, start, [*log, action])
        except IllegalActionError as exc:
            raise IllegalActionError(_strip_position(str(exc))) from None
    return game.apply(replay(game, start, log), action)


def _strip_position(message: str) -> str:
    head, sep, tail = message.partition("): ")
    return tail if sep and head.startswith("action ") else message
