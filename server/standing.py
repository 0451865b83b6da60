"""Which logged events still stand, keeping each one's place (``seq``) in the log.

:func:`scoring.history.effective_actions` resolves ``undo`` and ``fix`` into bare actions; the
server also needs to know which log entry each standing action came from (its time, its
snapshot, the id of a record it produced). :func:`resolve` runs the same
:func:`scoring.history.resolve` over the log entries, carrying that provenance.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from scoring import history
from scoring.actions import Action, Roll


@dataclass(frozen=True)
class Standing:
    """A standing action and the log entry it came from (a fixed roll keeps its entry)."""

    seq: int
    at: str
    action: Action
    snapshot: bool = False


def resolve(entries: Iterable[Standing]) -> list[Standing]:
    """The entries that stand after every ``undo`` and ``fix`` among them."""
    return history.resolve(entries, lambda e: e.action, lambda e, a: replace(e, action=a))


def last_roll(standing: list[Standing]) -> Standing | None:
    """The most recent standing roll (or reveal): whose snapshot a record points to."""
    for entry in reversed(standing):
        if isinstance(entry.action, Roll):
            return entry
    return None
