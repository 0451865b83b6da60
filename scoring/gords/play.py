"""Gords rules, one action at a time: pure functions from a state to the next state.

A bid is checked against the last (G-6, G3, G4, G9, G10), a call against who may make it (G2,
G5), a reveal is counted and settles who loses dice (G-8, G5, G6), and the next round opens
(G-3, G7, G10). Also the small questions every part asks: the dice in play, whose turn is
next. :mod:`scoring.gords.game` wraps these in the Game protocol.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from scoring.actions import Bid, Call, Reveal
from scoring.errors import IllegalActionError
from scoring.game import n_dice
from scoring.gords.bids import bid_text, is_raise, matching, parse_board
from scoring.gords.rules import HouseRules
from scoring.gords.state import START_DICE, BidMade, CallResult, GordsState


def _board(rules: HouseRules) -> tuple[tuple[int, int], ...]:
    return parse_board(rules.board) if rules.ones_bid_rank == "board_order" else ()


def dice_in_play(state: GordsState) -> int:
    """G-2: what the board's free slots show."""
    return sum(state.dice)


def held(state: GordsState, player: str) -> int:
    """How many dice ``player`` has left."""
    return state.dice[state.players.index(player)]


def _next(state: GordsState, player: str) -> str:
    """The next player with dice after ``player``'s seat, in the direction of play (G1)."""
    step = 1 if state.rules.direction == "clockwise" else -1
    n = len(state.players)
    i = state.players.index(player)
    for k in range(1, n + 1):
        p = state.players[(i + step * k) % n]
        if held(state, p) > 0:
            return p
    return player  # pragma: no cover - the game is over before nobody else has dice


def last_bid(state: GordsState) -> BidMade | None:
    """The standing bid of the round, if any."""
    return state.bids[-1] if state.bids else None


def _ones_wild(state: GordsState) -> bool:
    return not state.palifico


def over_text(state: GordsState) -> str:
    """How the game ended, in words (the outcome's reason)."""
    if state.ended:
        return "ended by the scorekeeper"
    left = [p for p, d in zip(state.players, state.dice, strict=True) if d > 0]
    if len(left) == 1:
        return f"{left[0]} is the last player with dice and wins"
    return "ended"  # pragma: no cover - over only by End or a single survivor


def _actor(state: GordsState, named: str | None) -> str:
    if named is None:
        return state.turn
    if named not in state.players:
        raise IllegalActionError(f"{named!r} is not playing; players: {', '.join(state.players)}")
    if held(state, named) == 0:
        raise IllegalActionError(f"G-10: {named} has no dice left and is out")
    return named


def check_bid(state: GordsState, count: int, face: int) -> None:
    """Raise :class:`IllegalActionError` naming the rule unless ``count`` x ``face`` may be bid."""
    rules = state.rules
    n = dice_in_play(state)
    if count > n:
        raise IllegalActionError(f"G9: only {n} dice are in play; a bid can be at most {n}")
    last = last_bid(state)
    if last is None and face == 1 and not rules.open_on_ones:
        raise IllegalActionError("G4: the opening bid of a round may not be on ones")
    if state.palifico and state.bids and face != state.bids[0].face:
        raise IllegalActionError(
            f"G10: palifico round: the face stays {bid_text((2, state.bids[0].face)).split()[-1]}"
        )
    old = None if last is None else (last.count, last.face)
    try:
        ok = is_raise(old, (count, face), ones_rank=rules.ones_bid_rank, board=_board(rules))
    except ValueError as exc:
        raise IllegalActionError(str(exc)) from None
    if not ok:
        assert old is not None
        rank = {
            "perudo": "same count and a higher face, a higher count, or the ones exchange rate G3",
            "highest_face": "same count and a higher face (ones over sixes, G3), or a higher count",
            "board_order": "a spot higher up the board (G3)",
        }[rules.ones_bid_rank]
        raise IllegalActionError(
            f"G-6: {bid_text((count, face))} does not raise {bid_text(old)}: bids must go up "
            f"({rank})"
        )


def can_raise(state: GordsState) -> bool:
    """Whether any bid tops the last one (G9: else the next player must call); the biggest
    counts are tried first, so this is almost always one check."""
    for count in range(dice_in_play(state), 0, -1):
        for face in range(6, 0, -1):
            try:
                check_bid(state, count, face)
            except IllegalActionError:
                continue
            return True
    return False


def bid(state: GordsState, action: Bid) -> GordsState:
    if state.phase == "reveal":
        raise IllegalActionError("G-7: the bid was called: reveal every die first")
    player = _actor(state, action.player)
    if player != state.turn:
        raise IllegalActionError(f"G-6: it is {state.turn}'s turn to bid, not {player}'s")
    check_bid(state, action.count, action.face)
    bids = (*state.bids, BidMade(player, action.count, action.face))
    text = f"{player} bids {bid_text((action.count, action.face))}"
    return replace(state, bids=bids, turn=_next(state, player), news=(text,))


def call(state: GordsState, action: Call) -> GordsState:
    if state.phase == "reveal":
        raise IllegalActionError("G-7: the bid was already called: reveal every die")
    last = last_bid(state)
    if last is None:
        raise IllegalActionError("G-6: there is no bid to call yet")
    caller = _actor(state, action.player)
    if caller == last.player:
        raise IllegalActionError("G-6: a player cannot call their own bid")
    if state.rules.only_next_player_may_call and caller != state.turn:
        raise IllegalActionError(f"G2: only the next player ({state.turn}) may call")
    if action.spot_on and not state.rules.spot_on:
        raise IllegalActionError("G5: spot-on calls are not played here (gords.spot_on=false)")
    how = "spot on" if action.spot_on else "calls"
    text = f"{caller} {how}: {last.player}'s {bid_text((last.count, last.face))}"
    return replace(state, phase="reveal", caller=caller, spot_on_call=action.spot_on, news=(text,))


def _check_reveal(state: GordsState, action: Reveal) -> None:
    n = dice_in_play(state)
    if len(action.dice) != n:
        raise IllegalActionError(
            f"C3: {n} dice are in play; the reveal shows {len(action.dice)} (a read error?)"
        )
    if action.owners is None:
        return
    shown = Counter(action.owners)
    for owner in shown:
        if owner not in state.players:
            raise IllegalActionError(f"C3: {owner!r} owns dice in the reveal but is not playing")
    for p, d in zip(state.players, state.dice, strict=True):
        if shown.get(p, 0) != d:
            raise IllegalActionError(
                f"C3: {p} has {n_dice(d)}; the reveal shows {n_dice(shown.get(p, 0))} of theirs"
            )


def reveal(state: GordsState, action: Reveal) -> GordsState:
    if state.phase != "reveal":
        raise IllegalActionError("G-7: dice are revealed only after a call")
    _check_reveal(state, action)
    last = last_bid(state)
    assert last is not None
    assert state.caller is not None
    rules = state.rules
    caller, bidder = state.caller, last.player
    count, face = last.count, last.face
    got = matching(action.dice, face, ones_wild=_ones_wild(state))
    met = got >= count
    dice = list(state.dice)
    bid = bid_text((count, face))
    if state.spot_on_call:
        exact = got == count
        loser, lost = ("", 0) if exact else (caller, 1)
    else:
        loser = caller if met else bidder
        lost = 1
        if rules.dice_lost == "difference":
            lost = max(1, got - count) if met else count - got
    if loser:
        lost = min(lost, dice[state.players.index(loser)])
    if state.spot_on_call and not loser:
        i = state.players.index(caller)
        dice[i] = min(START_DICE, dice[i] + 1)
        verdict = f"exactly {got}: {caller} is spot on and wins a die back"
    elif state.spot_on_call:
        verdict = f"{got}, not {count}: {caller} was not spot on and loses a die"
    elif met:
        verdict = f"{got} showed, {bid} stands: {caller} loses {n_dice(lost)}"
    else:
        verdict = f"only {got} showed for {bid}: {bidder} loses {n_dice(lost)}"
    eliminated = False
    if loser:
        i = state.players.index(loser)
        dice[i] -= lost
        eliminated = dice[i] == 0
        if eliminated:
            verdict += " and is out (G-10)"
    result = CallResult(
        state.round,
        bidder,
        caller,
        count,
        face,
        tuple(action.dice),
        got,
        met,
        state.spot_on_call,
        loser,
        lost,
        eliminated,
        verdict,
    )
    after = replace(state, dice=tuple(dice), results=(*state.results, result), news=(verdict,))
    if sum(1 for d in dice if d > 0) == 1:
        winner = next(p for p, d in zip(state.players, dice, strict=True) if d > 0)
        return replace(after, phase="over", news=(verdict, f"{winner} wins (G-10)"))
    return _next_round(after, caller, loser)


def _next_round(state: GordsState, caller: str, loser: str) -> GordsState:
    """Open the next round: the caller (or the loser, G7; the next player with dice when that
    one is out), except that a palifico round is opened by the player it is for (G10)."""
    rules = state.rules
    who = loser if rules.next_starter == "loser" and loser else caller
    starter = who if held(state, who) > 0 else _next(state, who)
    palifico, used = False, state.palifico_used
    if rules.palifico and loser and held(state, loser) == 1 and loser not in used:
        palifico, used = True, (*used, loser)
        if rules.palifico_opener == "palifico_player":
            starter = loser
    news = (
        *state.news,
        f"{starter} opens round {state.round + 1}" + (" (palifico)" if palifico else ""),
    )
    return replace(
        state,
        phase="bidding",
        round=state.round + 1,
        starter=starter,
        turn=starter,
        bids=(),
        caller=None,
        spot_on_call=False,
        palifico=palifico,
        palifico_used=used,
        news=news,
    )


def lineup(state: GordsState, order: tuple[str, ...]) -> GordsState:
    if state.round != 1 or state.bids or state.phase != "bidding":
        raise IllegalActionError("G-3: the seating and first bidder are set before the first bid")
    if sorted(order) != sorted(state.players):
        raise IllegalActionError(
            f"G-3: the lineup must name every player once: {', '.join(state.players)}"
        )
    return replace(
        state,
        players=order,
        starter=order[0],
        turn=order[0],
        news=(f"{order[0]} opens the first round",),
    )
