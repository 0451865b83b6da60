"""Gords (Liar's dice with a board; RULES.md 4): bid, raise or call, reveal, lose a die.

Every player's dice stay hidden, so the engine never sees a roll: a round is bids and one
call, then a ``reveal`` of every die in play (read by the camera, optionally with each die's
owner by colour, or typed on a phone). The count decides who loses a die (G-8); the caller
opens the next round unless out (G-3, G7), but a palifico round is opened by the player
down to one die (G10); the last player with dice wins (G-10).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from scoring.actions import (
    Action,
    Bid,
    Call,
    Dice,
    End,
    Fix,
    Lineup,
    Reveal,
    Roll,
    Undo,
)
from scoring.errors import IllegalActionError
from scoring.game import Expecting, Highlight, Outcome, n_dice
from scoring.gords.bids import bid_key, bid_text, is_raise, matching, parse_board
from scoring.gords.rules import HouseRules
from scoring.gords.state import (
    START_DICE,
    BidMade,
    CallResult,
    GordsState,
    state_core_from_json,
    state_core_to_json,
)
from scoring.rules import parse_rules
from scoring.saved_state import load_saved_state
from scoring.seating import seat_players

MIN_PLAYERS, MAX_PLAYERS = 2, 6  #: G-1

__all__ = ["GAME", "Gords", "GordsState", "HouseRules", "bid_key", "is_raise", "matching"]


def _board(rules: HouseRules) -> tuple[tuple[int, int], ...]:
    return parse_board(rules.board) if rules.ones_bid_rank == "board_order" else ()


def dice_in_play(state: GordsState) -> int:
    """G-2: what the board's free slots show."""
    return sum(state.dice)


def _count(state: GordsState, player: str) -> int:
    return state.dice[state.players.index(player)]


def _next(state: GordsState, player: str) -> str:
    """The next player with dice after ``player``'s seat, in the direction of play (G1)."""
    step = 1 if state.rules.direction == "clockwise" else -1
    n = len(state.players)
    i = state.players.index(player)
    for k in range(1, n + 1):
        p = state.players[(i + step * k) % n]
        if _count(state, p) > 0:
            return p
    return player  # pragma: no cover - the game is over before nobody else has dice


def _last_bid(state: GordsState) -> BidMade | None:
    return state.bids[-1] if state.bids else None


def _ones_wild(state: GordsState) -> bool:
    return not state.palifico


class Gords:
    """The ``gords`` game (RULES.md 4)."""

    name = "gords"
    title = "Gords"
    rules_prefix = "gords"
    rules_type = HouseRules
    uses_teams = False

    # -- setup --

    def new(
        self,
        *,
        players: Sequence[str] | None = None,
        teams: Mapping[str, Sequence[str]] | None = None,
        rules: Mapping[str, object] | None = None,
    ) -> GordsState:
        names = seat_players(
            self.title,
            players,
            teams,
            lo=MIN_PLAYERS,
            hi=MAX_PLAYERS,
            count_error="G-1: Gords is for {lo} to {hi} players",
        )
        parsed = parse_rules(HouseRules, rules, self.rules_prefix)
        if parsed.ones_bid_rank == "board_order" and not parse_board(parsed.board):
            raise ValueError("G3: ones_bid_rank=board_order needs gords.board (e.g. '1x2,1x3,...')")
        parse_board(parsed.board)
        return GordsState(
            rules=parsed,
            players=names,
            dice=(START_DICE,) * len(names),
            phase="bidding",
            round=1,
            starter=names[0],
            turn=names[0],
        )

    # -- actions --

    def apply(self, state: GordsState, action: Action) -> GordsState:
        if state.phase == "over":
            raise IllegalActionError(f"the game is over: {_over_text(state)}")
        if isinstance(action, Undo | Fix):
            raise IllegalActionError("undo and fix are resolved by the game's history")
        if isinstance(action, Bid):
            return _bid(state, action)
        if isinstance(action, Call):
            return _call(state, action)
        if isinstance(action, Reveal):
            return _reveal(state, action)
        if isinstance(action, Roll):
            raise IllegalActionError(
                "G-2: dice stay hidden under the cups until a call; send a reveal after a call"
            )
        if isinstance(action, Lineup):
            return _lineup(state, action.order)
        if isinstance(action, End):
            return replace(
                state, phase="over", ended=True, news=("the scorekeeper ended the game",)
            )
        raise IllegalActionError(f"Gords has no {action.type!r} action (bid, call, reveal, end)")

    def legal_actions(self, state: GordsState) -> list[Action]:
        if state.phase != "bidding":
            return []
        out: list[Action] = []
        for count in range(1, dice_in_play(state) + 1):
            for face in range(1, 7):
                try:
                    _check_bid(state, count, face)
                except IllegalActionError:
                    continue
                out.append(Bid(count, face))
        if state.bids:
            out.append(Call())
            if state.rules.spot_on:
                out.append(Call(spot_on=True))
        return out

    def expecting(self, state: GordsState) -> Expecting:
        n = dice_in_play(state)
        if state.phase == "over":
            return Expecting(None, "none", 0, f"Game over: {_over_text(state)}")
        if state.phase == "reveal":
            last = _last_bid(state)
            assert last is not None
            assert state.caller is not None
            how = "spot on" if state.spot_on_call else "a call"
            return Expecting(
                None,
                "reveal",
                n,
                f"Everyone: reveal all {n} dice ({state.caller} made {how} on "
                f"{last.player}'s {bid_text((last.count, last.face))})",
            )
        player = state.turn
        mine = n_dice(_count(state, player))
        last = _last_bid(state)
        pal = ", palifico" if state.palifico else ""
        if last is None:
            return Expecting(
                player,
                "bid",
                n,
                f"{player} ({mine}) opens round {state.round}: {n} dice in play{pal}",
            )
        shown = bid_text((last.count, last.face))
        if not _can_raise(state):
            text = f"{player} ({mine}) must call {last.player}'s {shown}: no bid is higher"
        else:
            text = (
                f"{player} ({mine}): raise {last.player}'s {shown} or call ({n} dice in play{pal})"
            )
        return Expecting(player, "bid_or_call", n, text)

    def outcome(self, state: GordsState) -> Outcome | None:
        if state.phase != "over":
            return None
        if state.ended:
            return Outcome((), "ended by the scorekeeper")
        left = tuple(p for p, d in zip(state.players, state.dice, strict=True) if d > 0)
        return Outcome(left, _over_text(state))

    def highlights(
        self, before: GordsState, action: Action, after: GordsState
    ) -> tuple[Highlight, ...]:
        if not isinstance(action, Reveal) or len(after.results) == len(before.results):
            return ()
        r = after.results[-1]
        if r.spot_on and r.matching == r.count:
            return (Highlight("spot_on", r.caller, r.count, r.dice, r.text),)
        if r.matching == r.count:
            text = (
                f"{r.bidder}'s {bid_text((r.count, r.face))} was exactly right ({r.caller} called)"
            )
            return (Highlight("exact_bid", r.bidder, r.count, r.dice, text),)
        return ()

    # -- JSON --

    def state_to_json(self, state: GordsState) -> dict[str, Any]:
        outcome = self.outcome(state)
        last = _last_bid(state)
        return {
            "game": self.name,
            **state_core_to_json(state),
            "scores": dict(zip(state.players, state.dice, strict=True)),
            "over": state.phase == "over",
            "winner": None if outcome is None else outcome.winner,
            "expecting": self.expecting(state).to_json(),
            "dice_in_play": dice_in_play(state),
            "bid": None
            if last is None
            else {
                "player": last.player,
                "count": last.count,
                "face": last.face,
                "text": bid_text((last.count, last.face)),
            },
            "eliminated": [p for p, d in zip(state.players, state.dice, strict=True) if d == 0],
        }

    def state_from_json(self, obj: Mapping[str, Any]) -> GordsState:
        return load_saved_state(obj, self.name, HouseRules, self.rules_prefix, state_core_from_json)

    # -- one reveal --

    def score_report(
        self, dice: Dice, rules: Any = None, *, bid: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        parse_rules(HouseRules, rules, self.rules_prefix)
        if bid is None:
            raise ValueError("gords scores a reveal against a bid: give one, e.g. --bid 4x6")
        count, face = bid
        if count < 1 or not 1 <= face <= 6:
            raise ValueError(f"a bid is a count of at least 1 and a face 1-6, got {count}x{face}")
        if any(not 1 <= d <= 6 for d in dice):
            raise ValueError(f"pip values are 1-6, got {list(dice)}")
        n = matching(dice, face)
        return {
            "dice": list(dice),
            "bid": {"count": count, "face": face},
            "matching": n,
            "met": n >= count,
        }

    def describe_report(self, report: Mapping[str, Any]) -> str:
        bid = (report["bid"]["count"], report["bid"]["face"])
        what = "ones only" if bid[1] == 1 else f"{bid_text((2, bid[1])).split()[-1]} and wild ones"
        verdict = (
            "met: the caller loses a die" if report["met"] else "not met: the bidder loses a die"
        )
        dice = " ".join(map(str, report["dice"]))
        return f"{bid_text(bid)} over {dice}: {report['matching']} count ({what}); {verdict}"


GAME = Gords()


# -- the rules, one action at a time ------------------------------------------------------------


def _over_text(state: GordsState) -> str:
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
    if _count(state, named) == 0:
        raise IllegalActionError(f"G-10: {named} has no dice left and is out")
    return named


def _check_bid(state: GordsState, count: int, face: int) -> None:
    rules = state.rules
    n = dice_in_play(state)
    if count > n:
        raise IllegalActionError(f"G9: only {n} dice are in play; a bid can be at most {n}")
    last = _last_bid(state)
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


def _can_raise(state: GordsState) -> bool:
    """Whether any bid tops the last one (G9: else the next player must call); the biggest
    counts are tried first, so this is almost always one check."""
    for count in range(dice_in_play(state), 0, -1):
        for face in range(6, 0, -1):
            try:
                _check_bid(state, count, face)
            except IllegalActionError:
                continue
            return True
    return False


def _bid(state: GordsState, action: Bid) -> GordsState:
    if state.phase == "reveal":
        raise IllegalActionError("G-7: the bid was called: reveal every die first")
    player = _actor(state, action.player)
    if player != state.turn:
        raise IllegalActionError(f"G-6: it is {state.turn}'s turn to bid, not {player}'s")
    _check_bid(state, action.count, action.face)
    bids = (*state.bids, BidMade(player, action.count, action.face))
    text = f"{player} bids {bid_text((action.count, action.face))}"
    return replace(state, bids=bids, turn=_next(state, player), news=(text,))


def _call(state: GordsState, action: Call) -> GordsState:
    if state.phase == "reveal":
        raise IllegalActionError("G-7: the bid was already called: reveal every die")
    last = _last_bid(state)
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


def _reveal(state: GordsState, action: Reveal) -> GordsState:
    if state.phase != "reveal":
        raise IllegalActionError("G-7: dice are revealed only after a call")
    _check_reveal(state, action)
    last = _last_bid(state)
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
    starter = who if _count(state, who) > 0 else _next(state, who)
    palifico, used = False, state.palifico_used
    if rules.palifico and loser and _count(state, loser) == 1 and loser not in used:
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


def _lineup(state: GordsState, order: tuple[str, ...]) -> GordsState:
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
