"""A table's replay as one frozen row per player: the pure derivation the player pages read.

:func:`derive` folds a table's standing actions through its game (the replay the table
service makes too) and reads the players' figures off the final state: games and wins, turns
and blown turns, points taken, the best turn and the best roll (with the log seq of the roll
whose photo proves it), the score by round (:mod:`server.players.series`) and, in You Blew It
and Bolo, the coach's rating of every finished turn (:mod:`server.players.rating`). Nothing
here reads or writes the database: the rows are a function of the log alone, so the table
server stores them per table and the house can aggregate the very same rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring import games
from scoring.actions import Bank, Keep, Roll, action_from_json
from scoring.coach.farkle import spec_for
from scoring.coach.solver import solve
from scoring.errors import IllegalActionError
from scoring.farkle import bolo, you_blew_it
from scoring.farkle.turn import Step
from scoring.game import Game
from server.players.names import display, player_key
from server.players.rating import Decision, TurnRating, rate_turn
from server.players.series import score_chart, team_of
from server.rows import EventRow, TableRow
from server.standing import Standing, resolve


@dataclass(frozen=True)
class PlayerRow:
    """One player's figures at one table (a player seated twice under one key: summed)."""

    table_id: str
    player: str  #: the key (:func:`~server.players.names.player_key`)
    name: str  #: as seated at this table
    game: str
    at: str  #: when the table was created
    over: bool  #: the game is over (won, or ended by the scorekeeper)
    win: bool
    score: int | None  #: the player's (or team's) final or current score
    turns: int = 0
    blown: int = 0
    points: int = 0  #: points taken over ``turns`` (a blown turn takes none)
    best_turn: int = 0
    best_roll: int = 0
    best_roll_dice: tuple[int, ...] = ()
    best_roll_seq: int | None = None  #: the log seq of that roll when its photo was kept
    rated_turns: int = 0  #: turns the coach rated (finished You Blew It / Bolo turns)
    decisions: int = 0
    given_away: float = 0.0  #: points given away over the rated turns
    luck: float = 0.0  #: points above what the decisions were expected to give
    rounds: tuple[int, ...] = ()  #: score by round, from round 0
    costly: tuple[Decision, ...] = ()  #: the costliest decisions, costliest first


@dataclass
class _Tally:
    """A player's figures while a table is read (frozen into a :class:`PlayerRow`)."""

    name: str
    turns: int = 0
    blown: int = 0
    points: int = 0
    best_turn: int = 0
    best_roll: tuple[int, tuple[int, ...], int | None] = (0, (), None)
    rated: int = 0
    decisions: int = 0
    given_away: float = 0.0
    luck: float = 0.0
    costly: list[Decision] = field(default_factory=list)

    def turn(self, taken: int, blown: bool, rating: TurnRating | None) -> None:
        self.turns += 1
        self.blown += blown
        self.points += taken
        self.best_turn = max(self.best_turn, taken)
        if rating is not None:
            self.rated += 1
            self.decisions += rating.decisions
            self.given_away += rating.given_away
            self.luck += rating.luck
            self.costly = sorted([*self.costly, *rating.costly], key=lambda d: -d.cost)[:3]

    def roll(self, step: Step, seq: int | None) -> None:
        if step.points > self.best_roll[0]:
            self.best_roll = (step.points, step.roll, seq)


def new_state(game: Game[Any], row: TableRow) -> Any:
    """The game as the table was set up (before any action)."""
    if "teams" in row.setup:
        return game.new(teams=row.setup["teams"], rules=row.rules)
    return game.new(players=row.setup["players"], rules=row.rules)


def seats(row: TableRow) -> list[str]:
    """Every player seated at the table, as typed."""
    if "teams" in row.setup:
        return [p for members in row.setup["teams"].values() for p in members]
    return [str(p) for p in row.setup.get("players", ())]


def derive(game: Game[Any], row: TableRow, standing: Sequence[Standing]) -> tuple[PlayerRow, ...]:
    """Every player's row of one table from its standing actions (``()`` for a log that no
    longer replays: a closed table counts for nobody)."""
    state = new_state(game, row)
    photos: list[int | None] = []  # per keep, in order: the seq of its roll's photo
    last_roll: Standing | None = None
    try:
        for entry in standing:
            before, action = state, entry.action
            state = game.apply(state, action)
            if type(action) is Roll:
                last_roll = entry
            made_step = type(action) is Keep or (
                isinstance(action, Bank)
                and getattr(before, "turn", None) is not None
                and before.turn.phase == "keep"
            )
            if made_step:
                photos.append(last_roll.seq if last_roll and last_roll.snapshot else None)
    except IllegalActionError:
        return ()
    view = game.state_to_json(state)
    outcome = game.outcome(state)
    tallies: dict[str, _Tally] = {}
    for name in seats(row):
        tallies.setdefault(player_key(name), _Tally(display(name)))
    if isinstance(state, bolo.State | you_blew_it.State):
        steps = list(_steps(state))
        if len(steps) != len(photos):  # never expected: no photo rather than a wrong one
            photos = [None] * len(steps)
        for (player, step), seq in zip(steps, photos, strict=True):
            tallies[player_key(player)].roll(step, seq)
        for player, taken, blown, rating in _turns(state):
            tallies[player_key(player)].turn(taken, blown, rating)
    chart = score_chart(game.name, view)
    lines = {s.name: s.points for s in chart.series} if chart else {}
    winners = set(outcome.winners) if outcome else set()
    out = []
    for key, t in tallies.items():
        seat = next(n for n in seats(row) if player_key(n) == key)
        side = team_of(view, seat) if game.uses_teams else seat
        line = lines.get(side or seat, ())
        out.append(
            PlayerRow(
                row.id, key, t.name, game.name, row.created, outcome is not None,
                (side or seat) in winners, line[-1] if line else None,
                t.turns, t.blown, t.points, t.best_turn,
                t.best_roll[0], tuple(t.best_roll[1]), t.best_roll[2],
                t.rated, t.decisions, t.given_away, t.luck, tuple(line), tuple(t.costly),
            )
        )  # fmt: skip
    return tuple(out)


def from_log(row: TableRow, events: Sequence[EventRow]) -> tuple[PlayerRow, ...]:
    """Every player's row of a table from its log as stored (undo and fix resolved): the
    one replay both the table server and the house make, so that their rows agree. Raises
    ``ValueError`` / ``ImportError`` for an unknown game or a log that does not resolve."""
    entries = [Standing(e.seq, e.at, action_from_json(e.payload), e.snapshot) for e in events]
    return derive(games.find(row.game), row, resolve(entries))


def _steps(state: bolo.State | you_blew_it.State) -> Iterator[tuple[str, Step]]:
    """Every kept roll of the game in play order, with who rolled it."""
    if isinstance(state, bolo.State):
        records: Sequence[Any] = state.turns
    else:
        records = [t for r in state.rounds for t in r.turns] + list(state.this_round)
    for rec in records:
        for step in rec.steps:
            yield rec.player, step
    for step in state.turn.steps:
        yield state.player, step


Turned = tuple[str, int, bool, TurnRating | None]
"""A finished turn: who, the points taken, blown or not, the coach's rating."""


def _turns(state: bolo.State | you_blew_it.State) -> Iterator[Turned]:
    if isinstance(state, bolo.State):
        for rec in state.turns:
            policy = solve(spec_for("bolo", state.rules, minimum=rec.minimum))
            banked = rec.status != "bolo"
            rating = rate_turn(policy, rec.steps, banked=banked)
            yield rec.player, rec.tallied, not banked, rating
        return
    yield from _ybi_turns(state)


def _ybi_turns(state: you_blew_it.State) -> Iterator[Turned]:
    """You Blew It's turns, each rated with the points its blow would have wiped (the
    teammates' banked earlier in the round and not yet wiped) and the on-board minimum
    still ahead of its team or player (Y13)."""
    rules = state.rules
    on_board: set[str] = set()
    rounds = [list(r.turns) for r in state.rounds] + [list(state.this_round)]
    for turns in rounds:
        order = {rec.player: k for k, rec in enumerate(turns)}
        for k, rec in enumerate(turns):
            wiped_later = {
                j for j, r in enumerate(turns[:k])
                if r.status == "wiped" and order.get(r.wiped_by or "", -1) >= k
            }  # fmt: skip
            w = sum(
                r.points for j, r in enumerate(turns[:k])
                if r.team == rec.team and (r.status == "banked" or j in wiped_later)
            )  # fmt: skip
            key = rec.team if rules.on_board_scope == "team" else rec.player
            minimum = rules.on_board_min if rules.on_board_min and key not in on_board else 0
            policy = solve(spec_for("you-blew-it", rules, minimum=minimum, teammates=w))
            blown = rec.status == "blown"
            rating = rate_turn(policy, rec.steps, banked=not blown, teammates=w)
            taken = rec.points if rec.status in ("banked", "wiped") else 0
            if rec.status in ("banked", "wiped"):
                on_board.add(key)
            yield rec.player, taken, blown, rating
