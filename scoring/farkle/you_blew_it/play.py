"""You Blew It's play between the shared turn steps: a blow, a bank, a round, the end.

The shared Farkle turn (:mod:`scoring.farkle.turn`) rolls and keeps; what You Blew It does
around it lives here: the default line-up (YBI-2), settling a blow that stood on the pad and
wiping the blower's teammates' points of the round (YBI-8, Y8), banking and the on-board
minimum (Y13), locking a finished round (YBI-10) and the end of the game (YBI-11, Y11, Y12).
:mod:`scoring.farkle.you_blew_it.game` calls these from the Game protocol.
"""

from __future__ import annotations

from dataclasses import replace

from scoring.farkle.turn import Turn
from scoring.farkle.you_blew_it.state import (
    RoundRecord,
    State,
    TurnRecord,
    TurnStatus,
    provisional,
    team_index,
)


def default_lineup(teams: tuple[tuple[str, tuple[str, ...]], ...], seating: str) -> tuple[str, ...]:
    """YBI-2: the line-up before any ``lineup``: team by team as listed, or alternating."""
    if seating == "together":
        return tuple(p for _, members in teams for p in members)
    out: list[str] = []
    for i in range(max(len(m) for _, m in teams)):
        out.extend(members[i] for _, members in teams if i < len(members))
    return tuple(out)


def _lock_round(state: State, *, complete: bool) -> State:
    points = [0] * len(state.teams)
    for rec in state.this_round:
        if rec.status == "banked":
            points[team_index(state, rec.team)] += rec.points
    locked = tuple(a + b for a, b in zip(state.locked, points, strict=True))
    record = RoundRecord(state.round, state.this_round, tuple(points), locked, complete)
    return replace(state, locked=locked, this_round=(), rounds=(*state.rounds, record))


def _decide(state: State, why: str) -> State | None:
    """Game over with the leaders as winners, or ``None`` when Y12 says play on."""
    totals = provisional(state)
    best = max(totals)
    leaders = tuple(n for n, t in zip(state.team_names, totals, strict=True) if t == best)
    if len(leaders) > 1 and state.rules.tie_rule == "extra_round":
        return None
    score = " v ".join(map(str, totals))
    return replace(state, over=True, winners=leaders, reason=f"{why}: {score}")


def _finish_turn(state: State, record: TurnRecord) -> State:
    """Write the turn on the sheet, pass the dice, close the round, check the end."""
    this_round = state.this_round
    from_zero = state.final_turns is not None and state.rules.final_turns_from == "zero"
    if record.status == "blown" and not from_zero:  # YBI-8 / Y8: earlier teammates lose theirs
        this_round = tuple(
            replace(r, status="wiped", wiped_by=record.player)
            if r.team == record.team and r.status == "banked"
            else r
            for r in this_round
        )
    state = replace(state, this_round=(*this_round, record), turn_no=state.turn_no + 1, turn=Turn())
    rules = state.rules
    if state.turn_no == len(state.order):
        order = state.order[1:] + state.order[:1] if rules.rotate_start else state.order
        number = state.round
        state = replace(_lock_round(state, complete=True), round=number + 1, turn_no=0, order=order)
        if rules.end_rule == "end_of_round" and max(state.locked) >= rules.target:
            done = _decide(state, f"a team reached {rules.target} at the end of round {number}")
            if done is not None:
                return done
    if rules.end_rule == "one_more_turn_each":
        if state.final_turns is None:
            if max(provisional(state)) >= rules.target:
                state = replace(state, final_turns=len(state.order) - 1)
        else:
            state = replace(state, final_turns=state.final_turns - 1)
        if state.final_turns == 0:
            why = f"a team reached {rules.target} and every other player had one more turn"
            done = _decide(state, why)
            if done is None:  # Y12 tie: one more full round of turns
                return replace(state, final_turns=len(state.order))
            return _lock_round(done, complete=False) if done.this_round else done
    return state


def settle(state: State) -> State:
    """Apply a pending blow (the roll stood until the next action; see scoring.farkle.turn)."""
    if state.turn.phase != "blown" or state.over:
        return state
    record = TurnRecord(
        state.player, state.team_of(state.player), state.turn.points, "blown", state.turn.steps
    )
    return _finish_turn(state, record)


def bank(state: State) -> State:
    turn = state.turn
    player = state.player
    team = state.team_of(player)
    status: TurnStatus = "banked"
    on_board = state.on_board
    minimum = state.rules.on_board_min
    key = team if state.rules.on_board_scope == "team" else player
    if minimum and key not in on_board:
        if turn.points >= minimum:
            on_board = (*on_board, key)
        else:
            status = "not_on_board"
    record = TurnRecord(player, team, turn.points, status, turn.steps)
    return _finish_turn(replace(state, on_board=on_board), record)
