"""Bolo's play between the shared turn steps: the order roll, a BOLO, a bank, the end.

The shared Farkle turn (:mod:`scoring.farkle.turn`) rolls and keeps; what Bolo does around
it lives here: rolling for the order of play (B-1, B1), settling a BOLO that stood on the pad
(and the Yahtzee clause that can still save it, B13), banking against the board's minimum
(B9, B10), bong hits and Van Halen (B12, B14), passing the dice and the end of the game,
final round and sudden death included (B-7, B11). :mod:`scoring.farkle.bolo.game` calls
these from the Game protocol.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scoring.actions import Action, Reroll, Roll
from scoring.errors import IllegalActionError
from scoring.farkle.bolo.rules import HouseRules
from scoring.farkle.bolo.state import State, TurnRecord
from scoring.farkle.turn import Step, Turn

HIT_EVERY = 1000  #: B-8: one bong hit per 1000 points of a turn


def _n_turns(n: int) -> str:
    """ "1 turn", "23 turns"."""
    return "1 turn" if n == 1 else f"{n} turns"


def _set(values: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*values[:i], value, *values[i + 1 :])


def _decide(state: State, why: str) -> State:
    best = max(state.boards)
    leaders = tuple(p for p, b in zip(state.players, state.boards, strict=True) if b == best)
    return replace(state, over=True, winners=leaders, reason=why, turn=Turn(), tied=())


def _end_final_round(state: State) -> State:
    """The final turns (or a sudden-death round) are over: the top board wins. Players tied
    at the top take one more turn each under ``final_round_ties = sudden_death`` (B11), in
    seating order from the next seat, as often as it takes; otherwise they share the win."""
    best = max(state.boards)
    n = len(state.players)
    tied = tuple(
        sorted(
            (j for j, b in enumerate(state.boards) if b == best),
            key=lambda j: (j - state.current) % n,
        )
    )
    if len(tied) > 1 and state.rules.final_round_ties == "sudden_death":
        return replace(state, tied=tied, final_turns=len(tied), current=tied[0])
    names = " and ".join(state.players[j] for j in tied)
    if state.tied:
        why = f"{names} won the sudden death with {best} (B11)"
    else:
        why = "every other player had a final turn"
        if len(tied) > 1:
            why += f": {names} share the win on {best} (B11)"
    return _decide(state, why)


def _finish_turn(state: State, record: TurnRecord) -> State:
    """Write the turn down, pass the dice, check the end (B-7, B11)."""
    i = state.current
    state = replace(
        state,
        boards=_set(state.boards, i, record.board),
        hits=_set(state.hits, i, state.hits[i] + record.hits),
        on_board=_set(state.on_board, i, state.on_board[i] or record.tallied > 0),
        turns=(*state.turns, record),
        current=(i + 1) % len(state.players),
        turn=Turn(),
    )
    rules = state.rules
    if state.final_turns is not None:
        left = state.final_turns - 1
        if left <= 0:
            return _end_final_round(replace(state, final_turns=0))
        if state.tied:  # sudden death: only the tied players play
            return replace(state, final_turns=left, current=state.tied[-left])
        return replace(state, final_turns=left)
    if record.board >= rules.target:
        why = f"{record.player} reached {rules.target} with {record.board}"
        others = len(state.players) - 1
        if not rules.final_round or not others:  # a solo game has nobody to give a final turn
            if not others:
                why += f" (solo game, in {_n_turns(len(state.turns))})"
            return replace(state, over=True, winners=(record.player,), reason=why)
        state = replace(state, final_turns=others)
    return state


def _turn_hits(rules: HouseRules, points: int, tallied: bool) -> int:
    if tallied or rules.hits_on == "turn_total_even_if_bolo":
        return points // HIT_EVERY
    return 0


def yahtzee_ready(state: State) -> bool:
    """B13: the kept dice of this cycle are three or four of one face 2/3/4/6, kept from one
    roll, and the blown roll shows only that face; re-rolls left."""
    turn, rules = state.turn, state.rules
    if turn.phase != "blown" or not rules.yahtzee_clause:
        return False
    if rules.yahtzee_rerolls and turn.clause_rerolls >= rules.yahtzee_rerolls:
        return False
    kept = turn.kept
    return (
        len(turn.cycle_steps()) == 1
        and len(kept) in (3, 4)
        and len(set(kept)) == 1
        and kept[0] in (2, 3, 4, 6)
        and set(turn.roll) == {kept[0]}
    )


def _settle_order(state: State) -> State:
    """A round of the order roll every contender has rolled (B-1): the highest starts, and
    play goes clockwise (the listed order) from there; tied players roll again (B1). Like a
    BOLO it stands until the next action, so the last die can still be re-rolled if cocked."""
    if not state.order or len(state.order_faces) < len(state.order):
        return state
    best = max(state.order_faces)
    tied = tuple(p for p, f in zip(state.order, state.order_faces, strict=True) if f == best)
    if len(tied) == 1:
        return replace(state, order=(), order_faces=(), current=tied[0])
    return replace(state, order=tied, order_faces=(), current=tied[0])


def apply_order(state: State, action: Action) -> State:
    """An action while the order is rolled for: one die each (or a line-up, or the end)."""
    if type(action) is Roll:
        if len(action.dice) != 1:
            raise IllegalActionError(
                f"B-1: the order of play is one die each; {state.player} rolled {len(action.dice)}"
            )
        faces = (*state.order_faces, action.dice[0])
        nxt = state.order[len(faces)] if len(faces) < len(state.order) else state.current
        return replace(state, order_faces=faces, current=nxt)
    raise IllegalActionError(
        f"B-1: first the order of play: {state.player} rolls one die (or set a line-up)"
    )


def reroll_order(state: State, action: Reroll) -> State:
    """A cocked or sloppy order die is thrown again: the last one rolled is taken back."""
    if action.dice and tuple(action.dice) != state.order_faces[-1:]:
        raise IllegalActionError(f"B-1: the last order die rolled was a {state.order_faces[-1]}")
    faces = state.order_faces[:-1]
    return replace(state, order_faces=faces, current=state.order[len(faces)])


def settle(state: State) -> State:
    """Apply a pending BOLO (the roll stood until the next action; see scoring.farkle.turn), or a
    finished round of the order roll."""
    state = _settle_order(state)
    if state.turn.phase != "blown" or state.over:
        return state
    turn, i = state.turn, state.current
    notes = ("bolo after five of a kind",) if after_five(turn.steps) else ()
    record = TurnRecord(
        state.player,
        turn.points,
        "bolo",
        0,
        _turn_hits(state.rules, turn.points, False),
        state.boards[i],
        state.minimum(),
        turn.steps,
        notes,
    )
    return _finish_turn(state, record)


def after_five(steps: tuple[Step, ...]) -> bool:
    return bool(steps) and any(c.startswith("five ") for c in steps[-1].combos)


def bank(state: State, *, win: bool = False) -> State:
    turn, rules, i = state.turn, state.rules, state.current
    least = state.minimum()
    board = state.boards[i]
    notes: list[str] = []
    if turn.points < least and not win:
        if not rules.below_min_may_pass:
            raise IllegalActionError(
                f"B9 (below_min_may_pass=false): {turn.points} is below the minimum of "
                f"{least}; keep rolling"
            )
        record = TurnRecord(
            state.player,
            turn.points,
            "passed",
            0,
            _turn_hits(rules, turn.points, False),
            board,
            least,
            turn.steps,
            (f"below the minimum of {least}: not tallied",),
        )
        return _finish_turn(state, record)
    board += turn.points
    hits = _turn_hits(rules, turn.points, True)
    if rules.van_halen and board == rules.van_halen_score:
        hits += 1
        notes.append(f"Van Halen: exactly {board}")
    if win:
        notes.append("five 1s win at once")
    record = TurnRecord(
        state.player,
        turn.points,
        "banked",
        turn.points,
        hits,
        board,
        least,
        turn.steps,
        tuple(notes),
    )
    state = _finish_turn(state, record)
    if win and not state.over:
        state = replace(
            state, over=True, winners=(record.player,), reason=f"{record.player} kept five 1s"
        )
    return state


def may_bank_points(state: State, keeping: int = 0) -> bool:
    """B9: a bank below the minimum is a pass, refused when passing is off. ``keeping``: the
    points of the sole keep a bank straight after a roll takes first (they count too)."""
    return state.rules.below_min_may_pass or state.turn.points + keeping >= state.minimum()
