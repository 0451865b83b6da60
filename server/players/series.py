"""The score by round of one table, read from its state's JSON (what the scoreboard holds).

Pure functions of ``game.state_to_json(state)``: the table page draws its chart from the view
it already has, and :mod:`server.players.stats` keeps the same series per player. A series
starts at round 0 (the score before the first turn). What a "round" is follows the game:

- Bolo: a player's board after each of their turns;
- You Blew It: each team's total after each round (the round in play counts provisionally);
- Bar Dice: the turns each player has won after each turn;
- Gords: the dice each player has left after each call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Series:
    """One line of a chart: ``name`` (a player or, in You Blew It, a team), its scores by
    round from round 0, and whether ``name`` is a player (the chart links to their page)."""

    name: str
    points: tuple[int, ...]
    player: bool = True


@dataclass(frozen=True)
class ScoreChart:
    """What a chart shows: its series and what the axes count."""

    series: tuple[Series, ...]
    y_label: str
    x_label: str = "round"


Y_LABELS = {
    "bolo": "board",
    "you-blew-it": "team score",
    "bar-dice": "turns won",
    "gords": "dice left",
}


def score_chart(game: str, state: Mapping[str, Any]) -> ScoreChart | None:
    """The chart of a table's state JSON (``None`` for a game it cannot read)."""
    try:
        if game == "bolo":
            series = _bolo(state)
        elif game == "you-blew-it":
            series = _you_blew_it(state)
        elif game == "bar-dice":
            series = _bar_dice(state)
        elif game == "gords":
            series = _gords(state)
        else:
            return None
    except (KeyError, TypeError, ValueError):  # a state of another shape: no chart
        return None
    return ScoreChart(series, Y_LABELS[game], "turn" if game == "bar-dice" else "round")


def _bolo(state: Mapping[str, Any]) -> tuple[Series, ...]:
    boards: dict[str, list[int]] = {p: [0] for p in state["players"]}
    for turn in state["turns"]:
        boards[turn["player"]].append(int(turn["board"]))
    return tuple(Series(p, tuple(b)) for p, b in boards.items())


def _you_blew_it(state: Mapping[str, Any]) -> tuple[Series, ...]:
    teams = [name for name, _ in _pairs(state["teams"])]
    totals: dict[str, list[int]] = {t: [0] for t in teams}
    for rnd in state["rounds"]:
        for t in teams:
            totals[t].append(int(rnd["totals"][t]))
    if state["this_round"] and not state["over"]:
        for t in teams:
            totals[t].append(int(state["scores"][t]))
    return tuple(Series(t, tuple(v), player=False) for t, v in totals.items())


def _pairs(teams: Any) -> Sequence[tuple[str, Any]]:
    """You Blew It's teams as (name, members) whether the JSON holds a dict or pairs."""
    if isinstance(teams, Mapping):
        return list(teams.items())
    return [(str(t[0]), t[1]) for t in teams]


def _bar_dice(state: Mapping[str, Any]) -> tuple[Series, ...]:
    won: dict[str, list[int]] = {p: [0] for p in state["players"]}
    for turn in state["turns"]:
        for p, values in won.items():
            values.append(values[-1] + (turn["winner"] == p))
    return tuple(Series(p, tuple(v)) for p, v in won.items())


def _gords(state: Mapping[str, Any]) -> tuple[Series, ...]:
    players = list(state["players"])
    left = [int(d) for d in state["dice"]]
    backwards = [list(left)]
    for result in reversed(state["results"]):
        i = players.index(result["loser"])
        left[i] += int(result["lost"])
        backwards.append(list(left))
    backwards.reverse()
    return tuple(Series(p, tuple(row[i] for row in backwards)) for i, p in enumerate(players))


def team_of(state: Mapping[str, Any], player: str) -> str | None:
    """You Blew It: the team ``player`` plays for (``None`` when not seated)."""
    for name, members in _pairs(state.get("teams", ())):
        if player in members:
            return name
    return None
