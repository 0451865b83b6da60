"""Gords (Liar's dice with a board; RULES.md 4): bid, raise or call, reveal, lose a die.

Every player's dice stay hidden, so the engine never sees a roll: a round is bids and one
call, then a ``reveal`` of every die in play (read by the camera, optionally with each die's
owner by colour, or typed on a phone). The count decides who loses a die (G-8); the caller
opens the next round unless out (G-3, G7), but a palifico round is opened by the player
down to one die (G10); the last player with dice wins (G-10).

This module is the Game protocol (what the table may do and waits for, the JSON, the report
of one reveal); the rules are :mod:`scoring.gords.play`.
"""

from __future__ import annotations

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
from scoring.gords import play
from scoring.gords.bids import bid_text, matching, parse_board
from scoring.gords.play import can_raise, check_bid, dice_in_play, held, last_bid, over_text
from scoring.gords.rules import HouseRules
from scoring.gords.state import (
    START_DICE,
    GordsState,
    state_core_from_json,
    state_core_to_json,
)
from scoring.rules import parse_rules
from scoring.saved_state import load_saved_state
from scoring.seating import seat_players

MIN_PLAYERS, MAX_PLAYERS = 2, 6  #: G-1

__all__ = ["GAME", "Gords"]


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
            raise IllegalActionError(f"the game is over: {over_text(state)}")
        if isinstance(action, Undo | Fix):
            raise IllegalActionError("undo and fix are resolved by the game's history")
        if isinstance(action, Bid):
            return play.bid(state, action)
        if isinstance(action, Call):
            return play.call(state, action)
        if isinstance(action, Reveal):
            return play.reveal(state, action)
        if isinstance(action, Roll):
            raise IllegalActionError(
                "G-2: dice stay hidden under the cups until a call; send a reveal after a call"
            )
        if isinstance(action, Lineup):
            return play.lineup(state, action.order)
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
                    check_bid(state, count, face)
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
            return Expecting(None, "none", 0, f"Game over: {over_text(state)}")
        if state.phase == "reveal":
            last = last_bid(state)
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
        mine = n_dice(held(state, player))
        last = last_bid(state)
        pal = ", palifico" if state.palifico else ""
        if last is None:
            return Expecting(
                player,
                "bid",
                n,
                f"{player} ({mine}) opens round {state.round}: {n} dice in play{pal}",
            )
        shown = bid_text((last.count, last.face))
        if not can_raise(state):
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
        return Outcome(left, over_text(state))

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
        last = last_bid(state)
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
