"""Which logged events still stand, keeping each one's place (``seq``) in the log.

:func:`scoring.history.effective_actions` resolves ``undo`` and ``fix`` into bare actions; the
server also needs to know which log entry each standing action came from (its time, its
snapshot, the id of a record it produced). :func:`resolve` applies the same two rules while
carrying that provenance; a property test holds it equal to ``effective_actions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from scoring.actions import Action, Fix, Roll, Undo
from scoring.errors import IllegalActionError


@dataclass(frozen=True)
class Standing:
    """A standing action and the log entry it came from (a fixed roll keeps its entry)."""

    seq: int
    at: str
    action: Action
    snapshot: bool = False


def resolve(entries: Iterable[Standing]) -> list[Standing]:
    """The entries that stand after every ``undo`` and ``fix`` among them."""
    stack: list[Standing] = []
    for entry in entries:
        action = entry.action
        if isinstance(action, Undo):
            if not stack:
                raise IllegalActionError("undo: there is nothing to undo")
            stack.pop()
        elif isinstance(action, Fix):
            for i in range(len(stack) - 1, -1, -1):
                prior = stack[i].action
                if isinstance(prior, Roll):
                    if len(prior.dice) != len(action.dice):
                        raise IllegalActionError(
                            f"fix: the roll had {len(prior.dice)} dice, "
                            f"the correction gives {len(action.dice)}"
                        )
                    stack[i] = replace(stack[i], action=replace(prior, dice=action.dice))
                    break
            else:
                raise IllegalActionError("fix: there is no roll to correct")
        else:
            stack.append(entry)
    return stack


def last_roll(standing: list[Standing]) -> Standing | None:
    """The most recent standing roll (or reveal): whose snapshot a record points to."""
    for entry in reversed(standing):
        if isinstance(entry.action, Roll):
            return entry
    return None
