"""The players of a new game played by players (not teams), checked one way for every game.

Names are trimmed, 1-40 characters and distinct; only how many a game seats and the rule its
error cites differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

NAME_MAX = 40  #: longest player name (the scoreboard's columns)


def seat_players(
    title: str,
    players: Sequence[str] | None,
    teams: Mapping[str, Sequence[str]] | None,
    *,
    lo: int,
    hi: int,
    count_error: str,
) -> tuple[str, ...]:
    """The trimmed names, ``lo`` to ``hi`` of them; raises ``ValueError`` otherwise.

    ``count_error`` is the game's message for a wrong count, formatted with ``lo``, ``hi``
    and ``n`` (the number of players given).
    """
    if teams:
        raise ValueError(f"{title} is played by players, not teams")
    names = tuple(p.strip() for p in players or ())
    if not lo <= len(names) <= hi:
        raise ValueError(count_error.format(lo=lo, hi=hi, n=len(names)))
    if any(not n or len(n) > NAME_MAX for n in names) or len(set(names)) != len(names):
        raise ValueError(f"player names must be distinct and 1-{NAME_MAX} characters")
    return names
